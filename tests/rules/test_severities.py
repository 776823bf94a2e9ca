"""Rules that know their context better than the catalogue's default severity."""

from __future__ import annotations

from collections.abc import Callable

import pytest

GPU_POD = """
apiVersion: v1
kind: Pod
metadata: {name: gpu-test}
spec:
  containers:
    - {name: cuda, image: ubuntu:24.04, resources: {limits: {nvidia.com/gpu: 1}}}
"""
PCI_0300_POD = GPU_POD.replace("spec:\n", 'spec:\n  nodeSelector: {feature.node.kubernetes.io/pci-0300_10de.present: "true"}\n')


@pytest.mark.parametrize(
    ("distribution", "severity"),
    [
        ("k3s", "error"),
        ("rke2", "error"),
        ("k0s", "error"),
        ("kubeadm", "error"),
        ("gke", None),
        ("eks", None),
        ("aks", None),
        ("openshift", "warning"),
        ("generic", "warning"),
        (None, "info"),
    ],
)
def test_missing_runtime_class_by_distribution(
    lint: Callable[..., list], distribution: str | None, severity: str | None
) -> None:
    found = [r.severity for r in lint(GPU_POD, distribution=distribution) if r.rule == "GS004"]
    assert found == ([severity] if severity else [])


def test_pci_0300_selector_is_a_warning_without_a_spec(lint: Callable[..., list]) -> None:
    assert [r.severity for r in lint(PCI_0300_POD) if r.rule == "GS001"] == ["warning"]


def _visible(name: str, value: str, gpus: int) -> str:
    return GPU_POD.replace("resources: {limits: {nvidia.com/gpu: 1}}", f"env: [{{name: {name}, value: '{value}'}}], resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}")


@pytest.mark.parametrize(
    ("name", "value", "gpus", "severity"),
    [
        ("CUDA_VISIBLE_DEVICES", "0", 2, "warning"),  # a valid subset: CUDA honours it, a GPU idles
        ("CUDA_VISIBLE_DEVICES", "0,1", 2, None),  # every allocated GPU
        ("CUDA_VISIBLE_DEVICES", "0,1,2,3", 1, "error"),  # ordinals the container does not have
        ("NVIDIA_VISIBLE_DEVICES", "1", 1, "warning"),  # honoured, right only if it is the allocated GPU
        ("NVIDIA_VISIBLE_DEVICES", "0,1", 1, "error"),
        ("NVIDIA_VISIBLE_DEVICES", "all", 4, "error"),
    ],
)
def test_visible_devices_within_the_request_are_warnings(
    lint: Callable[..., list], name: str, value: str, gpus: int, severity: str | None
) -> None:
    found = [r.severity for r in lint(_visible(name, value, gpus)) if r.rule == "GS007"]
    assert found == ([severity] if severity else [])
