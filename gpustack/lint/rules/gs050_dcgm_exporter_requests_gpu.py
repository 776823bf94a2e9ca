"""GS050: a GPU node agent (DCGM Exporter, nvidia_gpu_exporter, a device plugin, …) that requests a GPU for itself.

DCGM Exporter watches every GPU of its node through DCGM (NVML) and maps GPUs to pods through
the kubelet's pod-resources socket; NVIDIA's DaemonSet (its chart, the GPU Operator's) requests
no GPU. Given ``nvidia.com/gpu`` in its resources, the device plugin allocates one GPU of every
node it runs on to the exporter, exclusively (or one time-slice replica), so GPU workloads have
one fewer to schedule on (on a one-GPU node none), and the device plugin's environment names only
that GPU for the runtime to expose. The exporter needs the nvidia runtime (``runtimeClassName``,
GS004), not a GPU of its own.

The same holds for every GPU node agent (``data/system-components.yaml``, known by image): a
device plugin that requests ``nvidia.com/gpu`` never schedules at all, since the resource exists
only once a plugin advertises it. Checked in manifests (containers of the agents' images) and in
chart values (the dcgm-exporter and nvidia-gpu-exporter charts' ``resources``, the GPU Operator's
``dcgmExporter.resources``).
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
AGENT_FIX = "Remove the GPU from the node agent's resources; it reaches its node's GPUs through the nvidia runtime."
# Device plugins: the resource they request exists only once they run and advertise it.
PLUGINS = frozenset({"device-plugin", "gke-device-plugin", "hami"})
PLUGIN_WHY = (
    "the resource exists only once a device plugin advertises it, so its pods stay Pending and no node ever "
    "advertises GPUs"
)
# Where each chart keeps the exporter's container resources.
CHART_RESOURCES: Mapping[str, tuple[str, ...]] = {
    "dcgm-exporter": ("resources",),
    "gpu-operator": ("dcgmExporter", "resources"),
    "nvidia-gpu-exporter": ("resources",),
}


def check(pod: PodSpec, ctx: LintContext) -> Iterator[Hit]:
    if not pod.system_component:
        return
    for container in pod.containers():
        component = component_for_container(container)
        if component is None or "validator" in container.image:  # the operator's CUDA validator takes a GPU to test it
            continue
        requests = gpu_requests(container)
        if not requests:
            continue
        asks = ", ".join(sorted(requests))
        why = PLUGIN_WHY if component.name in PLUGINS else WHY.replace("the exporter watches", "the agent watches")
        yield Hit(
            pod.resource,
            (*container.path, "resources"),
            f"{subject(pod, container)} runs {'DCGM Exporter' if component.name == EXPORTER else component.name} "
            f"and requests {asks}: {why}",
            fix=FIX if component.name == EXPORTER else AGENT_FIX,
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
            f"{release} gives {'its exporter' if release.chart == 'nvidia-gpu-exporter' else 'DCGM Exporter'} "
            f"{', '.join(sorted(requests))} in `{'.'.join(keys)}`: {WHY}",
            fix=FIX,
        )


RULE = Rule("GS050", "pod", check, values=check_values)
