"""The cluster tests' helpers: a cluster per spec, and what the tests look at (pods, their
nodes and pools, the scheduler's own words).

The tier runs wherever Go is (the binaries are built on first use and cached); without Go it
is skipped with the reason, except in CI (CI=true), where a skip is a failure.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest

from tests.cluster import build, control_plane
from tests.cluster.api import Api
from tests.cluster.kubelet import load_machines
from tests.cluster.nodes import FakeNode
from tests.cluster.spec import load

T = TypeVar("T")
# How long a test waits for the scheduler and the controllers (seconds: a few, unless the machine is busy).
WAIT_SECONDS = 60
WORKLOAD_KINDS = {"Deployment": "deployments", "StatefulSet": "statefulsets", "DaemonSet": "daemonsets",
                  "Job": "jobs"}
GROUPS = {"Job": "batch/v1"}


@dataclass(frozen=True)
class Cluster:
    state: Path
    kubeconfig: Path
    api: Api
    kubectl: str
    nodes: list[FakeNode]

    def pool_of(self, node_name: str) -> str:
        return next(n.pool for n in self.nodes if n.name == node_name)


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def unavailable(reason: str) -> None:
    """Skip the tier for a developer; fail it in CI, where it must run."""
    if in_ci():
        pytest.fail(f"cluster tier cannot run in CI: {reason}", pytrace=False)
    pytest.skip(reason)


def require(minor: str) -> Path:
    """The binaries for ``minor``, built now if Go is there."""
    if not build.is_built(minor) and build.find_go() is None:
        unavailable("Go is not installed: the cluster tier builds kube-apiserver, kube-scheduler, "
                    "kube-controller-manager and etcd with it (python -m tests.cluster.build)")
    return build.build(minor)


def start(spec: Path, state: Path, folder: Path | None = None) -> Iterator[Cluster]:
    """A cluster for ``spec`` (its rendered stack in ``folder``, else rendered anew) while the
    generator is suspended; stopped and removed when it is closed."""
    stack = load(spec)
    bin_dir = require(stack.spec.cluster.kubernetesVersion)
    try:
        kubeconfig = control_plane.up(spec, state, folder)
        machines = list(load_machines(state.resolve()).values())
        yield Cluster(state, kubeconfig, Api.from_state(state), str(bin_dir / "kubectl"), machines)
    finally:
        control_plane.down(state)


def wait_for(probe: Callable[[], T | None], seconds: float, what: Callable[[], str]) -> T:
    """``probe()``'s first truthy answer within ``seconds``; else fail with ``what()``."""
    deadline = time.monotonic() + seconds
    while True:
        answer = probe()
        if answer:
            return answer
        if time.monotonic() > deadline:
            raise AssertionError(what())
        time.sleep(0.25)


def pods(api: Api, namespace: str | None = None, selector: str | None = None) -> list[dict[str, Any]]:
    path = f"/api/v1/namespaces/{namespace}/pods" if namespace else "/api/v1/pods"
    return api.items(path, **({"labelSelector": selector} if selector else {}))


def warnings(api: Api, obj: dict[str, Any]) -> list[str]:
    """The Warning events about an object (FailedScheduling, FailedCreate, ...), as the server has them."""
    meta = obj["metadata"]
    events = api.items(f"/api/v1/namespaces/{meta['namespace']}/events",
                       fieldSelector=f"involvedObject.name={meta['name']}")
    return [f"{e['reason']}: {e['message']}" for e in events if e.get("type") == "Warning"]


def scheduling_message(api: Api, pod: dict[str, Any]) -> str:
    """Why the pod is not running: the scheduler's condition message and FailedScheduling events."""
    conditions = [f"{c['type']}={c['status']} {c.get('reason', '')}: {c.get('message', '')}"
                  for c in pod.get("status", {}).get("conditions", []) if c.get("status") != "True"]
    return "; ".join(conditions + warnings(api, pod))


def describe(api: Api, pod_list: list[dict[str, Any]]) -> str:
    return "\n".join(
        f"{p['metadata']['namespace']}/{p['metadata']['name']} on {p['spec'].get('nodeName') or '-'}: "
        f"{p.get('status', {}).get('phase')} {scheduling_message(api, p)}" for p in pod_list)


def workload_path(obj: dict[str, Any]) -> str:
    kind, meta = obj["kind"], obj["metadata"]
    group = GROUPS.get(kind, "apps/v1")
    return f"/apis/{group}/namespaces/{meta['namespace']}/{WORKLOAD_KINDS[kind]}/{meta['name']}"


def owned_pods(api: Api, workload: dict[str, Any]) -> list[dict[str, Any]]:
    """The workload's pods, by owner reference (a Deployment's through its ReplicaSets)."""
    namespace = workload["metadata"]["namespace"]
    owners = {api.get(workload_path(workload))["metadata"]["uid"]}
    if workload["kind"] == "Deployment":
        owners = {rs["metadata"]["uid"] for rs in api.items(f"/apis/apps/v1/namespaces/{namespace}/replicasets")
                  if _owner_uids(rs) & owners}
    return [pod for pod in pods(api, namespace) if _owner_uids(pod) & owners]


def _owner_uids(obj: dict[str, Any]) -> set[str]:
    return {ref["uid"] for ref in obj["metadata"].get("ownerReferences", [])}


def gpu_requests(pod: dict[str, Any]) -> dict[str, str]:
    """The pod's requests of GPU resources (nvidia.com/*, and DRA claims as ``resourceClaims``)."""
    found = {}
    for container in pod["spec"]["containers"] + pod["spec"].get("initContainers", []):
        resources = container.get("resources", {})
        for source in (resources.get("limits", {}), resources.get("requests", {})):
            found |= {k: str(v) for k, v in source.items() if k.startswith("nvidia.com/")}
    if pod["spec"].get("resourceClaims"):
        found["resourceClaims"] = str(len(pod["spec"]["resourceClaims"]))
    return found


def new_namespace(cluster: Cluster, name: str) -> str:
    """Create namespace ``name`` and wait for its default ServiceAccount (pods need it)."""
    cluster.api.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    wait_for(lambda: any(a["metadata"]["name"] == "default"
                         for a in cluster.api.items(f"/api/v1/namespaces/{name}/serviceaccounts")),
             WAIT_SECONDS, lambda: f"no default ServiceAccount in {name}")
    return name
