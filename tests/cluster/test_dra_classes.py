"""gpustack's DeviceClasses on the real scheduler: a node of NVIDIA's DRA driver with whole GPUs
and the MIG devices of another GPU, shaped as the driver publishes them
(https://github.com/NVIDIA/k8s-dra-driver-gpu/blob/main/cmd/gpu-kubelet-plugin/deviceinfo.go:
``GpuInfo.GetDevice`` type gpu; ``MigDeviceInfo.GetDevice`` type mig with profile and parentUUID,
and the parent's productName). The class for whole GPUs is never allocated a MIG device, the MIG
class only devices of its profile, and a class without a type (what GS045 reports) is handed
whole GPUs and MIG devices alike.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gpustack import charts
from gpustack.render.components import dra
from gpustack.spec.models.components import DeviceClassSpec
from tests.cluster import deploy
from tests.cluster.agents import dra as dra_agent
from tests.cluster.support import WAIT_SECONDS, Cluster, describe, pods, scheduling_message, start, wait_for

pytestmark = pytest.mark.cluster

SPEC = Path(__file__).parent / "specs" / "dra-nvidia.yaml"
NODE = "h100-0"
DRIVER = "gpu.nvidia.com"
PRODUCT = "NVIDIA H100 80GB HBM3"
BY_PRODUCT = f"device.attributes['{DRIVER}'].productName == '{PRODUCT}'"
# The MIG devices of GPU 2 in the driver's naming (gpu-<minor>-mig-<gi profile id>-<start>-<size>):
# two 1g.10gb and one 3g.40gb, H100's GPU-instance profile ids 19 and 9.
MIG_DEVICES = [("gpu-2-mig-19-0-1", "1g.10gb", "10Gi"), ("gpu-2-mig-19-1-1", "1g.10gb", "10Gi"),
               ("gpu-2-mig-9-4-4", "3g.40gb", "40Gi")]
_numbers = itertools.count()


def mig_device(name: str, profile: str, memory: str) -> dict[str, Any]:
    parent = "GPU-2c2c2c2c-0000-0000-0000-000000000002"
    attributes = {
        "type": {"string": "mig"},
        "uuid": {"string": f"MIG-{name}"},
        "parentUUID": {"string": parent},
        "profile": {"string": profile},
        "productName": {"string": PRODUCT},
        "brand": {"string": "Nvidia"},
        "architecture": {"string": "Hopper"},
        "cudaComputeCapability": {"version": "9.0.0"},
        "driverVersion": {"version": "595.84.0"},
        "cudaDriverVersion": {"version": "13.2.0"},
    }
    return {"name": name, "attributes": attributes, "capacity": {"memory": {"value": memory}}}


def classes() -> list[dict[str, Any]]:
    chart = charts.dra_driver_chart("nvidia")
    typed = [
        dra.device_class(DeviceClassSpec(name="h100.gpustack.io", selectors=[BY_PRODUCT]), chart),
        dra.device_class(DeviceClassSpec(name="h100-1g.gpustack.io", selectors=[BY_PRODUCT], migProfile="1g.10gb"), chart),
    ]
    untyped = {"apiVersion": dra.API_VERSION, "kind": "DeviceClass", "metadata": {"name": "untyped.example.com"},
               "spec": {"selectors": [{"cel": {"expression": f"device.driver == '{DRIVER}' && {BY_PRODUCT}"}}]}}
    return [*typed, untyped]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    generator = start(SPEC, tmp_path_factory.mktemp("dra-classes") / "state")
    found = next(generator)
    # The node's state is declared here, as the driver's kubelet plugin would publish it (NVIDIA's
    # chart is not among the packaged charts the tier installs): its whole GPUs, and the MIG
    # devices of GPU 2 in a pool of their own.
    (node,) = [n for n in found.nodes if n.name == NODE]
    assert node.machine.gpu is not None
    whole = [dra_agent.device(DRIVER, node.machine.gpu, NODE, index) for index in range(node.machine.gpus)]
    found.api.create("/apis/resource.k8s.io/v1/resourceslices", {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{NODE}-gpus"},
        "spec": {"driver": DRIVER, "nodeName": NODE, "pool": {"name": NODE, "generation": 1, "resourceSliceCount": 1},
                 "devices": whole},
    })
    found.api.create("/apis/resource.k8s.io/v1/resourceslices", {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{NODE}-mig"},
        "spec": {"driver": DRIVER, "nodeName": NODE, "pool": {"name": f"{NODE}-mig", "generation": 1,
                                                              "resourceSliceCount": 1},
                 "devices": [mig_device(*device) for device in MIG_DEVICES]},
    })
    deploy.Applier(found.kubectl, found.kubeconfig).apply(classes(), "DeviceClasses")
    yield found
    generator.close()


@pytest.fixture
def namespace(cluster: Cluster) -> Iterator[str]:
    name = f"dra-{next(_numbers)}"
    cluster.api.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    yield name
    cluster.api.delete(f"/api/v1/namespaces/{name}/pods")
    wait_for(lambda: not pods(cluster.api, name), WAIT_SECONDS, lambda: describe(cluster.api, pods(cluster.api, name)))
    cluster.api.delete(f"/apis/resource.k8s.io/v1/namespaces/{name}/resourceclaims")
    wait_for(lambda: not cluster.api.items(f"/apis/resource.k8s.io/v1/namespaces/{name}/resourceclaims"),
             WAIT_SECONDS, lambda: f"claims of {name} not gone")


def claim_pods(cluster: Cluster, namespace: str, device_class: str, users: int, count: int = 1) -> list[str]:
    """``users`` pods, each with a ResourceClaim of ``count`` devices of ``device_class``."""
    objects: list[dict[str, Any]] = []
    for number in range(users):
        name = f"user-{number}"
        objects.append({"apiVersion": dra.API_VERSION, "kind": "ResourceClaim",
                        "metadata": {"name": name, "namespace": namespace},
                        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                            "deviceClassName": device_class, "allocationMode": "ExactCount", "count": count}}]}}})
        objects.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
                        "spec": {"resourceClaims": [{"name": "gpu", "resourceClaimName": name}],
                                 "containers": [{"name": "cuda", "image": "nvcr.io/nvidia/cuda:13.0.1-base-ubuntu24.04",
                                                 "resources": {"claims": [{"name": "gpu"}]}}]}})
    deploy.Applier(cluster.kubectl, cluster.kubeconfig).apply(objects, f"claims of {device_class}")
    return [f"user-{n}" for n in range(users)]


def allocated(cluster: Cluster, namespace: str, name: str) -> list[str] | None:
    claim = cluster.api.get(f"/apis/resource.k8s.io/v1/namespaces/{namespace}/resourceclaims/{name}")
    allocation = claim.get("status", {}).get("allocation")
    return [r["device"] for r in allocation["devices"]["results"]] if allocation else None


def settle(cluster: Cluster, namespace: str, names: list[str], expected: int) -> dict[str, list[str]]:
    """The devices of each allocated claim, once ``expected`` are allocated and the rest Pending
    with the scheduler's "cannot allocate all claims"."""
    def done() -> dict[str, list[str]] | None:
        found = {n: devices for n in names if (devices := allocated(cluster, namespace, n))}
        return found if len(found) == expected else None

    found = wait_for(done, WAIT_SECONDS, lambda: describe(cluster.api, pods(cluster.api, namespace)))
    for name in set(names) - set(found):
        pending = cluster.api.get(f"/api/v1/namespaces/{namespace}/pods/{name}")
        wait_for(lambda: "cannot allocate all claims" in scheduling_message(cluster.api, pending), WAIT_SECONDS,
                 lambda: scheduling_message(cluster.api, pending))
    return found


def test_the_whole_gpu_class_gets_whole_gpus_only(cluster: Cluster, namespace: str) -> None:
    names = claim_pods(cluster, namespace, "h100.gpustack.io", users=3)
    found = settle(cluster, namespace, names, expected=2)  # three MIG devices are free: none is taken
    assert sorted(d for devices in found.values() for d in devices) == ["gpu-0", "gpu-1"]


def test_the_mig_class_gets_its_profile_only(cluster: Cluster, namespace: str) -> None:
    names = claim_pods(cluster, namespace, "h100-1g.gpustack.io", users=3)
    found = settle(cluster, namespace, names, expected=2)  # the 3g.40gb and two whole GPUs stay free
    assert sorted(d for devices in found.values() for d in devices) == ["gpu-2-mig-19-0-1", "gpu-2-mig-19-1-1"]


def test_a_class_without_a_type_mixes_whole_gpus_and_mig_devices(cluster: Cluster, namespace: str) -> None:
    """What GS045 reports: five devices of the untyped class are two GPUs and three MIG slices."""
    names = claim_pods(cluster, namespace, "untyped.example.com", users=1, count=5)
    [devices] = settle(cluster, namespace, names, expected=1).values()
    assert sorted(devices) == ["gpu-0", "gpu-1", *sorted(d for d, _, _ in MIG_DEVICES)]
