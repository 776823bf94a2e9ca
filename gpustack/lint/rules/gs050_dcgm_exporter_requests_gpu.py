"""GS050: a DCGM Exporter that requests a GPU for itself.

DCGM Exporter watches every GPU of its node through DCGM (NVML) and maps GPUs to pods through
the kubelet's pod-resources socket; NVIDIA's DaemonSet (its chart, the GPU Operator's) requests
no GPU. Given ``nvidia.com/gpu`` in its resources, the device plugin allocates one GPU of every
node it runs on to the exporter, exclusively (or one time-slice replica), so GPU workloads have
one fewer to schedule on (on a one-GPU node none), and the device plugin's environment names only
that GPU for the runtime to expose. The exporter needs the nvidia runtime (``runtimeClassName``,
GS004), not a GPU of its own.

Checked in manifests (containers of the exporter's images) and in chart values (the
dcgm-exporter chart's ``resources``, the GPU Operator's ``dcgmExporter.resources``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from gpustack.lint.context import LintContext
from gpustack.lint.facts.components import component_for_container
from gpustack.lint.facts.podspec import subject
from gpustack.lint.facts.quantities import gpu_requests, resource_amounts
from gpustack.lint.model import Container, Hit, PodSpec, get_value
from gpustack.lint.registry import Rule
from gpustack.lint.releases import dispatch

EXPORTER = "dcgm-exporter"
FIX = "Remove the GPU from the exporter's resources; give it `runtimeClassName: nvidia` where nvidia is not the default runtime."
WHY = (
    "the device plugin hands it one GPU of each node (or one time-slice), which GPU workloads can no longer get, "
    "and names only that GPU for the runtime to expose: the exporter watches every GPU of its node and needs none "
    "of its own"
)
# Where each chart keeps the exporter's container resources.
CHART_RESOURCES: Mapping[str, tuple[str, ...]] = {
    "dcgm-exporter": ("resources",),
    "gpu-operator": ("dcgmExporter", "resources"),
}


def check(pod: PodSpec, ctx: LintContext) -> Iterator[Hit]:
    if not pod.system_component:
        return
    for container in pod.containers():
        component = component_for_container(container)
        if component is None or component.name != EXPORTER:
            continue
        requests = gpu_requests(container)
        if not requests:
            continue
        asks = ", ".join(sorted(requests))
        yield Hit(
            pod.resource,
            (*container.path, "resources"),
            f"{subject(pod, container)} runs DCGM Exporter and requests {asks}: {WHY}",
            fix=FIX,
        )


def check_values(ctx: LintContext) -> Iterator[Hit]:
    for release in dispatch.releases(ctx):
        keys = CHART_RESOURCES.get(release.chart)
        resources = get_value(release.values, *keys) if keys else None
        if keys is None or not isinstance(resources, Mapping):
            continue
        # The values' resources, read as the container they become (paths are values keys).
        container = Container({"resources": resources}, keys[:-1], "containers")
        requests = gpu_requests(container)
        if not requests:
            continue
        first = next(amount for amount in resource_amounts(container) if amount.name in requests)
        resource, path = release.where(*first.path)
        yield Hit(
            resource,
            path,
            f"{release} gives DCGM Exporter {', '.join(sorted(requests))} in `{'.'.join(keys)}`: {WHY}",
            fix=FIX,
        )


RULE = Rule("GS050", "pod", check, values=check_values)
