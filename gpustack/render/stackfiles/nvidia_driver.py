"""The host steps' NVIDIA driver: from NVIDIA's CUDA apt repository, version-locked, held with its kernel.

NVIDIA's driver installation guide, Ubuntu chapter
(https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/ubuntu.html): the
``cuda-keyring`` package enables the network repository, which keeps every driver release (Ubuntu's
archive drops a release once a newer one supersedes it, so an ``=<release>-*`` pin on its packages
stops installing); the version-locking package ``nvidia-driver-pinning-<branch>`` or
``nvidia-driver-pinning-<release>``, installed before the driver, keeps apt on that branch or
release ("Selecting a Branch or Specific Driver Version"; Version locking:
https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/version-locking.html). The full
driver (desktop and compute) is ``nvidia-open``; a compute-only ("headless") node leaves out the
X11/GL components ("Compute-only (Headless) and Desktop-only (no Compute) Installation":
https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/compute-only-and-desktop-installation.html),
the repository's ``nvidia-headless-open`` metapackage. From branch 590 the repository's Ubuntu
packages carry no branch in their name; before it they do (``nvidia-headless-580-open``,
``nvidia-fabricmanager-580``: "Ubuntu 590 and later packages",
https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/recent-updates.html).

Datacenter GPUs (``segment: datacenter`` in specs/gpus.yaml) take the headless driver; GeForce and
workstation cards, which have display outputs, the full one. The driver's DKMS module is built for
the running kernel, so the hold step holds the kernel packages with the driver's: an unattended
kernel upgrade would otherwise boot a kernel the module was rebuilt for unseen (or not at all).
"""

from __future__ import annotations

import shlex
from collections import defaultdict

from gpustack.render.stackfiles import host_os
from gpustack.render.stackfiles.step import Step, pool_list
from gpustack.spec.models.cluster import NodePool
from gpustack.spec.pools import gpu_model

GUIDE = "https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/ubuntu.html"
VERSION_LOCKING = "https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/version-locking.html"
COMPUTE_ONLY = "https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/compute-only-and-desktop-installation.html"
KEYRING = "cuda-keyring_1.1-1_all.deb"
# The first branch whose Ubuntu packages in NVIDIA's repository carry no branch in their name.
UNBRANCHED_FROM = 590
# Every installed kernel package: images, headers and modules of each kernel, and the flavour's
# metapackages (linux-generic*, linux-aws*, … from `uname -r`'s last field) that pull in a newer one.
HOLD_KERNEL = (
    "sudo apt-mark hold $(dpkg-query -W -f='${db:Status-Abbrev} ${Package}\\n' 'linux-image-*' 'linux-headers-*' "
    "'linux-modules-*' \"linux-$(uname -r | sed 's/.*-//')*\" | awk '$1 == \"ii\" {print $2}')"
)


def _branch(version: str | None) -> int | None:
    return int(version.split(".")[0]) if version else None


def package(name: str, version: str | None) -> str:
    """``name`` as NVIDIA's repository calls it for the pool's branch: ``nvidia-fabricmanager`` from
    590 (and for the newest driver, ``version`` None), ``nvidia-fabricmanager-580`` before;
    ``nvidia-headless-open`` becomes ``nvidia-headless-580-open``."""
    number = _branch(version)
    if number is None or number >= UNBRANCHED_FROM:
        return name
    if name.endswith("-open"):
        return f"{name.removesuffix('-open')}-{number}-open"
    return f"{name}-{number}"


def headless(pool: NodePool) -> bool:
    """Datacenter GPUs drive no display: the compute-only driver."""
    return gpu_model(pool).segment == "datacenter"


def steps(pools: list[NodePool]) -> list[Step]:
    """One step per driver version and flavour of the pools with a host driver."""
    groups: dict[tuple[str | None, bool], list[NodePool]] = defaultdict(list)
    for pool in pools:
        groups[(pool.driver.version, headless(pool))].append(pool)
    ordered = sorted(groups.items(), key=lambda item: (item[0][0] or "", item[0][1]))
    return [_step(version, group, compute_only=compute_only) for (version, compute_only), group in ordered]


def _step(version: str | None, pools: list[NodePool], *, compute_only: bool) -> Step:
    driver = package("nvidia-headless-open", version) if compute_only else "nvidia-open"
    commands = [
        "sudo apt-get update",
        'sudo apt-get install -y --no-install-recommends ca-certificates curl "linux-headers-$(uname -r)"',
        f"curl -fsSLO {host_os.CUDA_REPOSITORY}{KEYRING}",
        f"sudo dpkg -i {KEYRING}",
        "sudo apt-get update",
    ]
    if version is not None:
        commands.append(f"sudo apt-get install -y {shlex.quote(f'nvidia-driver-pinning-{version}')}")
    commands += [f"sudo apt-get install -y {driver}", "sudo reboot"]
    locked = (
        f"`nvidia-driver-pinning-{version}` locks apt onto {'release' if '.' in version else 'branch'} {version} "
        f"(an APT preferences file, {VERSION_LOCKING}), before the driver is installed"
        if version is not None
        else "No version lock: apt installs the newest release; set the pools' `driver.version` to a branch "
        "(\"595\") or release (\"595.84\") to lock it"
    )
    flavour = (
        f"`{driver}`, the compute-only (headless) driver for datacenter GPUs: CUDA, NVML and the open kernel "
        f"module, without the X11/GL desktop components ({COMPUTE_ONLY})"
        if compute_only
        else f"`{driver}`, the full driver with its desktop components, for cards with display outputs"
    )
    return Step(
        f"NVIDIA driver{f' {version}' if version else ''}{' (compute-only)' if compute_only else ''}",
        f"On each node of {pool_list(pools)}",
        tuple(commands),
        f"{host_os.NAME} on amd64: NVIDIA's CUDA repository ({host_os.CUDA_REPOSITORY}), which keeps every "
        f"driver release, enabled by its `cuda-keyring` package ({GUIDE}). {locked}. This installs {flavour}, "
        "built by DKMS for the running kernel (`dkms status` lists the builds; the hold step below keeps the "
        "kernel with it). After the reboot `nvidia-smi` lists the GPUs and `lsmod | grep nouveau` prints "
        "nothing (the package blacklists nouveau). With Secure Boot on (`mokutil --sb-state`) the kernel "
        "loads the module only when it is signed by a key enrolled in the firmware (MOK); otherwise turn "
        "Secure Boot off.",
    )


def hold_note() -> str:
    """How to move kernel and driver on together, deliberately."""
    return (
        "The kernel is held with the driver: its DKMS module is built for the kernels installed when the "
        "driver is, and an unattended kernel upgrade would reboot the node into a kernel whose module was "
        "rebuilt unseen, or failed to build. To upgrade both, a node at a time: drain it, `sudo apt-mark "
        "unhold` the held packages, install the new kernel with its headers (`sudo apt-get install "
        "linux-generic linux-headers-generic`, or your flavour's metapackages), move the version lock "
        "(`sudo apt-get install nvidia-driver-pinning-<release>`) and upgrade the driver, check that DKMS "
        "built the module for the new kernel (`dkms status`), hold again, reboot and uncordon. Held kernels take "
        "no security update on their own either: plan this upgrade with Ubuntu's kernel updates."
    )
