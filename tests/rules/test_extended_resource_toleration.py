"""GS028 and the ExtendedResourceToleration admission plugin (``facts/managed.py``): what says the
plugin is on (a managed cloud named by the distribution, the pod's node labels or the set), what
says it is off (a spec, an upstream distribution), and what the message assumes when nothing says."""

from __future__ import annotations

from pathlib import Path

SPECS = Path(__file__).parent / "specs"

POOL = """
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: { name: gpu }
spec:
  limits: { nvidia.com/gpu: 8 }
  template:
    spec:
      taints:
        - { key: nvidia.com/gpu, value: present, effect: NoSchedule }
"""
POD = """
apiVersion: v1
kind: Pod
metadata: {{ name: cuda-test }}
spec:
  {selector}
  containers:
    - name: cuda
      image: nvcr.io/nvidia/cuda:13.0.1-base-ubuntu24.04
      resources: {{ limits: {{ nvidia.com/gpu: 1 }} }}
"""
EKSCTL = """
apiVersion: eksctl.io/v1alpha5
kind: ClusterConfig
metadata: { name: ml, region: us-west-2 }
"""
TALOS = """
machine:
  network:
    hostname: cp-1
"""


def _gs028(lint, *documents: str, **options):  # type: ignore[no-untyped-def]
    return [r for r in lint("\n---\n".join(documents), **options) if r.rule == "GS028"]


def _pod(selector: str = "") -> str:
    return POD.format(selector=selector)


def test_without_a_platform_the_finding_says_it_assumes_the_plugin_off(lint) -> None:  # type: ignore[no-untyped-def]
    [finding] = _gs028(lint, POOL, _pod())
    assert finding.severity == "warning"
    assert "assumed: the API server runs without the ExtendedResourceToleration admission plugin" in finding.message
    assert "nvidia.com/gpu:NoSchedule for pods that request nvidia.com/gpu" in finding.message


def test_the_assumption_is_left_out_where_it_changes_nothing(lint) -> None:  # type: ignore[no-untyped-def]
    pool = POOL.replace("nvidia.com/gpu, value: present", "dedicated, value: gpu")
    [finding] = _gs028(lint, pool, _pod())
    assert "assumed" not in finding.message


def test_an_upstream_distribution_says_the_plugin_is_off(lint) -> None:  # type: ignore[no-untyped-def]
    for distribution in ("kubeadm", "k3s", "talos"):
        [finding] = _gs028(lint, POOL, _pod(), distribution=distribution)
        assert "assumed" not in finding.message


def test_a_managed_distribution_says_the_plugin_is_on(lint) -> None:  # type: ignore[no-untyped-def]
    for distribution in ("eks", "gke", "aks"):
        assert _gs028(lint, POOL, _pod(), distribution=distribution) == []


def test_an_eksctl_cluster_config_says_eks(lint) -> None:  # type: ignore[no-untyped-def]
    assert _gs028(lint, EKSCTL, POOL, _pod()) == []


def test_the_pods_own_node_labels_say_the_cloud(lint) -> None:  # type: ignore[no-untyped-def]
    selector = "nodeSelector: { cloud.google.com/gke-accelerator: nvidia-l4 }"
    assert _gs028(lint, POOL, _pod(selector)) == []


def test_a_set_that_runs_its_own_control_plane_names_no_cloud(lint) -> None:  # type: ignore[no-untyped-def]
    [finding] = _gs028(lint, TALOS, EKSCTL, POOL, _pod())
    assert "assumed" in finding.message


def test_a_set_that_names_two_clouds_names_none(lint) -> None:  # type: ignore[no-untyped-def]
    compute_class = "apiVersion: cloud.google.com/v1\nkind: ComputeClass\nmetadata: { name: l4 }\n"
    [finding] = _gs028(lint, compute_class, EKSCTL, POOL, _pod())
    assert "assumed" in finding.message


def test_a_spec_keeps_the_plugin_off_whatever_the_set_says(lint) -> None:  # type: ignore[no-untyped-def]
    [finding] = _gs028(lint, EKSCTL, _pod(), spec=SPECS / "kubeadm-1.35.yaml")
    assert finding.severity == "error"
    assert "assumed" not in finding.message


def test_a_spec_with_a_managed_distribution_turns_it_on(lint) -> None:  # type: ignore[no-untyped-def]
    assert _gs028(lint, _pod(), spec=SPECS / "kubeadm-1.35.yaml", distribution="eks") == []
