"""The field reports' pitfalls, reproduced on a real scheduler: each stays Pending (or never
completes) for the reason the scheduler gives, and its fix runs.

The cluster (specs/pitfalls.yaml, its rendered stack installed: NFD, the GPU Operator with its MIG
manager) has datacenter GPUs only, both pools tainted: one L4 and one H100 split by MIG (mixed
strategy) into 1g.10gb and 3g.40gb instances, all labels and resources from the node agents.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cluster import deploy
from tests.cluster.deliver import installed
from tests.cluster.support import WAIT_SECONDS, Cluster, describe, new_namespace, pods, scheduling_message, wait_for

pytestmark = pytest.mark.cluster

SPEC = Path(__file__).parent / "specs" / "pitfalls.yaml"
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
IMAGE = "nvcr.io/nvidia/cuda:13.0.1-base-ubuntu24.04"
_numbers = itertools.count()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    yield from installed(SPEC, tmp_path_factory.mktemp("pitfalls") / "state")


@pytest.fixture
def namespace(cluster: Cluster) -> Iterator[str]:
    """A namespace of the test's own; its workloads and pods are gone before the next test."""
    name = new_namespace(cluster, f"pitfall-{next(_numbers)}")
    yield name
    cluster.api.delete(f"/apis/apps/v1/namespaces/{name}/deployments")
    cluster.api.delete(f"/api/v1/namespaces/{name}/pods")
    wait_for(lambda: not pods(cluster.api, name), WAIT_SECONDS, lambda: describe(cluster.api, pods(cluster.api, name)))


def gpu_pod_spec(resource: str = "nvidia.com/gpu", *, selector: dict[str, str] | None = None,
                 tolerate: bool = True) -> dict[str, Any]:
    return {
        "containers": [{"name": "cuda", "image": IMAGE, "resources": {"limits": {resource: 1}}}],
        **({"nodeSelector": selector} if selector else {}),
        **({"tolerations": [GPU_TOLERATION]} if tolerate else {}),
    }


def create_pod(cluster: Cluster, namespace: str, name: str, spec: dict[str, Any]) -> None:
    deploy.Applier(cluster.kubectl, cluster.kubeconfig).apply(
        [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace}, "spec": spec}],
        f"pod {name}")


def pod(cluster: Cluster, namespace: str, name: str) -> dict[str, Any]:
    return cluster.api.get(f"/api/v1/namespaces/{namespace}/pods/{name}")


def runs_on(cluster: Cluster, namespace: str, name: str) -> str:
    """The node the pod runs on, once Running (fails with the scheduler's words otherwise)."""
    def running() -> dict[str, Any] | None:
        current = pod(cluster, namespace, name)
        return current if current["status"].get("phase") == "Running" else None

    found = wait_for(running, WAIT_SECONDS, lambda: describe(cluster.api, [pod(cluster, namespace, name)]))
    return found["spec"]["nodeName"]


def stays_pending(cluster: Cluster, namespace: str, name: str, reason: str) -> str:
    """The scheduler's message for the pod, which must stay Pending and say ``reason``."""
    message = wait_for(lambda: reason in (m := scheduling_message(cluster.api, pod(cluster, namespace, name))) and m,
                       30, lambda: f"expected {reason!r}: " + describe(cluster.api, [pod(cluster, namespace, name)]))
    current = pod(cluster, namespace, name)
    assert current["status"].get("phase") == "Pending" and not current["spec"].get("nodeName"), message
    return message


def test_a_pci_0300_selector_leaves_a_gpu_pod_pending_on_datacenter_gpus(cluster: Cluster, namespace: str) -> None:
    """Datacenter GPUs are PCI class 0302 (3D controller), never 0300; and the rendered NFD config
    names PCI labels by vendor alone (``deviceLabelFields: [vendor]``), so the NFD agent labels
    the GPU nodes ``pci-10de.present`` and nothing else of NVIDIA's."""
    vga = {"feature.node.kubernetes.io/pci-0300_10de.present": "true"}
    create_pod(cluster, namespace, "vga-selector", gpu_pod_spec(selector=vga))
    stays_pending(cluster, namespace, "vga-selector", "didn't match Pod's node affinity/selector")
    by_class = {"feature.node.kubernetes.io/pci-0302_10de.present": "true"}  # stock NFD's name, not this stack's
    create_pod(cluster, namespace, "class-selector", gpu_pod_spec(selector=by_class))
    stays_pending(cluster, namespace, "class-selector", "didn't match Pod's node affinity/selector")
    by_vendor = {"feature.node.kubernetes.io/pci-10de.present": "true", "nvidia.com/gpu.product": "NVIDIA-L4"}
    create_pod(cluster, namespace, "vendor-selector", gpu_pod_spec(selector=by_vendor))
    assert runs_on(cluster, namespace, "vendor-selector") == "l4-0"


def test_a_gpu_pod_without_the_gpu_taints_toleration_stays_pending(cluster: Cluster, namespace: str) -> None:
    create_pod(cluster, namespace, "no-toleration", gpu_pod_spec(tolerate=False))
    stays_pending(cluster, namespace, "no-toleration", "had untolerated taint(s)")
    create_pod(cluster, namespace, "tolerating", gpu_pod_spec())
    assert runs_on(cluster, namespace, "tolerating") == "l4-0"


def test_a_mig_profile_no_node_offers_stays_pending(cluster: Cluster, namespace: str) -> None:
    create_pod(cluster, namespace, "mig-2g", gpu_pod_spec("nvidia.com/mig-2g.20gb"))
    stays_pending(cluster, namespace, "mig-2g", "Insufficient nvidia.com/mig-2g.20gb")
    create_pod(cluster, namespace, "mig-1g", gpu_pod_spec("nvidia.com/mig-1g.10gb"))
    assert runs_on(cluster, namespace, "mig-1g") == "h100-0"


# The Deployment controller's own verdict on a rollout that makes no progress for this long.
PROGRESS_DEADLINE = 10


def deployment(namespace: str, name: str, strategy: str) -> dict[str, Any]:
    """One replica holding the L4 pool's only GPU."""
    labels = {"app": name}
    template = {"metadata": {"labels": labels}, "spec": gpu_pod_spec(selector={"kubernetes.io/hostname": "l4-0"})}
    return {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": namespace},
        "spec": {"replicas": 1, "selector": {"matchLabels": labels}, "strategy": {"type": strategy},
                 "progressDeadlineSeconds": PROGRESS_DEADLINE, "template": template},
    }


def roll(cluster: Cluster, namespace: str, name: str, strategy: str) -> None:
    """Create the Deployment, wait for it, then change its pod template (a new rollout)."""
    applier = deploy.Applier(cluster.kubectl, cluster.kubeconfig)
    body = deployment(namespace, name, strategy)
    applier.apply([body], f"Deployment {name}")
    wait_for(lambda: complete(cluster, namespace, name), WAIT_SECONDS, lambda: rollout_state(cluster, namespace, name))
    body["spec"]["template"]["metadata"]["annotations"] = {"gpustack.test/revision": "2"}
    applier.apply([body], f"Deployment {name}, revision 2")


def complete(cluster: Cluster, namespace: str, name: str) -> bool:
    live = cluster.api.get(f"/apis/apps/v1/namespaces/{namespace}/deployments/{name}")
    status = live.get("status", {})
    return (status.get("observedGeneration") == live["metadata"]["generation"]
            and status.get("updatedReplicas") == status.get("availableReplicas") == status.get("replicas") == 1)


def progress(cluster: Cluster, namespace: str, name: str) -> str:
    """The reason of the Deployment's Progressing condition (ProgressDeadlineExceeded: given up)."""
    status = cluster.api.get(f"/apis/apps/v1/namespaces/{namespace}/deployments/{name}").get("status", {})
    return next((c.get("reason", "") for c in status.get("conditions", []) if c["type"] == "Progressing"), "")


def pending_pods(cluster: Cluster, namespace: str) -> list[dict[str, Any]]:
    return [p for p in pods(cluster.api, namespace) if p["status"].get("phase") == "Pending"]


def rollout_state(cluster: Cluster, namespace: str, name: str) -> str:
    status = cluster.api.get(f"/apis/apps/v1/namespaces/{namespace}/deployments/{name}").get("status")
    return f"Deployment {name}: {status}\n" + describe(cluster.api, pods(cluster.api, namespace))


def test_a_rolling_update_on_a_packed_gpu_pool_never_completes_while_recreate_does(
        cluster: Cluster, namespace: str) -> None:
    roll(cluster, namespace, "rolling", "RollingUpdate")
    # The surge pod needs a second GPU the pool does not have; the old pod keeps the only one.
    surge = wait_for(lambda: pending_pods(cluster, namespace), WAIT_SECONDS,
                     lambda: rollout_state(cluster, namespace, "rolling"))
    stays_pending(cluster, namespace, surge[0]["metadata"]["name"], "Insufficient nvidia.com/gpu")
    wait_for(lambda: progress(cluster, namespace, "rolling") == "ProgressDeadlineExceeded", WAIT_SECONDS,
             lambda: rollout_state(cluster, namespace, "rolling"))
    assert not complete(cluster, namespace, "rolling"), rollout_state(cluster, namespace, "rolling")
    cluster.api.delete(f"/apis/apps/v1/namespaces/{namespace}/deployments/rolling")
    wait_for(lambda: not pods(cluster.api, namespace), WAIT_SECONDS,
             lambda: describe(cluster.api, pods(cluster.api, namespace)))

    roll(cluster, namespace, "recreate", "Recreate")
    wait_for(lambda: complete(cluster, namespace, "recreate"), WAIT_SECONDS,
             lambda: rollout_state(cluster, namespace, "recreate"))
    running = [p for p in pods(cluster.api, namespace) if p["status"].get("phase") == "Running"]
    assert [p["metadata"]["annotations"].get("gpustack.test/revision") for p in running] == ["2"]


def test_an_object_the_api_server_refuses_fails_with_its_message(cluster: Cluster, namespace: str) -> None:
    """Extended resources cannot be overcommitted: a GPU request above the limit is invalid."""
    spec = gpu_pod_spec()
    spec["containers"][0]["resources"]["requests"] = {"nvidia.com/gpu": 2}
    with pytest.raises(pytest.fail.Exception) as refused:
        create_pod(cluster, namespace, "overcommitted", spec)
    assert 'The Pod "overcommitted" is invalid' in str(refused.value)
    assert "must be equal to nvidia.com/gpu limit of 1" in str(refused.value)
