"""GS003: NVIDIA GPU devices or the driver reached through hostPath volumes.

With ``runtimeClassName: nvidia`` the runtime injects the allocated GPUs' device nodes and the
driver's libraries and binaries; mounting ``/dev``, ``/dev/nvidia*`` (``/dev/nvidia-caps``
too), driver folders or the device plugins' socket folder instead bypasses allocation and
isolation. ``/dev/dri`` does not: its DRM card and render nodes are Intel's and AMD's GPUs
(VA-API, Mesa) or NVIDIA's display nodes, and CUDA, NVENC/NVDEC and NVML open ``/dev/nvidia*``
only, so a media server's ``/dev/dri`` beside its GPU request takes no GPU the scheduler did
not allocate (``facts.hostpaths``).
A pod that mounts such paths without requesting GPUs reaches GPUs outside the scheduler
(``consumers.gpus_reached``). GPU system components legitimately mount some of these; they are held
to the host paths their kind needs (``data/system-components.yaml``) instead, but for the GPUs'
own device nodes (``/dev/nvidia0``, ``/dev/nvidiactl``, ``/dev/nvidia-uvm``, ``/dev/nvidia-caps``):
a node agent sees every GPU of its node by design, NVML opens the nodes read-write whatever the
mount says, and where the nvidia runtime does not inject them (no runtime class on a host without
it) mounting them is how the agent reaches its GPUs. The host's whole ``/dev``, driver folders and
binaries stay held to the catalogue.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.lint.context import LintContext
from gpustack.lint.facts.components import pod_components
from gpustack.lint.facts.consumers import is_gpu_workload
from gpustack.lint.facts.hostpaths import GPU_DEVICE_NODES, exposes_gpus, is_under, normalise_host_path
from gpustack.lint.facts.podspec import HostPathVolume, host_path_volumes, subject
from gpustack.lint.model import Hit, PodSpec
from gpustack.lint.registry import Rule

FIX = (
    "Remove the hostPath volume: request GPUs through resources (or a claim) and set "
    "`runtimeClassName: nvidia` where the nvidia runtime is not the default; the runtime "
    "injects the allocated device nodes and driver files."
)


def _offending(pod: PodSpec) -> Iterator[tuple[HostPathVolume, str, str]]:
    components = pod_components(pod)
    for volume in host_path_volumes(pod):
        path = normalise_host_path(volume.host_path)
        if components:
            if exposes_gpus(path) and not is_under(path, GPU_DEVICE_NODES) and not any(
                c.allows_host_path(path, read_only=volume.read_only) for c in components
            ):
                names = " / ".join(c.name for c in components)
                allowed = sorted({p for c in components for p in c.host_paths})
                allowed += sorted({f"{p} (read-only)" for c in components for p in c.read_only_host_paths})
                mode = "read-only" if volume.read_only else "read-write"
                yield (
                    volume,
                    f"{mode}: more than a {names} needs",
                    f"Mount only what a {names} needs: {', '.join(allowed)}.",
                )
        elif pod.gpus_outside_scheduler and exposes_gpus(path):
            yield volume, "into a pod that requests no GPU: the scheduler does not know about these GPUs", FIX
        elif is_gpu_workload(pod) and exposes_gpus(path):
            yield volume, "into a GPU pod: the nvidia runtime injects the allocated devices and driver", FIX


def check(pod: PodSpec, ctx: LintContext) -> Iterator[Hit]:
    for volume, why, fix in _offending(pod):
        yield Hit(
            pod.resource,
            volume.path,
            f"{subject(pod)} mounts host path {volume.host_path} (volume {volume.name}), {why}",
            fix=fix,
        )


RULE = Rule("GS003", "pod", check)
