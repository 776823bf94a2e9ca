"""The node agents and kubelet refusals the installed-stack tests do not reach, each both ways, on
a node built here (no control plane): the GPU Operator's operands and their tolerations, its
driver on a read-only root, the MIG manager's profiles, HAMi's split, a DRA plugin's slice, Fabric
Manager on NVSwitch boards. NVIDIA's own parsers run (tests/cluster/agents/nvidia_config.py)."""

from __future__ import annotations

from typing import Any

import pytest

from gpustack.spec.gpu_catalogue import load_catalogue
from tests.cluster import refusals
from tests.cluster.agents import dra, hami, mig
from tests.cluster.agents import node as node_agents
from tests.cluster.agents.world import NodeMemory, Published, World
from tests.cluster.host import Host
from tests.cluster.nodes import FakeNode, gpu_machine

pytestmark = pytest.mark.cluster

RUNNING = {"phase": "Running", "containerStatuses": [{"ready": True}]}
GPU_TAINT = {"key": "nvidia.com/gpu", "effect": "NoSchedule"}
MIG_CONFIG = ("version: v1\nmig-configs:\n  all-disabled:\n  - devices: all\n    mig-enabled: false\n"
              "  h100-small:\n  - devices: all\n    mig-enabled: true\n    mig-devices:\n      1g.10gb: 7\n"
              "  a100-profile:\n  - devices: all\n    mig-enabled: true\n    mig-devices:\n      1g.5gb: 7\n")


def model(name: str) -> Any:
    found = load_catalogue().resolve(name)
    assert found is not None
    return found[1]


def machine_node(gpu: str, count: int, host: Host) -> FakeNode:
    return FakeNode("n-0", "p", gpu_machine(model(gpu), count), host, {"cpu": "64", "memory": "512Gi"})


def pod(name: str, image: str, command: list[str], namespace: str = "gpu-operator", **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": namespace},
            "spec": {"containers": [{"name": "main", "image": image, "command": command}], **spec}, "status": RUNNING}


def operator_world(node: FakeNode, policy: dict[str, Any], labels: dict[str, str] | None = None,
                   configmaps: dict[tuple[str, str], dict[str, str]] | None = None) -> World:
    operator = pod("gpu-operator-7d9", "nvcr.io/nvidia/gpu-operator:v26.7.0", ["gpu-operator"])
    return World(node, {"feature.node.kubernetes.io/pci-10de.present": "true", **(labels or {})}, [], [operator],
                 configmaps or {}, {"ClusterPolicy": [{"spec": policy}]}, NodeMemory())


TOLERATING = {"daemonsets": {"tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]}}


def test_the_operators_operands_act_only_on_nodes_whose_taints_they_tolerate() -> None:
    tainted = machine_node("L4", 1, Host(driver=True, taints=[GPU_TAINT]))
    served = node_agents.publish(operator_world(tainted, {**TOLERATING, "driver": {"enabled": False}}))
    assert served.resources == {"nvidia.com/gpu": 1} and "nvidia" in served.runtimes
    shunned = node_agents.publish(operator_world(tainted, {"daemonsets": {"tolerations": []}, "driver": {"enabled": False}}))
    assert not shunned.resources and any("taints" in p for p in shunned.problems)


def test_the_operators_driver_cannot_install_on_a_read_only_root() -> None:
    talos = machine_node("L4", 1, Host(read_only=True))
    published = node_agents.publish(operator_world(talos, TOLERATING))
    assert not published.driver and not published.resources
    assert any("read-only" in p for p in published.problems)
    ubuntu = node_agents.publish(operator_world(machine_node("L4", 1, Host()), TOLERATING))
    assert ubuntu.driver and ubuntu.resources == {"nvidia.com/gpu": 1}


def test_the_mig_manager_applies_profiles_the_gpu_has_and_fails_others() -> None:
    h100 = machine_node("H100-80GB-SXM", 2, Host(driver=True))
    policy = {**TOLERATING, "driver": {"enabled": False}, "mig": {"strategy": "mixed"},
              "migManager": {"enabled": True, "config": {"name": "mig-parted", "default": "all-disabled"}}}
    configmaps = {("gpu-operator", "mig-parted"): {"config.yaml": MIG_CONFIG}}
    applied = node_agents.publish(operator_world(h100, policy, {mig.CONFIG_LABEL: "h100-small"}, configmaps))
    assert applied.labels[mig.STATE_LABEL] == "success"
    assert applied.resources == {"nvidia.com/mig-1g.10gb": 14}
    refused = node_agents.publish(operator_world(h100, policy, {mig.CONFIG_LABEL: "a100-profile"}, configmaps))
    assert refused.labels[mig.STATE_LABEL] == "failed"
    missing = node_agents.publish(operator_world(h100, policy, {mig.CONFIG_LABEL: "absent"}, configmaps))
    assert missing.labels[mig.STATE_LABEL] == "failed"


def test_hami_splits_each_gpu_as_its_mounted_config_says() -> None:
    node = machine_node("L4", 2, Host(driver=True))
    plugin = pod("hami-device-plugin-x", "docker.io/projecthami/hami:v2.10.0",
                 ["nvidia-device-plugin", "--config-file=/device-config.yaml"], namespace="kube-system",
                 volumes=[{"name": "device-config", "configMap": {"name": "hami-scheduler-device"}}])
    plugin["spec"]["containers"][0]["volumeMounts"] = [
        {"name": "device-config", "mountPath": "/device-config.yaml", "subPath": "device-config.yaml"}]
    config = {("kube-system", "hami-scheduler-device"): {"device-config.yaml": "nvidia:\n  deviceSplitCount: 5\n"}}
    world = World(node, {}, [plugin], [plugin], config, {}, NodeMemory(), driver_loaded=True)
    out = Published()
    hami.publish(world, out)
    assert out.resources["nvidia.com/gpu"] == 10 and out.resources["nvidia.com/gpucores"] == 200
    idle = World(node, {}, [], [], config, {}, NodeMemory(), driver_loaded=True)
    nothing = Published()
    hami.publish(idle, nothing)
    assert not nothing.resources


def test_a_dra_plugin_publishes_its_slice_only_while_it_runs_on_a_node_with_a_driver() -> None:
    plugin = pod("hami-dra-driver-kubelet-plugin-x", "projecthami/k8s-dra-driver:v0.1.0", ["bash", "-c", "start"],
                 namespace="hami-dra-driver")
    for loaded, expected in ((True, 1), (False, 0)):
        node = machine_node("L4", 1, Host(driver=loaded))
        out = Published()
        dra.publish(World(node, {}, [plugin], [plugin], {}, {}, NodeMemory(), driver_loaded=loaded), out)
        assert len(out.slices.get("hami-core-gpu.project-hami.io", [])) == expected


def gpu_pod() -> dict[str, Any]:
    return {"metadata": {"name": "cuda", "namespace": "default"},
            "spec": {"runtimeClassName": "nvidia", "containers": [
                {"name": "cuda", "image": "nvcr.io/nvidia/cuda:13.0.1-base-ubuntu24.04", "command": ["nvidia-smi"],
                 "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}


def test_a_gpu_container_on_an_nvswitch_board_needs_fabric_manager() -> None:
    """An HGX H100 8-GPU board: CUDA does not start until Fabric Manager trained the NVLink fabric."""
    for fabric_manager, fails in ((False, True), (True, False)):
        node = machine_node("H100-80GB-SXM", 8, Host(driver=True, runtimes={"runc", "nvidia"}, fabric_manager=fabric_manager))
        assert node.machine.nvswitches() == 4
        view = refusals.Node(node, Published(injection={"envvar"}), {"nvidia": "nvidia"}, {}, {})
        pod_ = gpu_pod()
        end = refusals.run(pod_, pod_["spec"]["containers"][0], view, lambda *args: None)
        assert (end is not None and "802" in end.message) is fails


def test_a_pcie_gpu_needs_no_fabric_manager() -> None:
    node = machine_node("L4", 8, Host(driver=True, runtimes={"runc", "nvidia"}))
    assert node.machine.nvswitches() == 0
    pod_ = gpu_pod()
    # NVIDIA's device plugin, at its default strategy, gave the pod its GPU (tests/cluster/toolkit.py)
    view = refusals.Node(node, Published(injection={"envvar"}), {"nvidia": "nvidia"}, {}, {})
    assert refusals.run(pod_, pod_["spec"]["containers"][0], view,
                        lambda *args: None) is None

