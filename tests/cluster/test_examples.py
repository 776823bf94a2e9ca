"""Every example's rendered stack applied to a real control plane and run on fake GPU nodes.

Per example: one cluster from the spec's pools; the charts' CRDs, the real charts' ``helm
template`` output with the rendered values, the rendered manifests and the delivery objects,
all server-side applied (deploy.py); then every workload Running where it belongs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from gpustack.spec.models import GpuStack
from tests.cluster import deploy
from tests.cluster.conftest import start, unavailable
from tests.cluster.control_plane import REPO
from tests.cluster.spec import load
from tests.cluster.support import (
    WORKLOAD_KINDS, Cluster, describe, gpu_requests, owned_pods, pods, wait_for, warnings, workload_path,
)

pytestmark = pytest.mark.cluster

EXAMPLES = sorted((REPO / "examples").glob("*.yaml"))
ROLLOUT_SECONDS = 90
# DaemonSets of GPU node agents: on every GPU node of the pools they serve and nowhere else.
GPU_AGENT = re.compile(r"device-plugin|gpu-feature-discovery|dcgm-exporter|hami|dra")
# DaemonSets that belong on every node (metrics and feature discovery of the whole fleet).
NODE_AGENT = re.compile(r"node-exporter|nfd-worker|node-feature-discovery-worker")


@dataclass(frozen=True)
class Deployed:
    cluster: Cluster
    stack: GpuStack
    objects: list[dict[str, Any]]
    accepted: list[str]  # kubectl's "<kind>/<name> serverside-applied" lines
    sent: int

    def workloads(self) -> list[dict[str, Any]]:
        return [o for o in self.objects if o["kind"] in WORKLOAD_KINDS]


@pytest.fixture(scope="module", params=EXAMPLES, ids=[p.stem for p in EXAMPLES])
def deployed(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, helm: str) -> Deployed:
    spec: Path = request.param
    if not deploy.CHARTS.is_dir():
        unavailable(f"{deploy.CHARTS} not present (the packaged upstream charts)")
    generator = start(spec, tmp_path_factory.mktemp(spec.stem) / "state")
    cluster = next(generator)
    request.addfinalizer(generator.close)
    stack = load(spec)
    return apply_stack(cluster, stack, REPO / "output" / spec.stem)


def apply_stack(cluster: Cluster, stack: GpuStack, folder: Path) -> Deployed:
    """Everything the stack's README applies, in its order (see deploy.py)."""
    applier = deploy.Applier(cluster.kubectl, cluster.kubeconfig)
    releases = deploy.releases(folder)
    charts = {r.name: deploy.helm_template(r, stack.spec.cluster.kubernetesVersion) for r in releases}
    # README step 1: the namespaces (with their Pod Security labels) the charts install into.
    manifests = deploy.documents((folder / "helm" / "namespaces.yaml").read_text())
    manifests += deploy.kustomize(cluster.kubectl, folder / "manifests")
    delivery = deploy.delivery_objects(folder)
    everything = [o for objects in charts.values() for o in objects] + manifests + delivery

    crds = [o for o in everything if o["kind"] == "CustomResourceDefinition"]
    have = {c["metadata"]["name"] for c in crds}
    crds += [c for c in deploy.upstream_crds() if c["metadata"]["name"] not in have]
    applier.apply(crds, "the CRDs")
    applier.wait_established()
    applier.apply(deploy.namespaces(everything, [r.namespace for r in releases]), "the namespaces")
    applier.apply(deploy.workload_secrets(stack), "the workloads' Secrets")
    late = ("CustomResourceDefinition", "Namespace", *deploy.WEBHOOKS)
    for release in releases:
        applier.apply([o for o in charts[release.name] if o["kind"] not in late], f"Helm release {release.name}")
    applier.apply([o for o in manifests if o["kind"] not in late], "manifests/")
    applier.apply(delivery, "the delivery objects (k3s/, argocd/)")
    _wait_for_rollouts(Deployed(cluster, stack, everything, [], 0), fail=False)
    applier.apply([o for o in everything if o["kind"] in deploy.WEBHOOKS], "the admission webhooks")
    return Deployed(cluster, stack, everything, applier.applied, applier.sent)


def rolled_out(api: Any, workload: dict[str, Any]) -> bool:
    status = api.get(workload_path(workload)).get("status", {})
    kind, replicas = workload["kind"], workload.get("spec", {}).get("replicas", 1)
    if kind == "Deployment":
        return status.get("availableReplicas", 0) == replicas == status.get("updatedReplicas", 0)
    if kind == "StatefulSet":
        return status.get("readyReplicas", 0) == replicas
    if kind == "DaemonSet":
        return status.get("desiredNumberScheduled", -1) == status.get("numberReady", 0)
    return status.get("active", 0) + status.get("succeeded", 0) > 0


def _wait_for_rollouts(deployed: Deployed, *, fail: bool) -> None:
    api = deployed.cluster.api

    def waiting() -> list[dict[str, Any]]:
        return [w for w in deployed.workloads() if not rolled_out(api, w)]

    def report() -> str:
        lines = []
        for workload in waiting():
            lines.append(f"{workload['kind']} {workload['metadata']['namespace']}/{workload['metadata']['name']} "
                         f"not rolled out: {api.get(workload_path(workload)).get('status')}")
            lines += warnings(api, workload)
            lines.append(describe(api, [p for p in owned_pods(api, workload) if p["status"].get("phase") != "Running"]))
        return "\n".join(lines)

    try:
        wait_for(lambda: not waiting(), ROLLOUT_SECONDS, report)
    except AssertionError:
        if fail:
            raise


def test_every_object_is_accepted(deployed: Deployed) -> None:
    """kubectl stops the fixture at the first refusal with the server's message; here, the count."""
    assert all(line.endswith("serverside-applied") for line in deployed.accepted), deployed.accepted
    assert len(deployed.accepted) == deployed.sent


def test_every_workload_runs(deployed: Deployed) -> None:
    _wait_for_rollouts(deployed, fail=True)
    api = deployed.cluster.api
    for workload in deployed.workloads():
        not_running = [p for p in owned_pods(api, workload) if p["status"].get("phase") != "Running"]
        assert not not_running, describe(api, not_running)


def test_gpu_pods_run_only_on_gpu_nodes_that_offer_what_they_ask(deployed: Deployed) -> None:
    _wait_for_rollouts(deployed, fail=True)
    by_name = {n.name: n for n in deployed.cluster.nodes}
    gpu_pools = {p.name for p in deployed.stack.spec.nodePools}
    for pod in pods(deployed.cluster.api):
        wanted = gpu_requests(pod)
        if not wanted:
            continue
        node = by_name[pod["spec"]["nodeName"]]
        assert node.pool in gpu_pools, f"{pod['metadata']['name']} asks for {wanted} but runs on {node.name}"
        missing = [r for r in wanted if r != "resourceClaims" and r not in node.allocatable]
        assert not missing, f"{pod['metadata']['name']} runs on {node.name}, which has no {missing}"


def test_vllm_servers_run_on_their_pool(deployed: Deployed) -> None:
    servers = [w for w in deployed.stack.spec.workloads if w.type == "vllm"]
    if not servers:
        pytest.skip("no vLLM workload in this stack")
    _wait_for_rollouts(deployed, fail=True)
    for server in servers:
        pool = server.pool or deployed.stack.spec.nodePools[0].name
        running = [p for p in pods(deployed.cluster.api, server.namespace) if p["metadata"]["name"].startswith(server.name)]
        assert running, f"no pod of vLLM {server.name}"
        assert {deployed.cluster.pool_of(p["spec"]["nodeName"]) for p in running} == {pool}


def expected_nodes(deployed: Deployed, name: str) -> set[str] | None:
    """The nodes a DaemonSet of the stack belongs on; None when the test has no rule for it."""
    nodes = deployed.cluster.nodes
    gpu_pools = {p.name for p in deployed.stack.spec.nodePools}
    hami = deployed.stack.spec.sharing.hami
    if "mps-control-daemon" in name:  # the device plugin's MPS daemon: nodes sharing GPUs through MPS
        return {n.name for n in nodes if n.labels.get("nvidia.com/gpu.sharing-strategy") == "mps"}
    if GPU_AGENT.search(name):
        pools = set(hami.pools) if "hami" in name and hami.pools else gpu_pools
        return {n.name for n in nodes if n.pool in pools}
    if NODE_AGENT.search(name):
        return {n.name for n in nodes}
    return None


def test_daemonsets_land_on_exactly_the_nodes_they_serve(deployed: Deployed) -> None:
    _wait_for_rollouts(deployed, fail=True)
    api = deployed.cluster.api
    checked = 0
    for daemonset in (w for w in deployed.workloads() if w["kind"] == "DaemonSet"):
        expected = expected_nodes(deployed, daemonset["metadata"]["name"])
        if expected is None:
            continue
        landed = {p["spec"]["nodeName"] for p in owned_pods(api, daemonset)}
        assert landed == expected, (
            f"DaemonSet {daemonset['metadata']['name']}: extra {sorted(landed - expected)}, "
            f"missing {sorted(expected - landed)}")
        checked += 1
    assert checked, "no DaemonSet of the stack was checked"
