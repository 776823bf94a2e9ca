"""The Fabric Manager layer on an HGX H100 board: what dpkg, systemd and /proc hold, and NVML's
fabric state on the running node (its values are nvidia-smi's: Not Supported, Not Started,
In Progress, Completed; https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/)."""

from __future__ import annotations

from typing import Any

import pynvml  # type: ignore[import-untyped]
import pytest
from nodetree import NodeTree

from gpustack.node import fabricmanager, nvml
from gpustack.node.result import Status
from gpustack.node.root import NodeRoot

DRIVER = "595.84"
# A dpkg status stanza as apt leaves it for Ubuntu's package (source fabric-manager-595).
STANZA = """Package: nvidia-fabricmanager-{branch}
Status: install ok installed
Priority: optional
Section: multiverse/libs
Architecture: amd64
Source: fabric-manager-{branch}
Version: {version}-0ubuntu0.24.04.1
Description: Fabric Manager for NVSwitch based systems.
"""


def hgx(tree: NodeTree, gpus: int = 8, package: str | None = DRIVER, enabled: bool = True, daemon: bool = True) -> NodeTree:
    for slot in range(gpus):
        tree.pci(f"0000:{0x18 + slot:02x}:00.0", "10de", "2330", "030200")  # H100 SXM5 80GB
    tree.loaded_driver(DRIVER).file("/usr/bin/nvidia-smi", "")
    other = "Package: containerd\nStatus: install ok installed\nVersion: 1.7.28-0ubuntu1\n"
    stanzas = [other] + ([STANZA.format(branch=package.split(".")[0], version=package)] if package else [])
    tree.file(fabricmanager.DPKG_STATUS, "\n".join(stanzas))
    if enabled:
        tree.file(fabricmanager.ENABLED, "")
    tree.file("/proc/1/comm", "systemd\n")
    if daemon:
        tree.file("/proc/4242/comm", "nv-fabricmanage\n")
    return tree


def test_a_healthy_board(tree: NodeTree) -> None:
    result = fabricmanager.check(hgx(tree).root)
    assert result.status is Status.OK
    assert result.detail.startswith("8 × NVIDIA-H100-80GB-HBM3: nv-fabricmanager running")


@pytest.mark.parametrize(
    ("settings", "fragment"),
    [
        ({"package": None}, "no Fabric Manager package is installed"),
        ({"package": "595.58"}, "Fabric Manager 595.58 next to driver 595.84"),
        ({"enabled": False}, "nvidia-fabricmanager is not enabled"),
        ({"daemon": False}, "nv-fabricmanager is not running"),
    ],
)
def test_each_problem(tree: NodeTree, settings: dict[str, Any], fragment: str) -> None:
    result = fabricmanager.check(hgx(tree, **settings).root)
    assert result.status is Status.PROBLEM and fragment in result.detail, result
    assert result.docs == "https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/"


def test_not_needed_on_four_gpus_or_pcie_cards(tree: NodeTree) -> None:
    assert fabricmanager.check(hgx(tree, gpus=4, package=None, daemon=False).root).status is Status.NA


def test_pcie_cards_need_none(tree: NodeTree) -> None:
    for slot in range(8):
        tree.pci(f"0000:{0x18 + slot:02x}:00.0", "10de", "2331", "030200")  # H100 PCIe
    assert fabricmanager.check(tree.root).status is Status.NA


@pytest.fixture
def fabric(monkeypatch: pytest.MonkeyPatch):
    """NVML with 8 GPUs whose fabric states the test sets."""
    states: list[int] = []

    def info(_handle: Any, found: Any) -> int:
        found.state = states[_handle]
        return 0

    for name, fake in {
        "nvmlInit": lambda: None,
        "nvmlShutdown": lambda: None,
        "nvmlDeviceGetCount": lambda: len(states),
        "nvmlDeviceGetHandleByIndex": lambda index: index,
        "nvmlDeviceGetGpuFabricInfo": info,
    }.items():
        monkeypatch.setattr(pynvml, name, fake)
    return states


def test_nvml_fabric_states_as_nvidia_smi_names_them(fabric: list[int]) -> None:
    fabric += [pynvml.NVML_GPU_FABRIC_STATE_COMPLETED] * 7 + [pynvml.NVML_GPU_FABRIC_STATE_IN_PROGRESS]
    assert nvml.fabric_states() == ("Completed",) * 7 + ("In Progress",)


def test_a_live_node_with_a_gpu_not_completed(tree: NodeTree, fabric: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    fabric += [pynvml.NVML_GPU_FABRIC_STATE_COMPLETED] * 7 + [pynvml.NVML_GPU_FABRIC_STATE_NOT_STARTED]
    root = hgx(tree).root
    monkeypatch.setattr(NodeRoot, "is_live", property(lambda self: True))
    result = fabricmanager.check(root)
    assert result.status is Status.PROBLEM and "GPU 7: Not Started" in result.detail


def test_a_live_node_completed(tree: NodeTree, fabric: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    fabric += [pynvml.NVML_GPU_FABRIC_STATE_COMPLETED] * 8
    root = hgx(tree).root
    monkeypatch.setattr(NodeRoot, "is_live", property(lambda self: True))
    assert fabricmanager.check(root).detail.endswith("fabric state Completed on 8 GPUs")
