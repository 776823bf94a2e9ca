"""GS003: GPU devices or the driver reached through hostPath volumes.

With ``runtimeClassName: nvidia`` the runtime injects the allocated GPUs' device nodes and the
driver's libraries and binaries; mounting ``/dev``, ``/dev/nvidia*``, driver folders or the
device plugins' socket folder instead bypasses allocation and isolation (seed 000 step 5).
GPU system components legitimately mount some of these; they are held to the host paths
their kind needs (``data/system-components.yaml``) instead.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator

from gpustack.lint.context import LintContext
from gpustack.lint.gpu import is_gpu_workload, normalise_host_path, pod_components
from gpustack.lint.model import Hit, PodSpec
from gpustack.lint.podspec import HostPathVolume, host_path_volumes, subject
from gpustack.lint.registry import Rule

# Host paths that hold GPU device nodes or driver files (normalised: /var/run is /run). GKE's
# driver folder /home/kubernetes/bin/nvidia is not among them: GKE has no nvidia runtime, and
# its documented GPUDirect sidecars mount the driver's libraries (no device nodes) from there.
GPU_HOST_PATHS = (
    "/dev/nvidia*",
    "/dev/dri",
    "/usr/bin/nvidia-*",
    "/usr/lib/x86_64-linux-gnu/libnvidia*",
    "/usr/lib/x86_64-linux-gnu/libcuda*",
    "/usr/lib/aarch64-linux-gnu/libnvidia*",
    "/usr/lib/aarch64-linux-gnu/libcuda*",
    "/usr/lib64/libnvidia*",
    "/usr/lib64/libcuda*",
    "/usr/local/nvidia",
    "/run/nvidia",  # GPU Operator driver root, MPS, validations
    "/proc/driver/nvidia",
)
DEVICE_PLUGINS = "/var/lib/kubelet/device-plugins"  # any device plugin needs it, not only GPU ones
FIX = (
    "Remove the hostPath volume: request GPUs through resources (or a claim) and set "
    "`runtimeClassName: nvidia` where the nvidia runtime is not the default; the runtime "
    "injects the allocated device nodes and driver files."
)


def _under(path: str, pattern: str) -> bool:
    return fnmatch.fnmatchcase(path, pattern) or fnmatch.fnmatchcase(path, pattern + "/*")


def _literal_prefix(pattern: str) -> str:
    return pattern.split("*", 1)[0]


def gpu_specific(path: str) -> bool:
    """At or below a GPU device node or driver folder."""
    return any(_under(path, pattern) for pattern in GPU_HOST_PATHS)


def exposes_gpus(path: str) -> bool:
    """GPU-specific, the device plugins' folder, or a folder above either (``/``, ``/dev``)."""
    if gpu_specific(path) or _under(path, DEVICE_PLUGINS):
        return True
    above = "/" if path == "/" else path + "/"
    return any(_literal_prefix(p).startswith(above) for p in (*GPU_HOST_PATHS, DEVICE_PLUGINS))


def _offending(pod: PodSpec) -> Iterator[tuple[HostPathVolume, str, str]]:
    components = pod_components(pod)
    for volume in host_path_volumes(pod):
        path = normalise_host_path(volume.host_path)
        if components:
            if exposes_gpus(path) and not any(
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
        elif is_gpu_workload(pod) and exposes_gpus(path):
            yield volume, "into a GPU pod: the nvidia runtime injects the allocated devices and driver", FIX
        elif gpu_specific(path):  # the mount itself makes it a GPU pod
            yield volume, "holding GPU devices or driver files, outside the scheduler's allocation", FIX


def check(pod: PodSpec, ctx: LintContext) -> Iterator[Hit]:
    for volume, why, fix in _offending(pod):
        yield Hit(
            pod.resource,
            volume.path,
            f"{subject(pod)} mounts host path {volume.host_path} (volume {volume.name}), {why}",
            fix=fix,
        )


RULE = Rule("GS003", "pod", check)
