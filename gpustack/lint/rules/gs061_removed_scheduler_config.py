"""GS061: a GPU scheduler's kube-scheduler config at a version kube-scheduler no longer reads.

GPU schedulers run a second kube-scheduler with a config file (``--config``) that hands GPU
resources to an extender or plugin (HAMi's scheduler extender manages ``nvidia.com/gpu``). The
config's ``apiVersion`` is read by kube-scheduler itself: ``kubescheduler.config.k8s.io``
v1beta2 is not read from 1.28, v1beta3 not from 1.29 (KEP-785), and the legacy scheduling
``Policy`` not from 1.23 (https://kubernetes.io/docs/reference/scheduling/policies/). The
scheduler then exits at start, and every pod that names it stays Pending.

Read as a document of its own (a file holding the config) or as a ConfigMap's value. Only
configs that schedule GPUs (they name a GPU resource, HAMi or a GPU extender) are reported. The
kube-scheduler's version comes from the image of the pods that mount the ConfigMap
(``kube-scheduler:v1.NN``): an error where it is too new, quiet where it still reads the version;
without one, a warning that assumes a Kubernetes release past the version's last.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

from gpustack.lint.context import LintContext
from gpustack.lint.facts.images import image_tag
from gpustack.lint.facts.servedapis import scheduler_config_last_minor
from gpustack.lint.model import Hit, Path, Resource, Severity
from gpustack.lint.registry import Rule
from gpustack.lint.releases.helmvalues import yaml_mapping

CONFIG_KINDS = ("KubeSchedulerConfiguration", "Policy")
_MARKER = re.compile(r"\b(KubeSchedulerConfiguration|Policy)\b")
_GPU = re.compile(r"nvidia\.com/|hami|gpu", re.IGNORECASE)
_SCHEDULER_IMAGE = re.compile(r"(^|/)kube-scheduler[^/:]*:")
_MINOR = re.compile(r"v?1\.(\d+)")


def check(ctx: LintContext) -> Iterator[Hit]:
    for resource in ctx.resources:
        if resource.kind in CONFIG_KINDS:
            yield from _judge(resource, ("apiVersion",), resource.data, None, ctx)
        elif resource.kind == "ConfigMap":
            data = resource.get(("data",))
            for key, text in data.items() if isinstance(data, Mapping) else ():
                if isinstance(text, str) and _MARKER.search(text):
                    yield from _judge(resource, ("data", key), yaml_mapping(text), resource, ctx)


def _judge(resource: Resource, path: Path, config: Mapping[str, Any], holder: Resource | None,
           ctx: LintContext) -> Iterator[Hit]:
    kind, api_version = config.get("kind"), config.get("apiVersion")
    if not isinstance(kind, str) or not isinstance(api_version, str):
        return
    listed, last = scheduler_config_last_minor(kind, api_version)
    if not listed or last is None or not _GPU.search(json.dumps(config, default=str)):
        return
    said = (f"a GPU scheduler's {kind} at {api_version}" if holder is None
            else f"{resource.ref} ({path[-1]}) holds a GPU scheduler's {kind} at {api_version}")
    fix = ("Write the config at kubescheduler.config.k8s.io/v1 (its profiles and extenders; a legacy Policy's "
           "extenders move to the config's `extenders`).")
    minors = _scheduler_minors(holder, ctx) if holder is not None else []
    newer = [m for m in minors if m > last]
    if newer:
        yield Hit(resource, path, f"{said}, which kube-scheduler reads up to 1.{last} only: the pod that mounts it runs "
                  f"kube-scheduler 1.{max(newer)}, which exits at start, and GPU pods that name the scheduler stay Pending",
                  severity=Severity.ERROR, fix=fix)
    elif not minors:
        yield Hit(resource, path, f"{said}, which kube-scheduler reads up to 1.{last} only (assumed: the scheduler runs a "
                  "later release; the set names no kube-scheduler version): the scheduler exits at start, and GPU pods "
                  "that name it stay Pending", severity=Severity.WARNING, fix=fix)


def _scheduler_minors(config_map: Resource, ctx: LintContext) -> list[int]:
    """The Kubernetes minors of the kube-scheduler images of the pods that mount the ConfigMap."""
    name, namespace = config_map.ref.name, config_map.ref.namespace
    minors = []
    for pod in ctx.pod_specs:
        volumes = pod.spec.get("volumes")
        theirs = pod.resource.ref.namespace
        if (namespace and theirs and namespace != theirs) or not isinstance(volumes, list):
            continue
        if not any(isinstance(v, Mapping) and isinstance(v.get("configMap"), Mapping) and v["configMap"].get("name") == name
                   for v in volumes):
            continue
        for container in pod.containers():
            tag = image_tag(container.image) if _SCHEDULER_IMAGE.search(container.image) else None
            found = _MINOR.match(tag or "")
            if found:
                minors.append(int(found.group(1)))
    return minors


RULE = Rule("GS061", "set", check)
