"""The harness's nodes as machines: their hardware and what their host steps gave them, nothing more.

A node starts with its PCI devices (the GPUs' vendor, class and device ids from the GPU
catalogue, ``specs/gpus.yaml``; the NVSwitch chips of an HGX board; the BMC's VGA controller
that servers carry), its CPU and memory, and the host facts its rendered cluster config and host
steps establish (tests/cluster/host.py): registration labels and taints, driver, containerd
runtime handlers, read-only paths. No GPU label, extended resource or ResourceSlice is put here:
those come from the node agents' pods once they run (tests/cluster/agents/).

The spec names only the inventory: how many nodes each pool has, and which GPU, how many.
"""

from __future__ import annotations

import datetime
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from gpustack.spec.gpu_catalogue import GpuModel
from gpustack.spec.models import GpuStack
from tests.cluster.api import Api
from tests.cluster.host import Host, host_facts
from tests.cluster.spec import gpu_model

# Marks the harness's nodes with their pool; not a label any real agent sets.
POOL_LABEL = "cluster.gpustack.test/pool"
GPU_NODE = {"cpu": "64", "memory": "512Gi"}
SYSTEM_NODE = {"cpu": "16", "memory": "64Gi"}
# K3s and Talos run their own containerd 2 (K3s from v1.31.6+k3s1, https://docs.k3s.io/advanced;
# Talos from v1.8), whose release their files do not name: a 2.x release such nodes report.
BUNDLED_CONTAINERD = "2.1.4"
# The BMC's VGA controller on server boards (ASPEED AST2500/2600, https://pci-ids.ucw.cz/read/PC/1a03/2000).
BMC_VGA = {"vendor": "1a03", "device": "2000", "class": "0300"}
# NVSwitch chips of the HGX 8-GPU boards: 6 on A100 boards (10de:1af1), 4 on H100/H200 boards
# (10de:22a3), PCI class 0680 (https://pci-ids.ucw.cz/read/PC/10de; Fabric Manager user guide,
# https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/).
NVSWITCHES = {"ampere": ("1af1", 6), "hopper": ("22a3", 4)}


@dataclass
class Machine:
    """A node's hardware: PCI devices (lspci -nn's ids) and the GPUs' own facts."""

    pci: list[dict[str, str]]
    gpu: GpuModel | None = None
    gpus: int = 0

    def nvswitches(self) -> int:
        return sum(1 for device in self.pci if device["class"] == "0680" and device["vendor"] == "10de")


@dataclass
class FakeNode:
    name: str
    pool: str
    machine: Machine
    host: Host
    allocatable: dict[str, str] = field(default_factory=dict)

    @property
    def labels(self) -> dict[str, str]:
        """The labels the node registers with (agents add theirs on the API server)."""
        return {**self.host.labels, POOL_LABEL: self.pool}

    @property
    def taints(self) -> list[dict[str, str]]:
        return self.host.taints


def gpu_machine(model: GpuModel, count: int) -> Machine:
    pci = [dict(BMC_VGA)] + [{"vendor": model.pciVendor, "device": model.pciDevice, "class": model.pciClass}] * count
    if model.on_nvswitch(count) and model.architecture in NVSWITCHES:
        device, chips = NVSWITCHES[model.architecture]
        pci += [{"vendor": "10de", "device": device, "class": "0680"}] * chips
    return Machine(pci, model, count)


def stack_nodes(stack: GpuStack, folder: Path) -> list[FakeNode]:
    """Every node of the spec's inventory, GPU pools then system pools, with the host facts of
    the rendered stack in ``folder``."""
    distribution = stack.spec.cluster.distribution
    result = []
    for pool in stack.spec.nodePools:
        model = gpu_model(pool)
        for index in range(pool.count):
            result.append(FakeNode(f"{pool.name}-{index}", pool.name, gpu_machine(model, pool.gpu.count),
                                   host_facts(folder, distribution, pool.name, True), dict(GPU_NODE)))
    for system in stack.spec.systemPools:
        for index in range(system.count):
            result.append(FakeNode(f"{system.name}-{index}", system.name, Machine([dict(BMC_VGA)]),
                                   host_facts(folder, distribution, system.name, False), dict(SYSTEM_NODE)))
    return result


def to_json(node: FakeNode) -> dict[str, Any]:
    """The node as the fake kubelet reads it from the state folder (``machines.json``)."""
    return {"name": node.name, "pool": node.pool, "pci": node.machine.pci, "gpus": node.machine.gpus,
            "gpu": node.machine.gpu.model_dump(mode="json") if node.machine.gpu else None,
            "host": {**asdict(node.host), "runtimes": sorted(node.host.runtimes)}, "allocatable": node.allocatable}


def from_json(data: dict[str, Any]) -> FakeNode:
    host = Host(**{**data["host"], "runtimes": set(data["host"]["runtimes"])})
    gpu = GpuModel.model_validate(data["gpu"]) if data["gpu"] else None
    return FakeNode(data["name"], data["pool"], Machine(data["pci"], gpu, data["gpus"]), host, data["allocatable"])


def node_object(name: str, labels: dict[str, str], taints: list[dict[str, str]], allocatable: dict[str, str],
                kubelet_version: str, address: str, *, os_image: str = "Ubuntu 24.04.3 LTS",
                containerd: str | None = None) -> dict[str, Any]:
    """The Node as its kubelet registers it; ``containerd``: the release the host steps install
    (host.py), else that of the distribution's own containerd 2 (K3s and Talos bundle one)."""
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    allocatable = {**allocatable, "pods": "110", "ephemeral-storage": "1Ti"}
    conditions = [{"type": kind, "status": "False", "reason": f"Kubelet Has No {kind}"}
                  for kind in ("MemoryPressure", "DiskPressure", "PIDPressure")]
    conditions.append({"type": "Ready", "status": "True", "reason": "KubeletReady"})
    for condition in conditions:
        condition |= {"lastHeartbeatTime": now, "lastTransitionTime": now, "reason": condition["reason"].replace(" ", "")}
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {
            "kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", **labels}},
        "spec": {"taints": taints} if taints else {},
        "status": {
            "capacity": allocatable, "allocatable": allocatable, "conditions": conditions,
            "addresses": [{"type": "InternalIP", "address": address}, {"type": "Hostname", "address": name}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "kubeletVersion": kubelet_version, "kubeProxyVersion": kubelet_version,
                "containerRuntimeVersion": f"containerd://{containerd or BUNDLED_CONTAINERD}", "operatingSystem": "linux", "architecture": "amd64",
                "osImage": os_image, "kernelVersion": "6.8.0-85-generic",
                "machineID": name, "systemUUID": name, "bootID": name,
            },
        },
    }


def create_node(api: Api, body: dict[str, Any]) -> None:
    """Create a node with its status and taints.

    The status is set again after the create, which may drop it; the taints too, since the
    TaintNodesByCondition admission plugin adds ``node.kubernetes.io/not-ready`` to every new
    node and only the node-lifecycle controller (off here) would take it away.
    """
    name = body["metadata"]["name"]
    api.create("/api/v1/nodes", body)
    api.merge_patch(f"/api/v1/nodes/{name}/status", {"status": body["status"]})
    api.merge_patch(f"/api/v1/nodes/{name}", {"spec": {"taints": body["spec"].get("taints") or None}})


def register(api: Api, found: list[FakeNode], kubelet_version: str, distribution: str) -> None:
    """Register the nodes as their kubelets would: registration labels and taints, CPU and memory."""
    os_image = "Talos (v1.13.0)" if distribution == "talos" else "Ubuntu 24.04.3 LTS"
    for number, node in enumerate(found):
        create_node(api, node_object(node.name, node.labels, node.taints, node.allocatable, kubelet_version,
                                     f"10.0.{number // 250}.{number % 250 + 1}", os_image=os_image,
                                     containerd=node.host.containerd))
