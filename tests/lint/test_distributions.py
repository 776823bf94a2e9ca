"""``--distribution`` end to end with the shipped rules: GS004 an
error only where runc is containerd's default, never on GKE, EKS or AKS, info without context;
GS019 only on K3s and RKE2; an object's own managed-cloud node labels are its context."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpustack.lint.distributions import DISTRIBUTIONS

from lint_support import gpustack, write

pytestmark = pytest.mark.usefixtures("in_tmp")

GPU_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm, namespace: serving}
spec:
  strategy: {type: Recreate}
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.0
          resources: {limits: {nvidia.com/gpu: 1}}
"""
SPEC = """\
apiVersion: gpustack.io/v1alpha1
kind: GpuStack
metadata: {{name: t}}
spec:
  cluster: {{distribution: {distribution}, nvidiaDefaultRuntime: {default}}}
  nodePools:
    - name: g
      gpu: {{model: L4, count: 1}}
      driver: {{source: host}}
"""


def deployment(selection: str = "") -> str:
    """The GPU Deployment with ``selection`` (node selection lines) in its pod spec."""
    return GPU_DEPLOYMENT.replace("      containers:\n", selection + "      containers:\n")


def severities(capsys: pytest.CaptureFixture[str], rule: str, *args: str) -> list[str]:
    """The severities of ``rule``'s findings in ``gpustack lint ARGS`` (default: this folder)."""
    code, out, err = gpustack(capsys, "lint", "--select", rule, "--format", "json", *args)
    assert code in (0, 1), err
    return [f["severity"] for f in json.loads(out)["findings"]]


# The distribution's default runtime alone: a warning (an error needs a spec or evidence in the set).
GS004 = {
    "k3s": ["warning"], "rke2": ["warning"], "k0s": ["warning"], "kubeadm": ["warning"], "talos": ["warning"],
    "gke": [], "eks": [], "aks": [],
    "microk8s": ["warning"], "openshift": [], "generic": ["warning"],
}  # fmt: skip


def test_every_distribution_is_covered() -> None:
    assert set(GS004) == set(DISTRIBUTIONS)


@pytest.mark.parametrize("distribution", DISTRIBUTIONS)
def test_gs004_by_distribution(capsys: pytest.CaptureFixture[str], distribution: str) -> None:
    write("vllm.yaml", deployment())
    assert severities(capsys, "GS004", "--distribution", distribution) == GS004[distribution]


def test_gs004_is_info_without_any_context(capsys: pytest.CaptureFixture[str]) -> None:
    write("vllm.yaml", deployment())
    assert severities(capsys, "GS004") == ["info"]


@pytest.mark.parametrize(("distribution", "default", "found"), [
    ("kubeadm", "false", ["error"]),
    ("kubeadm", "true", []),  # nvidia-ctk runtime configure --set-as-default
    ("k3s", "false", ["error"]),
    ("k3s", "true", []),  # K3s default-runtime: nvidia
])  # fmt: skip
def test_gs004_with_a_spec(
    capsys: pytest.CaptureFixture[str], distribution: str, default: str, found: list[str]
) -> None:
    write("deploy/vllm.yaml", deployment())
    write("stack.yaml", SPEC.format(distribution=distribution, default=default))
    assert severities(capsys, "GS004", "deploy", "--spec", "stack.yaml") == found


OWN_CONTEXT = {
    "gke nodeSelector": "      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}\n",
    "gke affinity": (
        "      affinity:\n        nodeAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n"
        "            nodeSelectorTerms:\n              - matchExpressions:\n"
        "                  - {key: cloud.google.com/gke-accelerator, operator: Exists}\n"
    ),
    "eks": "      nodeSelector: {eks.amazonaws.com/nodegroup: gpu}\n",
    "eks karpenter": "      nodeSelector: {karpenter.k8s.aws/instance-gpu-name: l4}\n",
    "aks": "      nodeSelector: {kubernetes.azure.com/agentpool: gpu}\n",
}


@pytest.mark.parametrize("selection", OWN_CONTEXT.values(), ids=OWN_CONTEXT.keys())
@pytest.mark.parametrize("distribution", [None, "k3s", "kubeadm", "generic"])
def test_an_objects_own_cloud_labels_are_its_context(
    capsys: pytest.CaptureFixture[str], selection: str, distribution: str | None
) -> None:
    write("vllm.yaml", deployment(selection))
    args = ("--distribution", distribution) if distribution else ()
    assert severities(capsys, "GS004", *args) == []


@pytest.mark.parametrize(
    "selection",
    [
        # Only required selection places the pod on that cloud.
        "      affinity:\n        nodeAffinity:\n          preferredDuringSchedulingIgnoredDuringExecution:\n"
        "            - weight: 1\n              preference:\n                matchExpressions:\n"
        "                  - {key: cloud.google.com/gke-accelerator, operator: Exists}\n",
        "      affinity:\n        nodeAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n"
        "            nodeSelectorTerms:\n              - matchExpressions:\n"
        "                  - {key: cloud.google.com/gke-accelerator, operator: DoesNotExist}\n",
        "      nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}\n",
    ],
    ids=["preferred", "does-not-exist", "gfd-label"],
)
def test_other_selections_are_no_cloud_context(capsys: pytest.CaptureFixture[str], selection: str) -> None:
    write("vllm.yaml", deployment(selection))
    assert severities(capsys, "GS004", "--distribution", "k3s") == ["warning"]


INSTANCE_TYPE = "      nodeSelector: {node.kubernetes.io/instance-type: g6.2xlarge}\n"


@pytest.mark.parametrize("distribution", [*DISTRIBUTIONS, None])
def test_gs019_only_on_k3s_and_rke2(capsys: pytest.CaptureFixture[str], distribution: str | None) -> None:
    write("vllm.yaml", deployment(INSTANCE_TYPE))
    args = ("--distribution", distribution) if distribution else ()
    assert severities(capsys, "GS019", *args) == (["warning"] if distribution in ("k3s", "rke2") else [])


GKE_SAMPLES = "GoogleCloudPlatform__"  # SOURCES.tsv: GKE's samples


def test_gke_samples_need_no_runtime_class_on_gke_but_do_on_k3s(
    capsys: pytest.CaptureFixture[str], shared: Path
) -> None:
    corpus = shared / "corpus"
    if not corpus.is_dir():
        pytest.skip(f"{corpus} not present")
    # GKE's samples alone: the flat corpus also holds other repositories' GPU Operator
    # ClusterPolicies, whose toolkit is the set's evidence that nvidia is the default runtime.
    samples = sorted(str(path) for path in corpus.glob(f"{GKE_SAMPLES}*"))
    gs004: dict[str, set[str]] = {}
    for distribution in ("gke", "k3s"):
        code, out, err = gpustack(capsys, "lint", *samples, "--distribution", distribution, "--format", "json")
        assert code in (0, 1), err
        findings = json.loads(out)["findings"]
        gs004[distribution] = {Path(f["file"]).name for f in findings if f["rule"] == "GS004"}
    assert not gs004["gke"]
    assert gs004["k3s"]
