"""The host step for NVSwitch boards: NVIDIA Fabric Manager at exactly the driver's version.

On HGX/DGX 8-GPU boards the GPUs reach each other through NVSwitches that Fabric Manager
configures; until it has, CUDA fails to initialise on every GPU, and it refuses to start next to
a driver of another version (Fabric Manager user guide, "Getting Started with Fabric Manager":
https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/). It comes from the driver's
repository, NVIDIA's CUDA repository (``nvidia_driver``), as ``nvidia-fabricmanager`` from branch
590 and ``nvidia-fabricmanager-<branch>`` before, versioned like the driver (``<release>-1``), so
the pin reads ``=<release>-*``: the repository keeps every release, and the driver's version lock
need not cover it.
"""

from __future__ import annotations

import shlex
from collections import defaultdict

from gpustack.render.stackfiles import nvidia_driver
from gpustack.render.stackfiles.step import Step, pool_list, sentences
from gpustack.spec.models import GpuStack
from gpustack.spec.models.cluster import NodePool
from gpustack.spec.pools import fabric_manager_pools, gpu_model, on_nvswitch

GUIDE = "https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/"
SERVICE = "nvidia-fabricmanager"
# The running driver's release, for a pool that names no release (the driver step rebooted into it).
LOADED_RELEASE = "$(modinfo -F version nvidia)"
# Every GPU's fabric state must read Completed: fails when one does not, or none is reported.
FABRIC_CHECK = (
    "nvidia-smi -q | awk '/^ *Fabric$/ {f = 1; next} f && /State/ {f = 0; seen++; if ($NF != \"Completed\") bad++} "
    "END {exit (bad > 0 || seen == 0)}'"
)
OPERATOR_DOCS = "https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/1.8/release-notes.html"


def steps(stack: GpuStack) -> list[Step]:
    by_version: dict[str | None, list[NodePool]] = defaultdict(list)
    for pool in fabric_manager_pools(stack):
        by_version[pool.driver.version].append(pool)
    return [_step(version, pools) for version, pools in sorted(by_version.items(), key=lambda v: v[0] or "")]


def operator_note(pools: list[NodePool]) -> str:
    """For the operator's driver step: its driver container runs Fabric Manager on NVSwitch boards."""
    boards = [p for p in pools if on_nvswitch(p)]
    if not boards:
        return ""
    return (
        f"On the NVSwitch boards of {pool_list(boards)} the driver container finds the NVSwitches and starts "
        f"NVIDIA Fabric Manager itself, at its own driver's version ({OPERATOR_DOCS}): install none on the host."
    )


def package(version: str | None) -> str:
    """The apt argument: ``nvidia-fabricmanager=<release>-*``, the release of the spec or, when it
    names only a branch (or nothing), of the driver the node runs."""
    name = nvidia_driver.package(SERVICE, version)
    if version is not None and "." in version:
        return shlex.quote(f"{name}={version}-*")
    return f'"{name}=${{release}}-*"'


def _step(version: str | None, pools: list[NodePool]) -> Step:
    exact = version is not None and "." in version
    install = ([] if exact else [f'release="{LOADED_RELEASE}"']) + [f"sudo apt-get install -y {package(version)}"]
    commands = [
        "sudo apt-get update",
        *install,
        f"sudo systemctl enable --now {SERVICE}",
        f"systemctl is-active {SERVICE}",
    ]
    families = {gpu_model(p).architecture for p in pools}
    reports_state = families - {"ampere"}
    if reports_state:
        commands.append(FABRIC_CHECK)
    return Step(
        "NVIDIA Fabric Manager" + (f" {version}" if exact else ""),
        f"On each node of {pool_list(pools)}",
        tuple(commands),
        sentences(
            "These nodes are NVSwitch boards: the GPUs reach each other through NVSwitches that Fabric Manager "
            "configures, and until it has, CUDA fails to start on every GPU. Its version must be the driver's "
            "exactly (the service refuses another and exits), so the package is pinned to the driver's release "
            + ("" if exact else "as the node runs it (`modinfo`) ")
            + f"and held with it by the next step ({GUIDE}).",
            "`nvidia-smi -q` then shows each GPU's `Fabric` section with `State : Completed` and `Status : "
            "Success`; the last command fails while any GPU's state is otherwise."
            if reports_state
            else "",
            "A100 boards report no fabric state (`N/A` in `nvidia-smi -q`): `journalctl -u nvidia-fabricmanager` "
            "shows whether it configured the NVSwitches."
            if "ampere" in families
            else "",
            "HGX B200 boards also need NVIDIA's NVLink Subnet Manager, which Fabric Manager starts (the guide's "
            "\"What is NVLink Subnet Manager?\")."
            if "blackwell" in families
            else "",
            "Upgrade the driver and Fabric Manager together, never one alone.",
        ),
    )
