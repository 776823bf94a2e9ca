"""Host paths that hold NVIDIA GPU device nodes, driver files or the device plugins' sockets.

What a ``hostPath`` volume reaches: ``gpu_specific`` paths, the folders above them
(``exposes_gpus``), and host paths in one written form (``normalise_host_path``).
"""

from __future__ import annotations

import fnmatch
import posixpath

# Host paths that hold NVIDIA GPU device nodes or driver files (normalised: /var/run is /run):
# /dev/nvidia* covers the GPUs, nvidiactl, nvidia-uvm, nvidia-modeset, the NVSwitches and the
# MIG and IMEX capability nodes under /dev/nvidia-caps*. /dev/dri is not among them: it holds
# DRM card and render nodes (Intel's and AMD's GPUs for VA-API and Mesa; for NVIDIA GPUs only
# the nvidia-drm display nodes), and CUDA, NVENC/NVDEC and NVML open /dev/nvidia* alone, so
# mounting it reaches no NVIDIA GPU around the scheduler (container toolkit: the device nodes a
# GPU container gets, https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/arch-overview.html).
# GKE's driver folder /home/kubernetes/bin/nvidia is not among them either: GKE has no nvidia
# runtime, and its documented GPUDirect sidecars mount the driver's libraries (no device nodes)
# from there.
GPU_DEVICE_NODES = "/dev/nvidia*"
GPU_HOST_PATHS = (
    GPU_DEVICE_NODES,
    "/usr/bin/nvidia-*",
    "/usr/lib/x86_64-linux-gnu/libnvidia*",
    "/usr/lib/x86_64-linux-gnu/libcuda*",
    "/usr/lib/aarch64-linux-gnu/libnvidia*",
    "/usr/lib/aarch64-linux-gnu/libcuda*",
    "/usr/lib64/libnvidia*",
    "/usr/lib64/libcuda*",
    "/usr/local/nvidia",
    "/run/nvidia",  # GPU Operator driver root, MPS
    "/proc/driver/nvidia",
)
# Under /run/nvidia, the GPU Operator's validator writes its status markers (``driver-ready``,
# ``toolkit-ready``): files that say which operands are up, no device node nor driver file
# (https://github.com/NVIDIA/gpu-operator/blob/main/validator/main.go, ``outputDirFlag``).
GPU_STATUS_PATHS = ("/run/nvidia/validations",)
DEVICE_PLUGINS = "/var/lib/kubelet/device-plugins"  # any device plugin needs it, not only GPU ones


def is_under(path: str, pattern: str) -> bool:
    return fnmatch.fnmatchcase(path, pattern) or fnmatch.fnmatchcase(path, pattern + "/*")


def gpu_specific(path: str) -> bool:
    """At or below a GPU device node or driver folder (not the operator's status markers)."""
    if any(is_under(path, pattern) for pattern in GPU_STATUS_PATHS):
        return False
    return any(is_under(path, pattern) for pattern in GPU_HOST_PATHS)


def exposes_gpus(path: str) -> bool:
    """GPU-specific, the device plugins' folder, or a folder above either (``/``, ``/dev``)."""
    if gpu_specific(path) or is_under(path, DEVICE_PLUGINS):
        return True
    above = "/" if path == "/" else path + "/"
    return any(p.split("*", 1)[0].startswith(above) for p in (*GPU_HOST_PATHS, DEVICE_PLUGINS))


def normalise_host_path(path: str) -> str:
    """``/var/run/cdi/`` -> ``/run/cdi`` (/var/run is a link to /run on every distribution)."""
    path = posixpath.normpath("/" + path.strip())
    path = "/" + path.lstrip("/")  # normpath keeps a leading "//"
    if path == "/var/run" or path.startswith("/var/run/"):
        path = path[len("/var"):]
    return path
