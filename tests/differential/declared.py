"""Node states the scheduler differential declares for a scenario's spec: the labels, taints,
allocatable resources and DRA devices the node agents would publish for each pool's GPUs, as
the spec means them. tests/differential judges the linter against the scheduler for a given
cluster state, so it states that state directly; the cluster tier's own nodes
(tests/cluster/nodes.py) carry only hardware and host facts and get the rest from agents.

Where each piece comes from on a real cluster:

- ``feature.node.kubernetes.io/pci-*.present``: Node Feature Discovery's PCI source,
  https://kubernetes-sigs.github.io/node-feature-discovery/stable/usage/features.html#pci
  (``pci-0302_10de`` by default, ``pci-10de`` with ``deviceLabelFields: [vendor]``; both are put
  here and tests/differential/cluster.py keeps the one gpustack's NFD config gives).
- ``nvidia.com/gpu.*``, ``nvidia.com/cuda.*``, ``nvidia.com/mig*``: GPU Feature Discovery,
  https://github.com/NVIDIA/k8s-device-plugin/blob/main/docs/gpu-feature-discovery/README.md
- ``nvidia.com/gpu`` and ``nvidia.com/mig-<profile>`` (mixed strategy), time-slicing replicas:
  the device plugin, https://github.com/NVIDIA/k8s-device-plugin#shared-access-to-gpus
- ``nvidia.com/gpu``, ``nvidia.com/gpumem``, ``nvidia.com/gpucores``: HAMi's device plugin,
  https://github.com/Project-HAMi/HAMi/blob/master/docs/config.md
- DRA devices: tests/cluster/agents/dra.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from gpustack.spec.gpu_catalogue import GpuModel
from gpustack.spec.models import GpuStack
from gpustack.spec.models.cluster import NodePool, SystemPool, TimeSlicing
from gpustack.spec.partitioning import mig_slices, pool_mig_strategy, pool_sharing
from tests.cluster.agents import dra
from tests.cluster.agents.device_plugin import CUDA_VERSION, DEFAULT_DRIVER
from tests.cluster.nodes import GPU_NODE, POOL_LABEL, SYSTEM_NODE
from tests.cluster.spec import gpu_model

DRA_DRIVERS = {"nvidia": "gpu.nvidia.com", "hami": "hami-core-gpu.project-hami.io"}


@dataclass
class DeclaredNode:
    name: str
    pool: str
    labels: dict[str, str]
    taints: list[dict[str, str]]
    allocatable: dict[str, str]
    gpus: list[dict[str, Any]] = field(default_factory=list)  # DRA devices, when the stack uses DRA


def stack_nodes(stack: GpuStack) -> list[DeclaredNode]:
    """Every node of every pool: GPU pools, then system pools."""
    result = [node for pool in stack.spec.nodePools for node in _gpu_pool(stack, pool)]
    result += [node for pool in stack.spec.systemPools for node in _system_pool(pool)]
    return result


def _taints(pool: NodePool | SystemPool) -> list[dict[str, str]]:
    return [{k: v for k, v in taint.model_dump().items() if v is not None} for taint in pool.taints]


def _system_pool(pool: SystemPool) -> Iterator[DeclaredNode]:
    for index in range(pool.count):
        yield DeclaredNode(f"{pool.name}-{index}", pool.name, {**pool.labels, POOL_LABEL: pool.name},
                       _taints(pool), dict(SYSTEM_NODE))


def _gpu_pool(stack: GpuStack, pool: NodePool) -> Iterator[DeclaredNode]:
    model = gpu_model(pool)
    labels = {POOL_LABEL: pool.name, **gpu_labels(stack, pool, model), **pool.labels}
    resources = {**GPU_NODE, **{k: str(v) for k, v in gpu_resources(stack, pool, model).items()}}
    for index in range(pool.count):
        name = f"{pool.name}-{index}"
        driver = DRA_DRIVERS[stack.spec.dra.driver]
        gpus = ([dra.device(driver, model, name, i, pool.driver.version or DEFAULT_DRIVER) for i in range(pool.gpu.count)]
                if stack.spec.dra.enabled else [])
        yield DeclaredNode(name, pool.name, dict(labels), _taints(pool), dict(resources), gpus)


def gpu_labels(stack: GpuStack, pool: NodePool, model: GpuModel) -> dict[str, str]:
    """NFD's, the NFD rule's and GFD's labels for a node of ``pool``."""
    driver = (pool.driver.version or DEFAULT_DRIVER).split(".")
    compute = model.computeCapability.split(".")
    cuda = CUDA_VERSION.split(".")
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
