"""``gpustack lint --kubeconfig`` and ``--cluster`` against the real control plane: the context
read from it is the spec it was started from, a pitfall applied to it is found where it runs,
and a user the printed RBAC does not cover gets a clear refusal (exit 2), where one bound to it
reads the cluster. The refusals a real server does not give on demand (a list cut short, a
server that never answers) are tests/lint/test_live_cluster.py's, against a loopback server.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpustack.lint.facts.from_spec import load_cluster
from gpustack.lint.live.client import read_cluster
from gpustack.lint.live.compare import combined, describes
from gpustack.lint.live.pools import live_facts
from gpustack.lint.live.rbac import manifests
from tests.cluster.control_plane import LIMITED_USER
from tests.cluster.deliver import installed
from tests.cluster.support import Cluster

pytestmark = pytest.mark.cluster

REPO = Path(__file__).resolve().parents[2]
SPEC = REPO / "examples" / "k3s-l4.yaml"
IMAGE = "nvcr.io/nvidia/cuda:13.0.1-base-ubuntu24.04"
RBAC = "/apis/rbac.authorization.k8s.io/v1"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    yield from installed(SPEC, tmp_path_factory.mktemp("live") / "state")


def lint(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gpustack", "lint", *args], cwd=REPO, capture_output=True,
                          text=True, check=False, timeout=120)


def test_the_context_read_is_the_spec(cluster: Cluster) -> None:
    snapshot = read_cluster(str(cluster.kubeconfig), None)
    spec, live = load_cluster(str(SPEC)), live_facts(snapshot)
    assert live.minor == spec.minor
    for planned in spec.pools:
        (present,) = [pool for pool in live.pools if describes(planned, pool, spec.label_keys)]
        assert (present.nodes, present.gpus, present.gpu.product) == (planned.nodes, planned.gpus, planned.gpu.product)
        assert set(present.taints) == set(planned.taints)
        assert present.resources == planned.resources
        known = {key: value for key, value in planned.labels.items() if value is not None and key in present.labels}
        assert {key: present.labels[key] for key in known} == known
    assert len(live.pools) == len(spec.pools)
    # K3s registers these RuntimeClasses (tests/cluster/control_plane.py, _distribution_objects)
    assert sorted(item["metadata"]["name"] for item in snapshot.of("RuntimeClass")) == ["nvidia", "nvidia-experimental"]
    assert combined(spec, live)[1] == []  # nothing differs


def test_classes_and_releases_are_read_and_release_payloads_are_not(cluster: Cluster) -> None:
    # A DeviceClass as NVIDIA's DRA driver chart installs it
    # (https://github.com/NVIDIA/k8s-dra-driver-gpu, deployments/helm/nvidia-dra-driver-gpu/templates/deviceclass-gpu.yaml)
    cluster.api.create("/apis/resource.k8s.io/v1/deviceclasses", {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.nvidia.com"},
        "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com' && "
                                                      "device.attributes['gpu.nvidia.com'].type == 'gpu'"}}]}})
    # A release Secret as Helm 3 stores it (https://helm.sh/docs/topics/advanced/#storage-backends)
    labels = {"owner": "helm", "name": "gpu-operator", "status": "deployed", "version": "1"}
    cluster.api.create("/api/v1/namespaces/default/secrets", {
        "apiVersion": "v1", "kind": "Secret", "type": "helm.sh/release.v1", "data": {"release": "c2VjcmV0"},
        "metadata": {"name": "sh.helm.release.v1.gpu-operator.v1", "labels": labels}})
    snapshot = read_cluster(str(cluster.kubeconfig), None)
    assert [item["metadata"]["name"] for item in snapshot.of("DeviceClass")] == ["gpu.nvidia.com"]
    (release,) = snapshot.of("Secret")
    assert release["metadata"]["labels"] == labels and "data" not in release  # metadata only
    result = lint("--kubeconfig", str(cluster.kubeconfig), "examples/manifests", "--format", "json")
    (read,) = [note["message"] for note in json.loads(result.stdout)["notes"] if note["message"].startswith("read ")]
    assert "DeviceClasses: gpu.nvidia.com;" in read and "Helm releases: gpu-operator" in read


def test_cluster_lint_finds_a_planted_pitfall(cluster: Cluster) -> None:
    namespace = "planted"
    cluster.api.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    pod_spec: dict[str, Any] = {
        "runtimeClassName": "nvidia",
        "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"},  # the cluster has L4s only
        "containers": [{"name": "cuda", "image": IMAGE, "resources": {"limits": {"nvidia.com/gpu": 1}}}],
    }
    cluster.api.create(f"/apis/apps/v1/namespaces/{namespace}/deployments", {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "wrong-gpu"},
        "spec": {"selector": {"matchLabels": {"app": "wrong-gpu"}},
                 "template": {"metadata": {"labels": {"app": "wrong-gpu"}}, "spec": pod_spec}},
    })
    result = lint("--cluster", "--kubeconfig", str(cluster.kubeconfig), "--format", "json")
    assert result.returncode == 1, result.stderr
    findings = json.loads(result.stdout)["findings"]
    assert {(f["rule"], f["file"]) for f in findings if f["rule"] == "GS026"} == {("GS026", f"Deployment/{namespace}/wrong-gpu")}
    assert all(f["line"] is None for f in findings)


def test_a_user_without_list_on_nodes_is_refused_and_the_printed_role_suffices(cluster: Cluster) -> None:
    kubeconfig = cluster.state / f"{LIMITED_USER}.kubeconfig"
    role, binding = yaml.safe_load_all(manifests())
    binding["subjects"] = [{"kind": "User", "name": LIMITED_USER, "apiGroup": "rbac.authorization.k8s.io"}]
    without_nodes = {**role, "metadata": {"name": "no-nodes"}, "rules": [
        {**rule, "resources": [r for r in rule["resources"] if r != "nodes"]} if "resources" in rule else rule
        for rule in role["rules"]]}
    cluster.api.create(f"{RBAC}/clusterroles", without_nodes)
    cluster.api.create(f"{RBAC}/clusterrolebindings",
                       {**binding, "metadata": {"name": "no-nodes"}, "roleRef": {**binding["roleRef"], "name": "no-nodes"}})
    refused = lint("--kubeconfig", str(kubeconfig), "examples/manifests")
    assert (refused.returncode, refused.stdout) == (2, "")
    assert "forbidden to list nodes" in refused.stderr and "--print-rbac" in refused.stderr
    assert "Traceback" not in refused.stderr
    cluster.api.create(f"{RBAC}/clusterroles", role)
    cluster.api.create(f"{RBAC}/clusterrolebindings", binding)
    allowed = lint("--kubeconfig", str(kubeconfig), "--cluster", "--format", "json")
    assert allowed.returncode in (0, 1), allowed.stderr
    notes = [note["message"] for note in json.loads(allowed.stdout)["notes"]]
    assert not any(note.startswith("not read") for note in notes), notes


def test_a_running_object_lints_as_its_manifest_does(cluster: Cluster, tmp_path: Path) -> None:
    """What the server adds to an object (defaults, the service account volume, admission's
    tolerations, a scheduled Pod's nodeName, status) draws no finding of its own."""
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "as-applied", "namespace": "default"},
           "spec": {"tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                    "containers": [{"name": "cuda", "image": IMAGE, "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}
    cluster.api.create("/api/v1/namespaces/default/pods", pod)
    manifest = tmp_path / "pod.yaml"
    manifest.write_text(yaml.safe_dump(pod))

    def found(*args: str) -> set[tuple[str, str]]:
        result = lint(*args, "--kubeconfig", str(cluster.kubeconfig), "--format", "json")
        assert result.returncode in (0, 1), result.stderr
        return {(f["rule"], f["message"]) for f in json.loads(result.stdout)["findings"]
                if f["object"].get("name") == "as-applied"}

    from_file = found(str(manifest))
    assert from_file and found("--cluster") == from_file
