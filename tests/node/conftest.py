"""The four example nodes as fixtures, built with ``nodetree.NodeTree``."""

from __future__ import annotations

from pathlib import Path

import pytest
from nodetree import AWS_KERNEL, DRIVER, GEFORCE_KERNEL, NodeTree


@pytest.fixture
def tree(tmp_path: Path) -> NodeTree:
    return NodeTree(tmp_path)


@pytest.fixture
def geforce_pc(tree: NodeTree) -> NodeTree:
    """A desktop PC: RTX 4070 Ti SUPER (VGA class 0300, with its audio function), stock containerd."""
    return (
        tree.pci("0000:01:00.0", "10de", "2705", "030000")
        .pci("0000:01:00.1", "10de", "22bb", "040300")
        .kernel(GEFORCE_KERNEL)
        .loaded_driver()
        .dkms(DRIVER, "6.8.0-134-generic", "6.8.0-136-generic", GEFORCE_KERNEL)
        .gpu_devices()
        .toolkit()
        .stock_containerd()
        .kubeadm()
        .kubelet("nvidia-gpu.sock")
        .efi(secure_boot=False)
    )


@pytest.fixture
def l4_vm(tree: NodeTree) -> NodeTree:
    """AWS g6.2xlarge, fully set up: L4 (3D controller 0302), Amazon's VGA 1d0f, K3s."""
    return (
        tree.pci("0000:00:03.0", "1d0f", "1111", "030000")
        .pci("0000:31:00.0", "10de", "27b8", "030200")
        .kernel(AWS_KERNEL)
        .loaded_driver()
        .dkms(DRIVER, AWS_KERNEL)
        .gpu_devices(caps=True)
        .toolkit()
        .cdi_spec()
        .k3s()
        .kubelet("nvidia-gpu.sock")
        .efi(secure_boot=False)
    )


@pytest.fixture
def nouveau_node(tree: NodeTree) -> NodeTree:
    """The stock Ubuntu AMI before the driver: nouveau bound, nothing NVIDIA."""
    return (
        tree.pci("0000:00:03.0", "1d0f", "1111", "030000")
        .pci("0000:31:00.0", "10de", "27b8", "030200")
        .kernel(AWS_KERNEL)
        .modules("nouveau", "gpu_sched", "drm_gpuvm")
        .efi(secure_boot=False)
    )


@pytest.fixture
def k3s_without_nvidia(tree: NodeTree) -> NodeTree:
    """K3s installed before the toolkit: its containerd config has no nvidia runtime."""
    return (
        tree.pci("0000:31:00.0", "10de", "27b8", "030200")
        .kernel(AWS_KERNEL)
        .loaded_driver()
        .dkms(DRIVER, AWS_KERNEL)
        .gpu_devices(caps=True)
        .k3s(nvidia=False)
        .kubelet()
    )
