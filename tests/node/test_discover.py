"""``discover``: the snippet for each example node, and that it validates inside a spec."""

from __future__ import annotations

import dataclasses
import re
import textwrap
from pathlib import Path

import pytest
from nodetree import NodeTree

from gpustack.errors import GpustackError
from gpustack.node.discover import discover, snippet
from gpustack.node.nvml import NvmlGpu, NvmlReport
from gpustack.spec.load import load_spec
from gpustack.spec.models import GpuStack


def embedded(text: str, tmp_path: Path) -> GpuStack:
    """Load a minimal spec whose ``spec:`` is the snippet: what a user pastes must validate."""
    head = "apiVersion: gpustack.io/v1alpha1\nkind: GpuStack\nmetadata:\n  name: discovered\nspec:\n"
    path = tmp_path / "discovered.yaml"
    path.write_text(head + textwrap.indent(text, "  "), encoding="utf-8")
    return load_spec(str(path)).stack


def test_geforce_pc(geforce_pc: NodeTree, tmp_path: Path) -> None:
    text = snippet(discover(geforce_pc.root))
    assert text == (
        "# gpustack discover: 1 × NVIDIA-GeForce-RTX-4070-Ti-SUPER [10de:2705] class 0300, 16376 MiB, "
        "compute 8.9, no MIG\n"
        "# distribution: kubeadm (found /etc/kubernetes/manifests)\n"
        "# Paste under `spec:` of a GpuStack spec; `gpustack schema` describes every field.\n"
        "cluster:\n"
        "  distribution: kubeadm\n"
        "nodePools:\n"
        "- name: rtx-4070-ti-super\n"
        "  gpu:\n"
        "    model: RTX-4070-TI-SUPER\n"
        "    count: 1\n"
        "  driver:\n"
        "    source: host\n"
        "    version: '595.84'\n"
        "  toolkit:\n"
        "    mode: auto\n"
    )
    pool = embedded(text, tmp_path).spec.nodePools[0]
    assert (pool.gpu.model, pool.driver.version) == ("RTX-4070-TI-SUPER", "595.84")


def test_l4_vm_on_k3s(l4_vm: NodeTree, tmp_path: Path) -> None:
    text = snippet(discover(l4_vm.root))
    assert "[10de:27b8] class 0302, 23034 MiB, compute 8.9, no MIG" in text
    assert "# distribution: k3s (found /var/lib/rancher/k3s)" in text
    stack = embedded(text, tmp_path)
    assert stack.spec.cluster.distribution == "k3s"
    assert stack.spec.nodePools[0].gpu.model == "L4"


def test_several_gpus_with_mig(tree: NodeTree, tmp_path: Path) -> None:
    for slot in range(8):
        tree.pci(f"0000:{slot:02x}:00.0", "10de", "2335", "030200")
    text = snippet(discover(tree.root))
    assert "8 × NVIDIA-H200 [10de:2335]" in text
    assert "MIG-capable (1g.18gb, 1g.35gb, 2g.35gb, 3g.71gb, 4g.71gb, 7g.141gb)" in text
    assert embedded(text, tmp_path).spec.nodePools[0].gpu.count == 8


def test_node_without_driver_or_distribution(nouveau_node: NodeTree, tmp_path: Path) -> None:
    text = snippet(discover(nouveau_node.root))
    assert "neither K3s nor kubeadm found" in text
    pool = embedded(text, tmp_path).spec.nodePools[0]
    assert pool.driver.version is None
    assert pool.toolkit.mode == "auto"


def test_operator_driver_enables_the_operator(tree: NodeTree, tmp_path: Path) -> None:
    tree.pci("0000:31:00.0", "10de", "27b8", "030200").file("/run/nvidia/driver/usr/bin/nvidia-smi").toolkit("legacy")
    text = snippet(discover(tree.root))
    stack = embedded(text, tmp_path)  # operator pools need the operator: the snippet says so
    assert stack.spec.gpuOperator.enabled
    assert stack.spec.nodePools[0].driver.source == "operator"
    assert "toolkit" not in text  # the operator's own toolkit, not the host's legacy mode


def test_toolkit_mode_without_a_spec_equivalent(tree: NodeTree, tmp_path: Path) -> None:
    tree.pci("0000:31:00.0", "10de", "27b8", "030200").toolkit("jit-cdi")
    text = snippet(discover(tree.root))
    assert "# toolkit mode jit-cdi has no spec equivalent: set toolkit.mode by hand" in text
    assert embedded(text, tmp_path).spec.nodePools[0].toolkit.mode == "auto"


def test_nvml_facts_in_the_header(l4_vm: NodeTree) -> None:
    report = NvmlReport("595.84", (NvmlGpu("NVIDIA L4", 23034, "8.9", "not supported"),))
    found = dataclasses.replace(discover(l4_vm.root), nvml=report)
    assert "# NVML: driver 595.84; NVIDIA L4, 23034 MiB, compute 8.9, MIG not supported\n" in snippet(found)


@pytest.mark.parametrize(
    ("devices", "message"),
    [
        ([], "no NVIDIA GPU on the PCI bus"),
        (["27b8", "26b9"], "GPUs of several models on one node (1 × 10de:27b8, 1 × 10de:26b9)"),
    ],
)
def test_nothing_to_discover(tree: NodeTree, devices: list[str], message: str) -> None:
    for slot, device in enumerate(devices):
        tree.pci(f"0000:0{slot}:00.0", "10de", device, "030200")
    with pytest.raises(GpustackError, match=re.escape(message)):
        discover(tree.root)


def test_unknown_gpu_gives_a_custom_skeleton(tree: NodeTree, tmp_path: Path) -> None:
    """A GPU the catalogue lacks: gpu.custom with what the PCI bus tells, null for the rest,
    which validate then names; filled in, the snippet validates."""
    tree.pci("0000:01:00.0", "10de", "233b", "030200")
    text = snippet(discover(tree.root))
    assert "not in the GPU catalogue" in text
    assert "    model: GPU-10de-233b\n" in text
    assert '      pciDevice: 233b\n      pciClass: "0302"\n' in text
    assert "      memoryMiB:\n" in text  # null: nothing but NVML knows it
    with pytest.raises(GpustackError, match="memoryMiB"):
        embedded(text, tmp_path)
    filled = {
        "product:": "product: NVIDIA-H200-NVL", "architecture:": "architecture: hopper",
        "computeCapability:": "computeCapability: '9.0'", "memoryMiB:": "memoryMiB: 143771",
        "powerLimitW:": "powerLimitW: 600", "migProfiles:": "migProfiles: []", "dcgmProfiling:": "dcgmProfiling: true",
        "ecc:": "ecc: true", "segment:": "segment: datacenter",
    }
    for empty, value in filled.items():
        text = text.replace(f"{empty}\n", f"{value}\n")
    assert embedded(text, tmp_path).spec.nodePools[0].gpu.custom.pciDevice == "233b"


def test_unknown_gpu_with_nvml(tree: NodeTree) -> None:
    tree.pci("0000:01:00.0", "10de", "233b", "030200")
    report = NvmlReport("595.84", (NvmlGpu("NVIDIA H200 NVL", 143771, "9.0", "disabled"),))
    text = snippet(dataclasses.replace(discover(tree.root), nvml=report))
    assert "    model: H200-NVL\n" in text and "- name: h200-nvl\n" in text
    for line in ("product: NVIDIA-H200-NVL", "architecture: hopper", "computeCapability: '9.0'", "memoryMiB: 143771"):
        assert f"      {line}\n" in text
    assert "      migProfiles:\n" in text  # MIG-capable: its profiles are the datasheet's


@pytest.mark.parametrize(("capability", "family"), [("7.0", "volta"), ("7.5", "turing"), ("8.6", "ampere"),
                                                     ("8.9", "ada-lovelace"), ("9.0", "hopper"), ("12.0", "blackwell")])
def test_gfd_family(capability: str, family: str) -> None:
    from gpustack.spec.gpu_catalogue import gfd_family

    assert gfd_family(capability) == family
