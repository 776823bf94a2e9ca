"""Rules that know their context better than the catalogue's default severity."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

SPECS = Path(__file__).parent / "specs"
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
        # The distribution's default alone: the nodes may be set up outside the files.
        ("k3s", "warning"),
        ("rke2", "warning"),
        ("k0s", "warning"),
        ("kubeadm", "warning"),
        ("gke", None),
        ("eks", None),
        ("aks", None),
        ("openshift", None),  # the GPU Operator hooks CRI-O: every container gets the toolkit
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
        # Without a spec the node's GPU count is unknown: on one-GPU nodes `all` grants nothing.
        ("NVIDIA_VISIBLE_DEVICES", "all", 4, "info"),
    ],
)
def test_visible_devices_within_the_request_are_warnings_or_info(
    lint: Callable[..., list], name: str, value: str, gpus: int, severity: str | None
) -> None:
    found = [r.severity for r in lint(_visible(name, value, gpus)) if r.rule == "GS007"]
    assert found == ([severity] if severity else [])


@pytest.mark.parametrize(("spec", "severity"), [("kubeadm-1.35.yaml", "error"), ("l4.yaml", None)])
def test_visible_devices_all_by_the_nodes_gpu_count(
    lint: Callable[..., list], spec: str, severity: str | None
) -> None:
    """With a spec, `all` beside a one-GPU request is an error where the pod can land on nodes
    with more GPUs (8 and 4 per node) and nothing where every node has one."""
    text = _visible("NVIDIA_VISIBLE_DEVICES", "all", 1).replace(
        "spec:\n", "spec:\n  tolerations: [{key: nvidia.com/gpu, operator: Exists}]\n", 1
    )
    found = [r.severity for r in lint(text, spec=SPECS / spec) if r.rule == "GS007"]
    assert found == ([severity] if severity else [])


PRIVILEGED_POD = """
apiVersion: v1
kind: Pod
metadata: {name: legacy, namespace: lab}
spec:
  tolerations: [{key: nvidia.com/gpu, operator: Exists}]
  containers:
    - name: cuda
      image: ghcr.io/example/cuda-app:1.0
      securityContext: {privileged: true}
      resources: {limits: {nvidia.com/gpu: 1}}
"""
KARPENTER = """
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: gpu}
spec:
  template:
    spec:
      requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [%s]}]
      taints: [{key: %s, effect: NoSchedule}]
"""


@pytest.mark.parametrize(
    ("extra", "spec", "severity"),
    [
        # No evidence of the nodes' GPU count: the message says it assumes more, information.
        ("", None, "info"),
        # A spec: pools of 8 and 4 GPUs per node an error; one GPU per node, taken, nothing.
        ("", "kubeadm-1.35.yaml", "error"),
        ("", "l4.yaml", None),
        # A node group of the set that the pod tolerates, with multi-GPU instance types.
        (KARPENTER % ("g5.xlarge, g5.12xlarge", "nvidia.com/gpu"), None, "error"),
        # Its instance types have one GPU each, or its taint keeps the pod off: no evidence.
        (KARPENTER % ("g5.xlarge, g6.2xlarge", "nvidia.com/gpu"), None, "info"),
        (KARPENTER % ("p5.48xlarge", "dedicated"), None, "info"),
    ],
)
def test_privileged_gpu_pod_by_the_evidence_of_the_nodes_gpu_count(
    lint: Callable[..., list], extra: str, spec: str | None, severity: str | None
) -> None:
    """Evidence before severity: a privileged container reaching "every GPU of its node" is an
    error only where nodes with more GPUs than it requests are shown."""
    found = [r for r in lint(PRIVILEGED_POD + extra, spec=SPECS / spec if spec else None) if r.rule == "GS002"]
    assert [r.severity for r in found] == ([severity] if severity else [])
    if severity == "info":
        assert "assuming nodes with more GPUs than that" in found[0].message


def test_privileged_gpu_pod_fixtures_by_evidence(lint: Callable[..., list]) -> None:
    """The fixtures' cases: multi-GPU evidence errors, sidecars that take GPUs without it information."""
    fixtures = Path(__file__).parent / "fixtures" / "GS002"
    evidence = (fixtures / "fires-multi-gpu-nodes-evidence.yaml").read_text("utf-8")
    assert [r.severity for r in lint(evidence) if r.rule == "GS002"] == ["error"] * 3
    sidecars = (fixtures / "fires-privileged-sidecars-that-take-gpus.yaml").read_text("utf-8")
    assert [r.severity for r in lint(sidecars) if r.rule == "GS002"] == ["info"] * 3
    shared = (fixtures / "fires-escalation-and-admin-capability.yaml").read_text("utf-8")  # a MIG slice
    assert [r.severity for r in lint(shared) if r.rule == "GS002"] == ["error"] * 2


UNLABELLED_RULE = """
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata: {name: gpu-alerts, namespace: monitoring}
spec: {groups: [{name: gpu, rules: [{alert: GPUHot, expr: DCGM_FI_DEV_GPU_TEMP > 85}]}]}
"""
KPS_RELEASE_WITH_DEFAULTS = """
---
apiVersion: helm.cattle.io/v1
kind: HelmChart
metadata: {name: kube-prometheus-stack, namespace: kube-system}
spec:
  chart: kube-prometheus-stack
  targetNamespace: monitoring
  valuesContent: |-
    grafana: {enabled: false}
"""


def test_unselected_rule_is_judged_only_where_the_set_shows_a_prometheus(lint: Callable[..., list]) -> None:
    """Without a Prometheus or kube-prometheus-stack release in the set, what selects the rule
    lives elsewhere (GitOps repositories often install the chart from another folder)."""
    assert [r.severity for r in lint(UNLABELLED_RULE) if r.rule == "GS014"] == []
    with_release = UNLABELLED_RULE + KPS_RELEASE_WITH_DEFAULTS
    assert [r.severity for r in lint(with_release) if r.rule == "GS014"] == ["warning"]


def test_fabric_manager_is_an_error_only_where_the_spec_says_the_hosts_lack_it(lint: Callable[..., list]) -> None:
    """Without a spec nothing in the files shows the hosts, whose packages usually bring Fabric
    Manager: the finding from the pod's labels alone is a warning that says what it assumes."""
    fixtures = Path(__file__).parent / "fixtures" / "GS044"
    from_labels = [r for r in lint((fixtures / "fires-product-label-whole-board.yaml").read_text("utf-8")) if r.rule == "GS044"]
    assert [r.severity for r in from_labels] == ["warning"]
    assert "assumed" in from_labels[0].message
    spec = (fixtures / "fires-spec-without-fabric-manager.yaml").read_text("utf-8")
    first = spec.splitlines()[0]
    assert first.startswith("# spec: ")
    from_spec = lint(spec, spec=SPECS / first.removeprefix("# spec: ").strip())
    assert {r.severity for r in from_spec if r.rule == "GS044"} == {"error"}


@pytest.mark.parametrize(("distribution", "severity"), [("gke", "info"), ("kubeadm", "error"), (None, "error")])
def test_gpu_request_without_limit_is_info_on_gke(
    lint: Callable[..., list], distribution: str | None, severity: str
) -> None:
    """GKE Autopilot sets limits from requests before admission; elsewhere the API server refuses."""
    pod = GPU_POD.replace("resources: {limits: {nvidia.com/gpu: 1}}", "resources: {requests: {nvidia.com/gpu: 1}}")
    assert [r.severity for r in lint(pod, distribution=distribution) if r.rule == "GS006"] == [severity]


VLLM_DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm, namespace: serving}
spec:
  selector: {matchLabels: {app: vllm}}
  template:
    metadata: {labels: {app: vllm}}
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.1
          args: ["--model", "Qwen/Qwen2.5-7B-Instruct"]
          ports: [{containerPort: 8000}]
          resources: {limits: {nvidia.com/gpu: 1}}
"""
SERVICE = """
---
apiVersion: v1
kind: Service
metadata: {name: vllm, namespace: serving%s}
spec:
  selector: {app: vllm}
  ports: [{port: 8000}]
"""


@pytest.mark.parametrize(
    ("extra", "severity", "says"),
    [
        (SERVICE % "", "warning", "its Service sends requests"),
        ("", "info", "no Service of the set selects it"),
        (SERVICE % ", annotations: {cloud.google.com/neg: '{\"ingress\": true}'}", "info", "GKE NEG backend"),
    ],
)
def test_llm_server_without_probe_by_the_evidence_of_its_service(
    lint: Callable[..., list], extra: str, severity: str, says: str
) -> None:
    """GS040 is a warning where a Service of the set sends the pod traffic; info otherwise."""
    [found] = [r for r in lint(VLLM_DEPLOYMENT + extra) if r.rule == "GS040"]
    assert (found.severity, says in found.message) == (severity, True)
