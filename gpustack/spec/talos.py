"""What Talos Linux brings for NVIDIA GPUs: the releases gpustack renders for, and the system
extensions a pool needs (kernel-module flavour, driver branch, Fabric Manager).

On Talos the driver and the container toolkit are system extensions baked into the installer
image, built per Talos release, so a pool chooses a flavour and a branch, never a release:

- the open kernel modules (``nvidia-open-gpu-kernel-modules-<branch>``) or the proprietary ones
  (``nonfree-kmod-nvidia-<branch>``), with ``nvidia-container-toolkit-<branch>`` of the same
  driver release: https://docs.siderolabs.com/talos/v1.13/configure-your-talos-cluster/hardware-and-drivers/nvidia-gpu
  and https://docs.siderolabs.com/talos/v1.13/configure-your-talos-cluster/hardware-and-drivers/nvidia-gpu-proprietary
  (up to v1.13 the toolkit extension carries the NVIDIA Container Toolkit itself and registers the
  ``nvidia`` containerd runtime, a CRI part of its own:
  https://github.com/siderolabs/extensions/blob/main/nvidia-gpu/nvidia-container-toolkit/nvidia-container-runtime/10-nvidia-container-runtime.part;
  from v1.15 it carries the driver's userspace only and the GPU Operator installs the toolkit,
  which is why v1.13 is the newest release rendered for);
- ``nvidia-fabricmanager-<branch>`` on NVSwitch boards, at the driver's release, which runs as the
  extension service ``nvidia-fabricmanager``:
  https://docs.siderolabs.com/talos/v1.13/configure-your-talos-cluster/hardware-and-drivers/nvidia-fabricmanager,
  https://github.com/siderolabs/extensions/blob/main/nvidia-gpu/nvidia-fabricmanager/lts/manifest.yaml.tmpl

The open modules run on Turing and newer GPUs only, and Blackwell runs nothing else (NVIDIA's
https://developer.nvidia.com/blog/nvidia-transitions-fully-towards-open-source-gpu-kernel-modules/).
"""

from __future__ import annotations

from typing import Literal

from gpustack.lint.facts.talos import FABRIC_MANAGER_EXTENSION, MODULE_EXTENSIONS, TOOLKIT_EXTENSION
from gpustack.spec.models.cluster import NodePool
from gpustack.spec.pools import gpu_model, on_nvswitch

Flavour = Literal["open", "proprietary"]
Branch = Literal["production", "lts"]

# Talos minor → the Kubernetes minors it supports, from the Talos machinery's own compatibility
# tables (https://github.com/siderolabs/talos/tree/v1.13.0/pkg/machinery/compatibility). From
# 1.9 on, containerd 2 reads the CRI drop-in under io.containerd.cri.v1.runtime; after 1.13 the
# toolkit extension no longer carries the toolkit (see above).
KUBERNETES_BY_TALOS = {9: (27, 32), 10: (28, 33), 11: (29, 34), 12: (30, 35), 13: (31, 36)}
OLDEST_TALOS, NEWEST_TALOS = min(KUBERNETES_BY_TALOS), max(KUBERNETES_BY_TALOS)
# What `gpustack init` writes: the release whose machinery the Talos tier validates with.
DEFAULT_RELEASE = "v1.13.0"
OPEN_FROM = ("turing", "ampere", "ada-lovelace", "hopper", "blackwell")  # GFD family names
OPEN_ONLY = ("blackwell",)
DEFAULT_BRANCH: Branch = "production"
OFFICIAL = "siderolabs/"
_MODULE_EXTENSION = dict(zip(("open", "proprietary"), MODULE_EXTENSIONS))


def talos_minor(version: str) -> int:
    """11 for ``v1.11.3``."""
    return int(version.split(".")[1])


def flavour(pool: NodePool) -> Flavour:
    """The pool's kernel modules: its ``driver.modules``, else open where the GPU runs them."""
    if pool.driver.modules is not None:
        return pool.driver.modules
    return "open" if gpu_model(pool).architecture in OPEN_FROM else "proprietary"


def branch(pool: NodePool) -> Branch:
    return pool.driver.branch or DEFAULT_BRANCH


def extensions(pool: NodePool) -> list[str]:
    """The official extensions of the pool's Image Factory schematic, as the factory names them."""
    suffix = f"-{branch(pool)}"
    names = [_MODULE_EXTENSION[flavour(pool)] + suffix, TOOLKIT_EXTENSION + suffix]
    if pool.driver.fabricManager and on_nvswitch(pool):
        names.append(FABRIC_MANAGER_EXTENSION + suffix)
    return [OFFICIAL + name for name in names]
