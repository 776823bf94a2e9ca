"""A first spec for ``gpustack init``: a few answers, or what ``gpustack discover`` printed,
inside the GpuStack envelope; every other section keeps its documented default."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from gpustack.errors import GpustackError, Problem
from gpustack.spec.gpu_catalogue import load_catalogue
from gpustack.suggest import did_you_mean
from gpustack.yamlio import dump, load_positioned

HEADER = (
    "# A GpuStack spec started by `gpustack init`. `gpustack schema` lists every field and its\n"
    "# default; `gpustack validate {file}` checks it, `gpustack render {file}` renders the stack.\n"
)


@dataclass(frozen=True)
class Answers:
    name: str
    distribution: str  # k3s | kubeadm | talos
    kubernetes_version: str  # "1.N"
    gpu: str  # a catalogue name or alias
    gpus_per_node: int = 1
    nodes: int = 1
    driver: str = "host"  # host | operator


def catalogue_model(name: str) -> str:
    """The catalogue key of a GPU name or alias; an unknown one is an error with suggestions."""
    catalogue = load_catalogue()
    resolved = catalogue.resolve(name)
    if resolved is None:
        hint = did_you_mean(catalogue.suggestions(name))
        raise GpustackError(f"unknown GPU model {name!r}; {hint + ' ' if hint else ''}`gpustack gpus` lists them")
    return resolved[0]


def from_answers(answers: Answers) -> dict[str, Any]:
    model = catalogue_model(answers.gpu)
    pool: dict[str, Any] = {
        "name": pool_name(model),
        "count": answers.nodes,
        "gpu": {"model": model, "count": answers.gpus_per_node},
        "driver": {"source": answers.driver},
    }
    spec: dict[str, Any] = {
        "cluster": {"distribution": answers.distribution, "kubernetesVersion": answers.kubernetes_version},
        "nodePools": [pool],
    }
    if answers.distribution == "talos":
        from gpustack.spec.talos import DEFAULT_RELEASE

        spec["cluster"]["talosVersion"] = DEFAULT_RELEASE  # the extensions are built per release
    if answers.driver == "operator":
        spec["gpuOperator"] = {"enabled": True}  # the driver container is the operator's
    return envelope(answers.name, spec)


def read_discovered(path: str) -> Any:
    """The YAML of ``path`` (``-``: standard input), as ``gpustack discover`` printed it."""
    from gpustack.spec.load import read_text

    return load_positioned(read_text(path), path)


def from_discovered(name: str, kubernetes_version: str, discovered: Any, file: str) -> dict[str, Any]:
    """The spec around ``discovered``: the YAML ``gpustack discover`` prints (cluster and one
    node pool), with the Kubernetes version it cannot see."""
    if not isinstance(discovered, dict) or not isinstance(discovered.get("nodePools"), list):
        raise GpustackError(Problem("not what `gpustack discover` prints (cluster: and nodePools:)", file))
    spec = dict(discovered)
    cluster = dict(spec.get("cluster") or {})
    cluster.setdefault("kubernetesVersion", kubernetes_version)
    spec["cluster"] = cluster
    return envelope(name, spec)


def envelope(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "gpustack.io/v1alpha1", "kind": "GpuStack", "metadata": {"name": name}, "spec": spec}


def pool_name(model: str) -> str:
    """A DNS-1123 label from a model name: ``RTX-PRO-6000`` → ``rtx-pro-6000``."""
    return re.sub(r"[^a-z0-9]+", "-", model.lower()).strip("-")[:63] or "gpus"


def stack_name(file: str) -> str:
    """The stack's name from the file it goes to (``prod-gpus.yaml`` → ``prod-gpus``)."""
    stem = re.sub(r"\.ya?ml$", "", file.rsplit("/", 1)[-1])
    name = pool_name(stem) if stem not in ("", "-", "gpustack") else ""
    return name or "gpu-stack"


def text(document: dict[str, Any], file: str) -> str:
    return HEADER.format(file=file if file != "-" else "FILE") + dump(document)
