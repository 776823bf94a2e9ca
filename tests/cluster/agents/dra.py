"""DRA kubelet plugins: a ResourceSlice per node, only while the driver's kubelet-plugin pod runs
there (on a node whose driver is loaded), listing the node's GPUs as the driver does.

- NVIDIA's (driver ``gpu.nvidia.com``, one pool per node, attributes ``type``, ``uuid``,
  ``index``, ``minor``, ``productName``, ``brand``, ``architecture``, ``cudaComputeCapability``,
  ``driverVersion``, ``cudaDriverVersion``; capacity ``memory``),
  https://github.com/NVIDIA/k8s-dra-driver-gpu/blob/main/cmd/gpu-kubelet-plugin/deviceinfo.go
- HAMi's (driver ``hami-core-gpu.project-hami.io``, attribute ``type: hami-gpu``, consumable
  capacity ``cores`` and ``memory`` on devices allowing several allocations),
  https://github.com/Project-HAMi/k8s-dra-driver/blob/main/cmd/hami-kubelet-plugin/hami_core.go
"""

from __future__ import annotations

import uuid
from typing import Any

from gpustack.spec.gpu_catalogue import GpuModel
from tests.cluster.agents.device_plugin import CUDA_VERSION, DEFAULT_DRIVER
from tests.cluster.agents.world import Published, World, image_has

# Marks the slices a running plugin published (the kubelet withdraws only those).
PUBLISHED_LABEL = "cluster.gpustack.test/published"
DRIVERS = {"k8s-dra-driver-gpu": "gpu.nvidia.com", "projecthami/k8s-dra-driver": "hami-core-gpu.project-hami.io"}


def _driver_of(pod: dict[str, Any]) -> str | None:
    return next((driver for image, driver in DRIVERS.items() if image_has(pod, image)), None)


def device(driver: str, model: GpuModel, node: str, index: int, driver_version: str = DEFAULT_DRIVER) -> dict[str, Any]:
    """One GPU as ``driver`` lists it in its ResourceSlice."""
    attributes = {
        "uuid": {"string": f"GPU-{uuid.uuid5(uuid.NAMESPACE_DNS, f'{node}.{index}')}"},
        "index": {"int": index},
        "minor": {"int": index},
        "productName": {"string": model.product.replace("-", " ")},
        "brand": {"string": "Nvidia"},
        "architecture": {"string": model.architecture.replace("-", " ").title()},
        "cudaComputeCapability": {"version": f"{model.computeCapability}.0"},
        "driverVersion": {"version": ".".join((driver_version.split(".") + ["0", "0"])[:3])},
        "cudaDriverVersion": {"version": f"{CUDA_VERSION}.0"},
    }
    memory = {"value": f"{model.memoryMiB}Mi"}
    if driver == "gpu.nvidia.com":
        return {"name": f"gpu-{index}", "attributes": {"type": {"string": "gpu"}, **attributes},
                "capacity": {"memory": memory}}
    return {"name": f"gpu-{index}", "attributes": {"type": {"string": "hami-gpu"}, **attributes},
            "capacity": {"cores": {"value": "100"}, "memory": memory}, "allowMultipleAllocations": True}


def resource_slice(node: str, driver: str, devices: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-{driver}", "labels": {PUBLISHED_LABEL: "true"}},
        "spec": {"driver": driver, "nodeName": node,
                 "pool": {"name": node, "generation": 1, "resourceSliceCount": 1}, "devices": devices},
    }


def publish(world: World, out: Published) -> None:
    machine = world.node.machine
    if machine.gpu is None or not world.driver_loaded:
        return
    for pod in world.running(lambda p: _driver_of(p) is not None):
        driver = _driver_of(pod)
        assert driver is not None
        out.slices[driver] = [device(driver, machine.gpu, world.node.name, i) for i in range(machine.gpus)]
        out.injection.add("cdi")
