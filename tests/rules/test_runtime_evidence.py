"""GS004 with the set's evidence of containerd's default runtime (``runtimeevidence``):
severities, precedence and messages beyond what the fixtures show."""

from __future__ import annotations

GPU_POD = """
apiVersion: v1
kind: Pod
metadata: { name: gpu-test }
spec:
  containers:
    - name: cuda
      image: nvcr.io/nvidia/cuda:13.0.1-base-ubuntu24.04
      resources: { limits: { nvidia.com/gpu: 1 } }
"""


def _talos_patch(runtime: str) -> str:
    return f"""
machine:
  files:
    - op: create
      path: /etc/cri/conf.d/20-customization.part
      content: |
        [plugins."io.containerd.cri.v1.runtime".containerd]
          default_runtime_name = "{runtime}"
"""


def _gs004(lint, *documents: str, distribution: str | None = None):  # type: ignore[no-untyped-def]
    return [r for r in lint("\n---\n".join(documents), distribution=distribution) if r.rule == "GS004"]


def test_runc_evidence_is_an_error_without_a_distribution_and_names_its_place(lint) -> None:  # type: ignore[no-untyped-def]
    [finding] = _gs004(lint, _talos_patch("runc"), GPU_POD)
    assert finding.severity == "error"
    assert 'default_runtime_name = "runc" to /etc/cri/conf.d/20-customization.part, fixture.yaml:6' in finding.message


def test_runc_evidence_beats_a_distribution_that_only_warns(lint) -> None:  # type: ignore[no-untyped-def]
    [finding] = _gs004(lint, "default-runtime: runc\n", GPU_POD, distribution="microk8s")
    assert finding.severity == "error"
    assert "K3s/RKE2 config sets default-runtime: runc" in finding.message


def test_evidence_that_disagrees_settles_nothing(lint) -> None:  # type: ignore[no-untyped-def]
    findings = _gs004(lint, _talos_patch("runc"), _talos_patch("nvidia"), GPU_POD)
    assert [f.severity for f in findings] == ["info"]  # as without any context
    assert "K3s, RKE2, k0s, kubeadm" in findings[0].message


def test_cluster_policy_with_cdi_silences_the_rule(lint) -> None:  # type: ignore[no-untyped-def]
    policy = """
apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata: { name: cluster-policy }
spec:
  cdi: { enabled: true }
  toolkit: { enabled: false }
"""
    assert _gs004(lint, policy, GPU_POD, distribution="k3s") == []
    assert _gs004(lint, policy.replace("enabled: true", "enabled: false"), GPU_POD, distribution="k3s")


def test_chart_releases_of_gpu_daemonsets_follow_the_evidence(lint) -> None:  # type: ignore[no-untyped-def]
    release = """
apiVersion: helm.cattle.io/v1
kind: HelmChart
metadata: { name: nvidia-device-plugin, namespace: kube-system }
spec:
  chart: nvidia-device-plugin
  repo: https://nvidia.github.io/k8s-device-plugin
  version: 0.17.4
"""
    # K3s' helm-controller: K3s context, a warning on its default alone, an error where the set says runc
    assert [f.severity for f in _gs004(lint, release)] == ["warning"]
    assert [f.severity for f in _gs004(lint, release, "default-runtime: runc\n")] == ["error"]
    assert _gs004(lint, release, "default-runtime: nvidia\n") == []


def test_evidence_is_a_fact_of_each_root(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """One root's Talos patch says nothing of another root's nodes (``--set-root``)."""
    from gpustack.lint.engine import lint as lint_set
    from gpustack.lint.policy.config import Config

    from lint_support import load_paths

    (tmp_path / "gpu-cluster").mkdir()
    (tmp_path / "other-cluster").mkdir()
    (tmp_path / "gpu-cluster" / "patch.yaml").write_text(_talos_patch("nvidia"), "utf-8")
    (tmp_path / "other-cluster" / "pod.yaml").write_text(GPU_POD, "utf-8")

    def gs004(*roots):  # type: ignore[no-untyped-def]
        report = lint_set(load_paths([str(tmp_path)]), Config(distribution="talos", roots=roots))
        return [f for f in report.findings if f.rule == "GS004"]

    assert gs004() == []  # one set: the patch covers the pod
    [finding] = gs004(tmp_path / "gpu-cluster", tmp_path / "other-cluster")
    assert finding.file.endswith("other-cluster/pod.yaml")
