"""GS060: errors where the served-API table is certain, warnings where the rule assumes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

SPECS = Path(__file__).parent / "specs"
CLASSIC_CLAIM = """
apiVersion: resource.k8s.io/v1alpha2
kind: ResourceClaim
metadata: {name: gpu, namespace: dra}
spec: {resourceClassName: gpu.nvidia.com}
"""


def _gs060(found: list) -> list[tuple[str, str]]:
    return [(r.severity, r.message) for r in found if r.rule == "GS060"]


@pytest.mark.parametrize(
    ("manifest", "severity", "said"),
    [
        ("apiVersion: nvidia.com/v1alpha1\nkind: ClusterPolicy\nmetadata: {name: p}\n", "error",
         "ClusterPolicy is served at nvidia.com/v1 only (the GPU Operator)"),
        ("apiVersion: nvidia.com/v1\nkind: MIGConfig\nmetadata: {name: m}\n", "error", "no NVIDIA project serves kind MIGConfig"),
        ("apiVersion: nvidia.com/v1\nkind: GpuSlicer\nmetadata: {name: m}\n", "warning", "assumed: none is installed"),
        ("apiVersion: resource.k8s.io/v1beta1\nkind: ResourceClass\nmetadata: {name: c}\n", "error",
         "no Kubernetes release serves kind ResourceClass at resource.k8s.io/v1beta1"),
        (CLASSIC_CLAIM, "warning", "served by Kubernetes 1.27 to 1.30 only (assumed: the cluster runs a later release"),
    ],
)
def test_severity_without_spec(lint: Callable[..., list], manifest: str, severity: str, said: str) -> None:
    [(found_severity, message)] = _gs060(lint(manifest))
    assert found_severity == severity
    assert said in message


def test_removed_version_is_an_error_on_the_specs_kubernetes(lint: Callable[..., list]) -> None:
    [(severity, message)] = _gs060(lint(CLASSIC_CLAIM, spec=SPECS / "k3s-1.33.yaml"))
    assert severity == "error"
    assert "the cluster runs 1.33" in message


def test_version_newer_than_the_specs_kubernetes_is_an_error(lint: Callable[..., list]) -> None:
    claim = CLASSIC_CLAIM.replace("v1alpha2", "v1").replace("spec: {resourceClassName: gpu.nvidia.com}", "spec: {}")
    [(severity, message)] = _gs060(lint(claim, spec=SPECS / "k3s-1.33.yaml"))
    assert severity == "error"
    assert "resource.k8s.io/v1 is served by Kubernetes 1.34 on: the cluster runs 1.33" in message
    assert _gs060(lint(claim)) == []  # without a spec: today's Kubernetes serves it


def test_malformed_crd_and_api_version_are_quiet(lint: Callable[..., list]) -> None:
    text = (
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: x}\n"
        "spec: {group: nvidia.com, names: {kind: ClusterPolicy}, versions: [{served: true}, 3]}\n---\n"
        "apiVersion: nvidia.com\nkind: ClusterPolicy\nmetadata: {name: p}\n"
    )
    assert _gs060(lint(text)) == []


OLD_PLUGIN = """
apiVersion: extensions/v1beta1
kind: DaemonSet
metadata: {name: nvidia-device-plugin-daemonset, namespace: kube-system}
spec:
  template:
    spec:
      containers: [{name: plugin, image: nvcr.io/nvidia/k8s-device-plugin:v0.17.1}]
"""


def test_gpu_node_agent_at_a_removed_builtin_version(lint: Callable[..., list]) -> None:
    [(severity, message)] = _gs060(lint(OLD_PLUGIN))
    assert severity == "warning"
    assert "extensions/v1beta1 is served by Kubernetes 1.2 to 1.15 only (assumed" in message
    [(severity, message)] = _gs060(lint(OLD_PLUGIN, spec=SPECS / "k3s-1.33.yaml"))
    assert severity == "error"
    assert "the cluster runs 1.33" in message
