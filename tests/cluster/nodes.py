"""Fake nodes for a spec's pools: the labels, taints, allocatable resources and DRA
ResourceSlices that the real node agents would publish for each pool's GPUs.

Where each piece comes from on a real cluster:

- ``feature.node.kubernetes.io/pci-*.present``: Node Feature Discovery's PCI source,
  https://kubernetes-sigs.github.io/node-feature-discovery/stable/usage/features.html#pci
  (label name from ``deviceLabelFields``: ``[class, vendor]`` by default, ``pci-0302_10de``;
  ``[vendor]`` as gpustack's NFD values and the GPU Operator set it, ``pci-10de``). Both are
  put on the nodes, so a selector written for either configuration can be checked.
- ``nvidia.com/gpu.present``: set by the GPU Operator on every node it takes for a GPU node
  (https://github.com/NVIDIA/gpu-operator, ``controllers/state_manager.go``), and the manual
  override the device plugin chart's default node affinity accepts
  (https://github.com/NVIDIA/k8s-device-plugin, the chart's ``values.yaml``).
- ``nvidia.com/gpu.*``, ``nvidia.com/cuda.*``, ``nvidia.com/mig*``: GPU Feature Discovery,
  https://github.com/NVIDIA/k8s-device-plugin/blob/main/docs/gpu-feature-discovery/README.md
- ``nvidia.com/gpu`` and ``nvidia.com/mig-<profile>`` (mixed strategy), time-slicing replicas:
  the device plugin, https://github.com/NVIDIA/k8s-device-plugin#shared-access-to-gpus and
  https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/gpu-operator-mig.html
- ``nvidia.com/gpu``, ``nvidia.com/gpumem``, ``nvidia.com/gpucores``: HAMi's device plugin,
  https://github.com/Project-HAMi/HAMi/blob/master/docs/config.md
- ResourceSlices: NVIDIA's DRA driver (driver ``gpu.nvidia.com``, one pool per node, attributes
  ``type``, ``uuid``, ``index``, ``minor``, ``productName``, ``brand``, ``architecture``,
  ``cudaComputeCapability``, ``driverVersion``, ``cudaDriverVersion``; capacity ``memory``),
  https://github.com/NVIDIA/k8s-dra-driver-gpu/blob/main/cmd/gpu-kubelet-plugin/deviceinfo.go;
  HAMi's (driver ``hami-core-gpu.project-hami.io``, attribute ``type: hami-gpu``, consumable
  capacity ``cores`` and ``memory`` on devices allowing several allocations),
  https://github.com/Project-HAMi/k8s-dra-driver
"""

from __future__ import annotations

import datetime
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from gpustack.spec.gpu_catalogue import GpuModel
from gpustack.spec.models import GpuStack
from gpustack.spec.models.cluster import NodePool, SystemPool, TimeSlicing
from gpustack.spec.partitioning import mig_slices, pool_mig_strategy, pool_sharing
from tests.cluster.api import Api
from tests.cluster.spec import gpu_model

# Marks the harness's nodes with their pool; not a label any real agent sets.
POOL_LABEL = "cluster.gpustack.test/pool"
DRA_DRIVERS = {"nvidia": "gpu.nvidia.com", "hami": "hami-core-gpu.project-hami.io"}
DEFAULT_DRIVER = "595.84"
CUDA_DRIVER = "13.2"
GPU_NODE = {"cpu": "64", "memory": "512Gi"}
SYSTEM_NODE = {"cpu": "16", "memory": "64Gi"}


@dataclass
class FakeNode:
    name: str
    pool: str
    labels: dict[str, str]
    taints: list[dict[str, str]]
    allocatable: dict[str, str]
    gpus: list[dict[str, Any]] = field(default_factory=list)  # DRA devices, when the stack uses DRA


def stack_nodes(stack: GpuStack) -> list[FakeNode]:
    """Every node of every pool: GPU pools, then system pools."""
    result = [node for pool in stack.spec.nodePools for node in _gpu_pool(stack, pool)]
    result += [node for pool in stack.spec.systemPools for node in _system_pool(pool)]
    return result


def _taints(pool: NodePool | SystemPool) -> list[dict[str, str]]:
    return [{k: v for k, v in taint.model_dump().items() if v is not None} for taint in pool.taints]


def _system_pool(pool: SystemPool) -> Iterator[FakeNode]:
    for index in range(pool.count):
        yield FakeNode(f"{pool.name}-{index}", pool.name, {**pool.labels, POOL_LABEL: pool.name},
                       _taints(pool), dict(SYSTEM_NODE))


def _gpu_pool(stack: GpuStack, pool: NodePool) -> Iterator[FakeNode]:
    model = gpu_model(pool)
    labels = {POOL_LABEL: pool.name, **gpu_labels(stack, pool, model), **pool.labels}
    resources = {**GPU_NODE, **{k: str(v) for k, v in gpu_resources(stack, pool, model).items()}}
    for index in range(pool.count):
        name = f"{pool.name}-{index}"
        gpus = [_device(stack, pool, model, name, i) for i in range(pool.gpu.count)] if stack.spec.dra.enabled else []
        yield FakeNode(name, pool.name, dict(labels), _taints(pool), dict(resources), gpus)


def gpu_labels(stack: GpuStack, pool: NodePool, model: GpuModel) -> dict[str, str]:
    """NFD's, the NFD rule's and GFD's labels for a node of ``pool``."""
    driver = (pool.driver.version or DEFAULT_DRIVER).split(".")
    compute = model.computeCapability.split(".")
    cuda = CUDA_DRIVER.split(".")
    labels = {
        f"feature.node.kubernetes.io/pci-{model.pciVendor}.present": "true",
        f"feature.node.kubernetes.io/pci-{model.pciClass}_{model.pciVendor}.present": "true",
        "nvidia.com/gpu.present": "true",
        "nvidia.com/gpu.product": model.product,
        "nvidia.com/gpu.count": str(pool.gpu.count),
        "nvidia.com/gpu.memory": str(model.memoryMiB),
        "nvidia.com/gpu.family": model.architecture,
        "nvidia.com/gpu.compute.major": compute[0],
        "nvidia.com/gpu.compute.minor": compute[1],
        "nvidia.com/gpu.machine": "gpustack-fake-node",
        "nvidia.com/cuda.driver.major": driver[0],
        "nvidia.com/cuda.driver.minor": driver[1] if len(driver) > 1 else "0",
        "nvidia.com/cuda.driver.rev": driver[2] if len(driver) > 2 else "",
        "nvidia.com/cuda.runtime.major": cuda[0],
        "nvidia.com/cuda.runtime.minor": cuda[1],
        "nvidia.com/mig.capable": str(model.mig_capable).lower(),
        "nvidia.com/mps.capable": "false",
        "nvidia.com/gpu.replicas": "1",
        "nvidia.com/gpu.sharing-strategy": "none",
    }
    sharing = pool_sharing(stack, pool)
    if sharing.strategy != "none":
        labels["nvidia.com/gpu.replicas"] = str(sharing.replicas)
        labels["nvidia.com/gpu.sharing-strategy"] = "time-slicing" if isinstance(sharing, TimeSlicing) else "mps"
        if not sharing.renameByDefault:
            labels["nvidia.com/gpu.product"] = f"{model.product}-SHARED"
    strategy = pool_mig_strategy(stack, pool)
    if model.mig_capable and strategy != "none":
        labels["nvidia.com/mig.strategy"] = strategy
    if pool.mig is not None:
        labels["nvidia.com/mig.config.state"] = "success"  # the GPU Operator's MIG manager, once applied
        for profile, per_gpu in pool.mig.layout.items():
            slices = mig_slices(profile, model)
            prefix = f"nvidia.com/mig-{profile}"
            labels |= {f"{prefix}.count": str(per_gpu * pool.gpu.count), f"{prefix}.product": f"{model.product}-MIG-{profile}"}
            if slices:
                labels |= {f"{prefix}.slices.gi": str(slices[0]), f"{prefix}.slices.ci": str(slices[0])}
    return labels


def _advertises_gpus(stack: GpuStack) -> bool:
    """Whether a device plugin (NVIDIA's, the operator's or HAMi's) advertises GPUs."""
    return stack.spec.devicePlugin.enabled or stack.spec.gpuOperator.enabled or stack.spec.sharing.hami.enabled


def _hami_pool(stack: GpuStack, pool: NodePool) -> bool:
    hami = stack.spec.sharing.hami
    return hami.enabled and (hami.pools is None or pool.name in hami.pools)


def gpu_resources(stack: GpuStack, pool: NodePool, model: GpuModel) -> dict[str, int]:
    """Allocatable extended resources of a node of ``pool`` as its device plugin advertises them."""
    count = pool.gpu.count
    if _hami_pool(stack, pool):
        hami = stack.spec.sharing.hami
        return {"nvidia.com/gpu": count * hami.splitCount,
                "nvidia.com/gpumem": int(count * model.memoryMiB * hami.memoryScaling),
                "nvidia.com/gpucores": int(count * 100 * hami.coreScaling)}
    if not _advertises_gpus(stack):
        return {}
    if pool.mig is not None and pool.mig.strategy == "mixed":
        return {f"nvidia.com/mig-{profile}": n * count for profile, n in pool.mig.layout.items()}
    if pool.mig is not None:  # single: every GPU split the same way, each instance an nvidia.com/gpu
        return {"nvidia.com/gpu": count * sum(pool.mig.layout.values())}
    sharing = pool_sharing(stack, pool)
    if sharing.strategy == "none":
        return {"nvidia.com/gpu": count}
    resource = "nvidia.com/gpu.shared" if sharing.renameByDefault else "nvidia.com/gpu"
    return {resource: count * sharing.replicas}


def _device(stack: GpuStack, pool: NodePool, model: GpuModel, node: str, index: int) -> dict[str, Any]:
    """One GPU as the stack's DRA driver lists it in its ResourceSlice."""
    driver_version = ".".join(((pool.driver.version or DEFAULT_DRIVER).split(".") + ["0", "0"])[:3])
    attributes = {
        "uuid": {"string": f"GPU-{uuid.uuid5(uuid.NAMESPACE_DNS, f'{node}.{index}')}"},
        "index": {"int": index},
        "minor": {"int": index},
        "productName": {"string": model.product.replace("-", " ")},
        "brand": {"string": "Nvidia"},
        "architecture": {"string": model.architecture.replace("-", " ").title()},
        "cudaComputeCapability": {"version": f"{model.computeCapability}.0"},
        "driverVersion": {"version": driver_version},
        "cudaDriverVersion": {"version": f"{CUDA_DRIVER}.0"},
    }
    memory = {"value": f"{model.memoryMiB}Mi"}
    if stack.spec.dra.driver == "nvidia":
        return {"name": f"gpu-{index}", "attributes": {"type": {"string": "gpu"}, **attributes},
                "capacity": {"memory": memory}}
    return {"name": f"gpu-{index}", "attributes": {"type": {"string": "hami-gpu"}, **attributes},
            "capacity": {"cores": {"value": "100"}, "memory": memory}, "allowMultipleAllocations": True}


def node_object(node: FakeNode, kubelet_version: str, address: str) -> dict[str, Any]:
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    allocatable = {**node.allocatable, "pods": "110", "ephemeral-storage": "1Ti"}
    conditions = [{"type": kind, "status": "False", "reason": f"Kubelet Has No {kind}"}
                  for kind in ("MemoryPressure", "DiskPressure", "PIDPressure")]
    conditions.append({"type": "Ready", "status": "True", "reason": "KubeletReady"})
    for condition in conditions:
        condition |= {"lastHeartbeatTime": now, "lastTransitionTime": now, "reason": condition["reason"].replace(" ", "")}
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": node.name, "labels": {
            "kubernetes.io/hostname": node.name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
            **node.labels}},
        "spec": {"taints": node.taints} if node.taints else {},
        "status": {
            "capacity": allocatable, "allocatable": allocatable, "conditions": conditions,
            "addresses": [{"type": "InternalIP", "address": address}, {"type": "Hostname", "address": node.name}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "kubeletVersion": kubelet_version, "kubeProxyVersion": kubelet_version,
                "containerRuntimeVersion": "containerd://2.1.4", "operatingSystem": "linux", "architecture": "amd64",
                "osImage": "Ubuntu 24.04.3 LTS", "kernelVersion": "6.8.0-85-generic",
                "machineID": node.name, "systemUUID": node.name, "bootID": node.name,
            },
        },
    }


def resource_slice(node: FakeNode, driver: str) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
        "metadata": {"name": f"{node.name}-{driver}"},
        "spec": {"driver": driver, "nodeName": node.name,
                 "pool": {"name": node.name, "generation": 1, "resourceSliceCount": 1}, "devices": node.gpus},
    }


def register(api: Api, stack: GpuStack, kubelet_version: str) -> list[FakeNode]:
    """Create the stack's nodes and their ResourceSlices.

    The status is set again after the create, which may drop it; the taints too, since the
    TaintNodesByCondition admission plugin adds ``node.kubernetes.io/not-ready`` to every new
    node and only the node-lifecycle controller (off here) would take it away.
    """
    result = stack_nodes(stack)
    for number, node in enumerate(result):
        body = node_object(node, kubelet_version, f"10.0.{number // 250}.{number % 250 + 1}")
        api.create("/api/v1/nodes", body)
        api.merge_patch(f"/api/v1/nodes/{node.name}/status", {"status": body["status"]})
        api.merge_patch(f"/api/v1/nodes/{node.name}", {"spec": {"taints": node.taints or None}})
        if node.gpus:
            api.create("/apis/resource.k8s.io/v1/resourceslices",
                       resource_slice(node, DRA_DRIVERS[stack.spec.dra.driver]))
    return result
