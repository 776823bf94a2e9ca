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
