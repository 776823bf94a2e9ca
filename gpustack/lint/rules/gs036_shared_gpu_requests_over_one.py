"""GS036: GPU sharing that lets a pod asking for 2 GPUs get 2 slices of one card.

With time-slicing the device plugin advertises each GPU ``replicas`` times and hands the
replicas out "indiscriminately": a pod that requests ``nvidia.com/gpu: 2`` may get two
replicas of the same GPU, no more compute than one, and a tensor-parallel server then finds
one card. ``failRequestsGreaterThanOne: true`` makes such a request fail at admission
(``UnexpectedAdmissionError``) instead; upstream recommends it, and it defaults to false
(https://github.com/NVIDIA/k8s-device-plugin#shared-access-to-gpus). MPS failed such
requests always up to v0.19 and from v0.20 does unless the config sets the flag to false:
only an explicit false is reported there.

Evidence before severity: the slices of one card reach a pod only where it asks for two or
more. Without a spec, a warning where a workload of the set asks for 2 or more NVIDIA GPUs
(or an unrendered count); where none does (single-GPU home labs, where every consumer takes 1),
info that says so: the setting is a guard for requests the set does not make yet.

The configs are found where they live: a ConfigMap's data (the plugin's ``config.name``, the
GPU Operator's ``devicePlugin.config.name``), a plain config file (a kustomize
``configMapGenerator`` input), the nvidia-device-plugin chart's ``config.map`` and the GPU
Operator chart's ``devicePlugin.config.data`` values wherever releases keep them. A config
held in a YAML string gets no fix (an edit cannot go into the string); a plain file does.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from gpustack.lint.context import LintContext
from gpustack.lint.facts.sharingconfigs import configmap_configs, is_plain_config, release_configs
from gpustack.lint.facts.quantities import gpu_requests
from gpustack.lint.model import Hit, Path, Resource, SetValue, Severity
from gpustack.lint.registry import Rule
from gpustack.lint.releases import dispatch

FLAG = "failRequestsGreaterThanOne"
FIX = f"Set `{FLAG}: true` in the sharing config: a request for more than one shared GPU then fails instead of getting slices of one card."


@dataclass(frozen=True)
class _Lax:
    """A sharing section that lets requests over one through: where, and why."""

    path: Path  # inside the config: the flag, or the strategy's section where it is unset
    strategy: str
    unset: bool


def _lax_sharing(config: Any) -> _Lax | None:
    sharing = config.get("sharing") if isinstance(config, Mapping) else None
    if not isinstance(sharing, Mapping):
        return None
    for strategy in ("timeSlicing", "mps"):
        section = sharing.get(strategy)
        if not isinstance(section, Mapping) or not _replicated(section):
            continue
        flag = section.get(FLAG)
        if flag is False or (flag is None and strategy == "timeSlicing"):
            path: Path = ("sharing", strategy, FLAG) if FLAG in section else ("sharing", strategy)
            return _Lax(path, strategy, FLAG not in section)
    return None


def _replicated(section: Mapping[str, Any]) -> bool:
    """Whether some resource is shared by two or more (a replica count of 1 shares nothing)."""
    resources = section.get("resources")
    return any(
        isinstance(item, Mapping) and not isinstance(item.get("replicas"), bool)
        and isinstance(item.get("replicas"), int) and item["replicas"] >= 2
        for item in (resources if isinstance(resources, list) else ())
    )


def multi_gpu_requests(ctx: LintContext) -> tuple[str, ...]:
    """The set's pod specs that ask one container for 2 or more NVIDIA GPUs, or for an
    unrendered count."""
    found = []
    for pod in ctx.pod_specs:
        for container in pod.containers():
            if any((amount is None or amount >= 2) and name.startswith("nvidia.com/")
                   for name, amount in gpu_requests(container).items()):
                found.append(str(pod.resource.ref))
                break
    return tuple(found)


def _severity(ctx: LintContext) -> tuple[Severity | None, str]:
    """The rule's own severity where the set (or a spec) shows requests over one; else info."""
    if ctx.cluster is not None:
        return None, ""
    asking = ctx.memo(("GS036", "multi-gpu requests"), lambda: multi_gpu_requests(ctx))
    if asking:
        return None, f" ({asking[0]} asks for more than one)"
    return Severity.INFO, " (no workload of the set asks for more than one yet)"


def _message(where: str, lax: _Lax, evidence: str) -> str:
    name = "time-slicing" if lax.strategy == "timeSlicing" else "MPS"
    state = f"leaves {FLAG} unset (false)" if lax.unset else f"sets {FLAG}: false"
    return (
        f"{where}: {name} sharing {state}, so a pod requesting 2 GPUs may get 2 replicas of one "
        f"card, and no more compute than 1{evidence}"
    )


def check(resource: Resource, ctx: LintContext) -> Iterator[Hit]:
    if is_plain_config(resource):
        lax = _lax_sharing(resource.data)
        if lax is not None:
            severity, evidence = _severity(ctx)
            edits = (SetValue(("sharing", lax.strategy, FLAG), True),)
            message = _message(f"device plugin config {resource.file}", lax, evidence)
            yield Hit(resource, lax.path, message, severity=severity, fix=FIX, edits=edits)
        return
    if resource.kind != "ConfigMap":
        return
    for key, config in configmap_configs(resource):
        lax = _lax_sharing(config)
        if lax is not None:
            severity, evidence = _severity(ctx)
            where = f"{resource.ref}, device plugin config {key}"
            yield Hit(resource, ("data", key, *lax.path), _message(where, lax, evidence), severity=severity, fix=FIX)


def check_values(ctx: LintContext) -> Iterator[Hit]:
    """Named configs in the device plugin's and the GPU Operator's chart values."""
    for release in dispatch.releases(ctx):
        for keys, config in release_configs(release):
            lax = _lax_sharing(config)
            if lax is not None:
                owner, path = release.where(*keys)
                if path != release.path:
                    path = (*path, *lax.path)
                severity, evidence = _severity(ctx)
                yield Hit(owner, path, _message(f"{release}, config {keys[-1]}", lax, evidence), severity=severity, fix=FIX)


# It reads the set's pods (does a workload ask for more than one?): run over the whole set, not
# file by file: a set fact that differs between sets would lint every file a second time.
RULE = Rule("GS036", "object", check, values=check_values, reads_set=True)
