"""A pod of RuntimeClass nvidia that sets ``NVIDIA_VISIBLE_DEVICES=all`` gets only the GPU it asked
for on the rendered stacks, and none when it asks for none; on a node whose toolkit accepts the
variable from unprivileged containers (the same stack rendered with
``cluster.acceptVisibleDevicesEnvvar: true``) it gets every GPU of the node.

What each container sees comes from the toolkit config the nodes have (the host steps'
``nvidia-ctk config``, the GPU Operator's toolkit env) and the device plugin's strategy its pod
runs with, through tests/cluster/toolkit.py; the pod lists them with ``nvidia-smi -L`` into its
termination log, which the kubelet reports.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cluster import deploy
from tests.cluster.control_plane import REPO
from tests.cluster.deliver import installed
from tests.cluster.spec import load
from tests.cluster.support import WAIT_SECONDS, Cluster, describe, new_namespace, pods, wait_for

pytestmark = pytest.mark.cluster

IMAGE = "nvcr.io/nvidia/cuda:13.0.1-base-ubuntu24.04"
LIST = "nvidia-smi -L > /dev/termination-log"
# The standalone device plugin on a host toolkit, and the GPU Operator's.
STACKS = ["kubeadm-host-driver", "kubeadm-gpu-operator"]
OPTED_OUT = "kubeadm-host-driver-opted-out"
_numbers = itertools.count()


def _spec(name: str, folder: Path) -> Path:
    if name != OPTED_OUT:
        return REPO / "examples" / f"{name}.yaml"
    document = yaml.safe_load((REPO / "examples" / "kubeadm-host-driver.yaml").read_text(encoding="utf-8"))
    document["metadata"]["name"] = OPTED_OUT
    document["spec"]["cluster"]["acceptVisibleDevicesEnvvar"] = True
    path = folder / f"{OPTED_OUT}.yaml"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    return path


@pytest.fixture(scope="module", params=[*STACKS, OPTED_OUT])
def stack(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, Cluster]]:
    folder = tmp_path_factory.mktemp(request.param)
    spec = _spec(request.param, folder)
    for cluster in installed(spec, folder / "state"):
        yield request.param, spec, cluster


def _largest_node(spec: Path) -> tuple[str, int]:
    """The first node of the pool with the most GPUs per node, and that count."""
    pool = max(load(spec).spec.nodePools, key=lambda p: p.gpu.count)
    return f"{pool.name}-0", pool.gpu.count


def _job(name: str, namespace: str, node: str, gpus: int) -> dict[str, Any]:
    container = {"name": "list", "image": IMAGE, "command": ["sh", "-c", LIST],
                 "env": [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}]}
    if gpus:
        container["resources"] = {"limits": {"nvidia.com/gpu": gpus}}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": namespace},
            "spec": {"backoffLimit": 0, "template": {"spec": {
                "runtimeClassName": "nvidia", "restartPolicy": "Never", "containers": [container],
                "nodeSelector": {"kubernetes.io/hostname": node}, "tolerations": [{"operator": "Exists"}]}}}}


def _seen(cluster: Cluster, namespace: str, node: str, gpus: int) -> list[str] | None:
    """The GPUs the Job's container listed; None when it could not start nvidia-smi (no GPU)."""
    name = f"list-{gpus}"
    deploy.Applier(cluster.kubectl, cluster.kubeconfig).apply([_job(name, namespace, node, gpus)], f"job {name}")

    def ended() -> dict[str, Any] | None:
        found = [p for p in pods(cluster.api, namespace) if p["metadata"]["name"].startswith(name)]
        statuses = [s for p in found for s in p.get("status", {}).get("containerStatuses", [])]
        return next((s["state"]["terminated"] for s in statuses if "terminated" in s["state"]), None) or next(
            (s["lastState"]["terminated"] for s in statuses if "terminated" in s.get("lastState", {})), None)

    terminated = wait_for(ended, WAIT_SECONDS, lambda: describe(cluster.api, pods(cluster.api, namespace)))
    if terminated["exitCode"]:
        assert "nvidia-smi" in terminated.get("message", ""), terminated
        return None
    return terminated.get("message", "").splitlines()


def test_a_pod_naming_every_gpu_gets_only_what_it_asked_for(stack: tuple[str, Path, Cluster]) -> None:
    name, spec, cluster = stack
    node, count = _largest_node(spec)
    assert count > 1, "the node must have more GPUs than the pod asks for"
    namespace = new_namespace(cluster, f"isolation-{next(_numbers)}")
    one, none = _seen(cluster, namespace, node, 1), _seen(cluster, namespace, node, 0)
    if name == OPTED_OUT:  # the counter-case: the toolkit takes the pod's own variable
        assert one is not None and len(one) == count, one
        assert none is not None and len(none) == count, none
    else:
        assert one is not None and len(one) == 1, one
        assert none is None, f"a pod asking for no GPU saw {none}"
