"""NVIDIA Fabric Manager on NVSwitch boards: installed at the driver's version, enabled, running,
and every GPU's fabric state ``Completed``.

On HGX/DGX 8-GPU boards (the catalogue's ``nvswitchBoardGpus``) CUDA fails on every GPU until
Fabric Manager has configured the NVSwitches, and the service exits when its version is not the
loaded driver's (https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/). What is
read: the package in dpkg's status file, the unit's link in multi-user.target.wants (what
``systemctl enable`` creates), the daemon among /proc/<pid>/comm (which keeps 15 characters:
``nv-fabricmanage``), and, on the running node, NVML's fabric state per GPU. Under the GPU
Operator the driver container runs the daemon (visible in /proc) and no package is installed.
"""

from __future__ import annotations

import re

from gpustack.node import driver, nvml, pci, upstream_docs
from gpustack.node.result import LayerResult, not_applicable, ok, problem
from gpustack.node.root import NodeRoot
from gpustack.spec.gpu_catalogue import load_catalogue

LAYER = "fabric-manager"
SERVICE = "nvidia-fabricmanager"
DPKG_STATUS = "/var/lib/dpkg/status"
ENABLED = f"/etc/systemd/system/multi-user.target.wants/{SERVICE}.service"
DAEMON = "nv-fabricmanager"
_PACKAGE = re.compile(rf"^{SERVICE}(-\d+)?$")  # nvidia-fabricmanager-595 (Ubuntu), nvidia-fabricmanager


def nvswitch_board(root: NodeRoot) -> str | None:
    """``8 × NVIDIA-H100-80GB-HBM3`` when the node's GPUs form an NVSwitch board, else None."""
    gpus = pci.nvidia_gpus(root)
    if not gpus:
        return None
    for _, model in load_catalogue().by_pci_device(gpus[0].device):
        if model.on_nvswitch(len(gpus)):
            return f"{len(gpus)} × {model.product}"
    return None


def installed_version(root: NodeRoot) -> str | None:
    """The upstream version of the installed Fabric Manager package (595.84 of 595.84-0ubuntu1)."""
    for stanza in (root.read_text(DPKG_STATUS) or "").split("\n\n"):
        fields = dict(line.split(": ", 1) for line in stanza.splitlines() if ": " in line and not line[0].isspace())
        if _PACKAGE.match(fields.get("Package", "")) and fields.get("Status") == "install ok installed":
            return fields.get("Version", "").split("-", 1)[0] or None
    return None


def running(root: NodeRoot) -> bool:
    return any(
        (root.read_text(f"{entry}/comm") or "").strip() == DAEMON[:15]
        for entry in root.entries("/proc")
        if entry.rsplit("/", 1)[1].isdigit()
    )


def check(root: NodeRoot) -> LayerResult:
    board = nvswitch_board(root)
    if board is None:
        return not_applicable(LAYER, "no NVSwitch board (8 × an HGX SXM part): Fabric Manager is not needed")
    loaded = driver.loaded_version(root)
    if driver.source(root) == "host":
        found = _host_problem(root, loaded)
        if found is not None:
            return _problem(board, *found)
    if not running(root):
        return _problem(board, f"{DAEMON} is not running", f"`systemctl start {SERVICE}`; read `journalctl -u {SERVICE}`")
    return _fabric(root, board)


def _host_problem(root: NodeRoot, loaded: str | None) -> tuple[str, str] | None:
    """What is wrong with a host-installed Fabric Manager (detail, fix), or None."""
    version = installed_version(root)
    if version is None:
        return (
            "no Fabric Manager package is installed",
            f"`apt-get install nvidia-fabricmanager=<driver release>-*` (driver {loaded or 'unknown'}) from the "
            f"driver's repository, NVIDIA's CUDA repository (nvidia-fabricmanager-<branch> before branch 590), then "
            f"`systemctl enable --now {SERVICE}`",
        )
    if loaded and version != loaded:
        return (
            f"Fabric Manager {version} next to driver {loaded}: the service refuses to start",
            f"install Fabric Manager {loaded} (or the driver {version}) so that both match, and hold both",
        )
    if not root.exists(ENABLED):
        return f"{SERVICE} is not enabled: it will not start at boot", f"`systemctl enable --now {SERVICE}`"
    return None


def _fabric(root: NodeRoot, board: str) -> LayerResult:
    running_on = f"{board}: {DAEMON} running"
    if not root.is_live:
        return ok(LAYER, f"{running_on}; fabric state not read (NVML asks the running driver, skipped with --root)")
    try:
        states = nvml.fabric_states()
    except nvml.NvmlUnavailable as exc:
        return ok(LAYER, f"{running_on}; fabric state not read ({exc})")
    pending = [f"GPU {i}: {state}" for i, state in enumerate(states) if state not in ("Completed", "Not Supported")]
    if pending:
        return _problem(
            board,
            f"fabric state is not Completed ({'; '.join(pending)})",
            f"wait for Fabric Manager to finish, else read `journalctl -u {SERVICE}` and `nvidia-smi -q` (Fabric)",
        )
    shown = "Completed" if "Completed" in states else "not reported (before Hopper)"
    return ok(LAYER, f"{running_on}; fabric state {shown} on {len(states)} GPUs")


def _problem(board: str, detail: str, fix: str) -> LayerResult:
    return problem(LAYER, f"{board}, an NVSwitch board: {detail}", fix=fix, docs=upstream_docs.FABRIC_MANAGER)
