"""A pod of RuntimeClass nvidia that sets ``NVIDIA_VISIBLE_DEVICES=all`` gets only the GPU it asked
for on the rendered stacks, and none when it asks for none; on a node whose toolkit accepts the
variable from unprivileged containers (the same stack rendered with
``cluster.acceptVisibleDevicesEnvvar: true``) it gets every GPU of the node.

The stacks (specs/isolation*.yaml, four GPUs per node): a host toolkit under NVIDIA's device
plugin on one pool and HAMi's on the other, and the GPU Operator's toolkit and CDI plugin.

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
from tests.cluster.deliver import installed
from tests.cluster.support import WAIT_SECONDS, Cluster, describe, new_namespace, pods, wait_for

pytestmark = pytest.mark.cluster

IMAGE = "nvcr.io/nvidia/cuda:13.0.1-base-ubuntu24.04"
LIST = "nvidia-smi -L > /dev/termination-log"
SPECS = Path(__file__).parent / "specs"
STACKS = {"isolation": ("plugin-0", "hami-0"), "isolation-operator": ("operator-0",)}
OPTED_OUT = "isolation-opted-out"
GPUS_PER_NODE = 4
_numbers = itertools.count()


def _spec(name: str, folder: Path) -> Path:
    if name != OPTED_OUT:
        return SPECS / f"{name}.yaml"
    document = yaml.safe_load((SPECS / "isolation.yaml").read_text(encoding="utf-8"))
    document["metadata"]["name"] = OPTED_OUT
    document["spec"]["cluster"]["acceptVisibleDevicesEnvvar"] = True
    path = folder / f"{OPTED_OUT}.yaml"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    return path


@pytest.fixture(scope="module", params=[*STACKS, OPTED_OUT])
def stack(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Cluster]]:
    folder = tmp_path_factory.mktemp(request.param)
    yield from ((request.param, cluster) for cluster in installed(_spec(request.param, folder), folder / "state"))


def _job(name: str, namespace: str, node: str, gpus: int) -> dict[str, Any]:
    container = {"name": "list", "image": IMAGE, "command": ["sh", "-c", LIST],
                 "env": [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}]}
    if gpus:
        container["resources"] = {"limits": {"nvidia.com/gpu": gpus}}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": namespace},
            "spec": {"backoffLimit": 0, "template": {"spec": {
                "runtimeClassName": "nvidia", "restartPolicy": "Never", "containers": [container],
                "nodeSelector": {"kubernetes.io/hostname": node}, "tolerations": [{"operator": "Exists"}],
                # HAMi's pools: its scheduler places the pods its plugin allocates (render/components/hami.py)
                **({"schedulerName": "hami-scheduler"} if node.startswith("hami") else {})}}}}


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


def test_a_pod_naming_every_gpu_gets_only_what_it_asked_for(stack: tuple[str, Cluster]) -> None:
    name, cluster = stack
    for node in STACKS.get(name, STACKS["isolation"]):
        namespace = new_namespace(cluster, f"isolation-{next(_numbers)}")
        one, none = _seen(cluster, namespace, node, 1), _seen(cluster, namespace, node, 0)
        if name == OPTED_OUT:  # the counter-case: the toolkit takes the pod's own variable
            assert one is not None and len(one) == GPUS_PER_NODE, (node, one)
            assert none is not None and len(none) == GPUS_PER_NODE, (node, none)
        else:
            assert one is not None and len(one) == 1, (node, one)
            assert none is None, f"{node}: a pod asking for no GPU saw {none}"
