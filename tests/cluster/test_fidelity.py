"""The harness's own fidelity: for each kubelet refusal and each agent, a small manifest that
upstream says fails does fail here, with the real reason, and its working twin runs.

One cluster of examples/talos-flux.yaml with its stack installed: Talos nodes (read-only root,
the NVIDIA extensions' ``nvidia`` handler, runc the default), NFD naming PCI labels by vendor, the
device plugin with a per-node config (the L4 pool time-sliced four ways) and GFD.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import pytest

from tests.cluster import deploy
from tests.cluster.control_plane import REPO
from tests.cluster.deliver import installed
from tests.cluster.support import WAIT_SECONDS, Cluster, describe, new_namespace, pods, wait_for, warnings

pytestmark = pytest.mark.cluster

SPEC = REPO / "examples" / "talos-flux.yaml"
IMAGE = "nvcr.io/nvidia/cuda:13.0.1-base-ubuntu24.04"
PAUSE = "registry.k8s.io/pause:3.10"
_numbers = itertools.count()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    yield from installed(SPEC, tmp_path_factory.mktemp("fidelity") / "state")


@pytest.fixture
def namespace(cluster: Cluster) -> str:
    return new_namespace(cluster, f"fidelity-{next(_numbers)}")


def apply(cluster: Cluster, *objects: dict[str, Any]) -> None:
    deploy.Applier(cluster.kubectl, cluster.kubeconfig).apply(list(objects), "the test's objects")


def pod(name: str, namespace: str, **spec: Any) -> dict[str, Any]:
    spec.setdefault("containers", [{"name": "main", "image": PAUSE}])
    spec.setdefault("nodeSelector", {"kubernetes.io/hostname": "l4-0"})
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def status(cluster: Cluster, namespace: str, name: str) -> dict[str, Any]:
    return cluster.api.get(f"/api/v1/namespaces/{namespace}/pods/{name}").get("status", {})


def ready(cluster: Cluster, namespace: str, name: str) -> None:
    def done() -> bool:
        current = status(cluster, namespace, name)
        return current.get("phase") == "Running" and all(c["ready"] for c in current.get("containerStatuses", []))
    wait_for(done, WAIT_SECONDS, lambda: describe(cluster.api, [cluster.api.get(f"/api/v1/namespaces/{namespace}/pods/{name}")]))


def refused(cluster: Cluster, namespace: str, name: str, words: str) -> str:
    """The pod stays out of Running, its status or its events saying ``words``."""
    def said() -> str | None:
        body = cluster.api.get(f"/api/v1/namespaces/{namespace}/pods/{name}")
        text = f"{body.get('status')} {warnings(cluster.api, body)}"
        return text if words in text and body["status"].get("phase") != "Running" or words in text and not all(
            c["ready"] for c in body["status"].get("containerStatuses", [])) else None
    return wait_for(said, WAIT_SECONDS, lambda: describe(cluster.api, pods(cluster.api, namespace)))


def test_a_missing_secret_in_env_holds_the_container_until_it_exists(cluster: Cluster, namespace: str) -> None:
    env = [{"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "later", "key": "token"}}}]
    apply(cluster, pod("env", namespace, containers=[{"name": "main", "image": PAUSE, "env": env}]))
    refused(cluster, namespace, "env", 'CreateContainerConfigError')
    refused(cluster, namespace, "env", 'secret "later" not found')
    apply(cluster, {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "later", "namespace": namespace},
                    "stringData": {"token": "x"}})
    ready(cluster, namespace, "env")


def test_a_missing_configmap_volume_fails_the_mount_and_an_optional_one_does_not(cluster: Cluster, namespace: str) -> None:
    volume = {"name": "config", "configMap": {"name": "absent"}}
    apply(cluster, pod("mount", namespace, volumes=[volume]))
    refused(cluster, namespace, "mount", 'MountVolume.SetUp failed for volume "config" : configmap "absent" not found')
    optional = {"name": "config", "configMap": {"name": "absent", "optional": True}}
    apply(cluster, pod("optional", namespace, volumes=[optional]))
    ready(cluster, namespace, "optional")


def test_a_runtime_class_whose_handler_the_node_lacks_fails_the_sandbox(cluster: Cluster, namespace: str) -> None:
    apply(cluster, {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "crun"}, "handler": "crun"})
    apply(cluster, pod("crun", namespace, runtimeClassName="crun"))
    refused(cluster, namespace, "crun", 'no runtime for "crun" is configured')
    apply(cluster, pod("nvidia", namespace, runtimeClassName="nvidia"))
    ready(cluster, namespace, "nvidia")


def test_a_host_path_under_talos_read_only_root_cannot_be_created(cluster: Cluster, namespace: str) -> None:
    apply(cluster, pod("usr-local", namespace, volumes=[
        {"name": "lib", "hostPath": {"path": "/usr/local/vgpu", "type": "DirectoryOrCreate"}}]))
    refused(cluster, namespace, "usr-local", "mkdir /usr/local/vgpu: read-only file system")
    apply(cluster, pod("var", namespace, volumes=[
        {"name": "lib", "hostPath": {"path": "/var/lib/hami/vgpu", "type": "DirectoryOrCreate"}}]))
    ready(cluster, namespace, "var")


def test_a_host_path_of_type_directory_must_exist(cluster: Cluster, namespace: str) -> None:
    """/run/nvidia/driver is the GPU Operator's driver container's: not on a node whose driver is Talos's."""
    apply(cluster, pod("driver-root", namespace, volumes=[
        {"name": "driver", "hostPath": {"path": "/run/nvidia/driver", "type": "Directory"}}]))
    refused(cluster, namespace, "driver-root", "hostPath type check failed: /run/nvidia/driver is not a directory")
    apply(cluster, pod("plugins", namespace, volumes=[
        {"name": "plugins", "hostPath": {"path": "/var/lib/kubelet/device-plugins", "type": "Directory"}}]))
    ready(cluster, namespace, "plugins")


def smoke_job(name: str, namespace: str, **spec: Any) -> dict[str, Any]:
    container = {"name": "nvidia-smi", "image": IMAGE, "command": ["nvidia-smi"], "resources": {"limits": {"nvidia.com/gpu": 1}}}
    template = {"restartPolicy": "Never", "containers": [container], "nodeSelector": {"kubernetes.io/hostname": "l4-1"}, **spec}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": namespace},
            "spec": {"backoffLimit": 0, "template": {"spec": template}}}


def job_pod_phase(cluster: Cluster, namespace: str, job: str) -> str | None:
    found = [p for p in pods(cluster.api, namespace, f"job-name={job}")]
    return found[0]["status"].get("phase") if found else None


def test_a_gpu_pod_on_runc_gets_no_gpu_and_nvidia_smi_fails(cluster: Cluster, namespace: str) -> None:
    """runc is containerd's default on these nodes and the device plugin hands GPUs over as
    NVIDIA_VISIBLE_DEVICES (envvar), which only the NVIDIA runtime reads."""
    apply(cluster, smoke_job("runc", namespace))
    wait_for(lambda: job_pod_phase(cluster, namespace, "runc") == "Failed", WAIT_SECONDS,
             lambda: describe(cluster.api, pods(cluster.api, namespace)))
    (failed,) = pods(cluster.api, namespace, "job-name=runc")
    terminated = failed["status"]["containerStatuses"][0]["state"]["terminated"]
    assert terminated["reason"] == "StartError" and 'exec: "nvidia-smi": executable file not found' in terminated["message"]
    apply(cluster, smoke_job("nvidia", namespace, runtimeClassName="nvidia"))
    wait_for(lambda: job_pod_phase(cluster, namespace, "nvidia") == "Succeeded", WAIT_SECONDS,
             lambda: describe(cluster.api, pods(cluster.api, namespace)))


def node_labels(cluster: Cluster, name: str) -> dict[str, str]:
    return cluster.api.get(f"/api/v1/nodes/{name}")["metadata"]["labels"]


def test_nfd_names_pci_labels_as_its_rendered_config_says(cluster: Cluster) -> None:
    """deviceLabelFields [vendor] and the classes 0300/0302: pci-10de on GPU nodes, the BMC's
    VGA (1a03, class 0300) everywhere, no class_vendor names."""
    for node in cluster.nodes:
        labels = node_labels(cluster, node.name)
        pci = sorted(k for k in labels if k.startswith("feature.node.kubernetes.io/pci-"))
        expected = ["feature.node.kubernetes.io/pci-1a03.present"]
        if node.machine.gpus:
            expected = ["feature.node.kubernetes.io/pci-10de.present", *expected]
        assert pci == expected, (node.name, pci)


def test_a_node_feature_rule_labels_only_the_nodes_whose_devices_match(cluster: Cluster) -> None:
    def rule(name: str, vendor: str) -> dict[str, Any]:
        return {"apiVersion": "nfd.k8s-sigs.io/v1alpha1", "kind": "NodeFeatureRule", "metadata": {"name": name},
                "spec": {"rules": [{"name": name, "labels": {f"example.com/{name}": "true"}, "matchFeatures": [
                    {"feature": "pci.device", "matchExpressions": {"vendor": {"op": "In", "value": [vendor]},
                                                                   "class": {"op": "In", "value": ["0302"]}}}]}]}}
    apply(cluster, rule("nvidia-3d", "10de"), rule("other-3d", "1002"))
    gpu_nodes = {n.name for n in cluster.nodes if n.machine.gpus}
    wait_for(lambda: {n.name for n in cluster.nodes if node_labels(cluster, n.name).get("example.com/nvidia-3d")} == gpu_nodes,
             WAIT_SECONDS, lambda: "NodeFeatureRule nvidia-3d not applied to the GPU nodes")
    assert not any("example.com/other-3d" in node_labels(cluster, n.name) for n in cluster.nodes)


def test_the_device_plugin_and_gfd_follow_the_node_config(cluster: Cluster) -> None:
    """The L4 nodes take config l4 (time-slicing, 4 replicas, not renamed); the L40S nodes the default."""
    for node in cluster.nodes:
        labels = node_labels(cluster, node.name)
        allocatable = cluster.api.get(f"/api/v1/nodes/{node.name}")["status"]["allocatable"]
        if node.pool == "l4":
            assert allocatable.get("nvidia.com/gpu") == "4"
            assert labels["nvidia.com/gpu.product"] == "NVIDIA-L4-SHARED"
            assert labels["nvidia.com/gpu.sharing-strategy"] == "time-slicing"
        elif node.pool == "l40s":
            assert allocatable.get("nvidia.com/gpu") == "4"
            assert labels["nvidia.com/gpu.product"] == "NVIDIA-L40S"


def test_a_node_naming_a_missing_device_plugin_config_fails_config_manager(cluster: Cluster, namespace: str) -> None:
    """A copy of the plugin's pod on a node labelled with a config the ConfigMap lacks: its init
    container exits with config-manager's words; on a node naming one it has, it runs."""
    (plugin,) = [p for p in pods(cluster.api, "kube-system") if p["spec"].get("nodeName") == "l40s-0"
                 and "device-plugin" in p["metadata"]["name"] and "gpu-feature" not in p["metadata"]["name"]]
    cluster.api.merge_patch("/api/v1/nodes/l40s-1", {"metadata": {"labels": {"nvidia.com/device-plugin.config": "missing"}}})
    try:
        spec = {k: v for k, v in plugin["spec"].items() if k not in ("nodeName", "affinity")}
        copy = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "plugin-copy", "namespace": "kube-system"},
                "spec": {**spec, "nodeName": "l40s-1"}}
        apply(cluster, copy)
        refused(cluster, "kube-system", "plugin-copy", "specified config missing does not exist")
        twin = {**copy, "metadata": {"name": "plugin-twin", "namespace": "kube-system"}, "spec": {**spec, "nodeName": "l4-2"}}
        apply(cluster, twin)
        ready(cluster, "kube-system", "plugin-twin")
    finally:
        cluster.api.merge_patch("/api/v1/nodes/l40s-1", {"metadata": {"labels": {"nvidia.com/device-plugin.config": None}}})
        for name in ("plugin-copy", "plugin-twin"):
            cluster.api.request("DELETE", f"/api/v1/namespaces/kube-system/pods/{name}")
