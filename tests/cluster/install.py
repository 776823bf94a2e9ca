"""Install a rendered stack on a harness cluster as its README's apply order does, and wait until
it converges: every Deployment, StatefulSet and DaemonSet rolled out, every Job complete, on the
faithful kubelet and node agents (tests/cluster/kubelet.py). ``python -m tests.cluster up
--install``, the example tests and the tests that need a stack's agents running use it.

The apply order (deploy.py): the pod network (Cilium, the README's host step on kubeadm and Talos;
tests/cluster/cilium.py), the charts' CRDs, the namespaces, the Secrets a person creates by
hand, the early manifests (the README's first step: namespaces, RuntimeClass, generated
Secrets), each release's ``helm template`` output (the real chart with the rendered values), and
once the releases' workloads are up the rest of the manifests, the delivery objects, and the
admission webhooks last (nothing serves them here). Flux's own controllers reconcile the Flux stacks in
tests/flux/test_reconcile.py, layer by layer.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpustack.render.rendered import EARLY_MANIFESTS
from gpustack.spec.models import GpuStack
from tests.cluster import cilium, deploy
from tests.cluster.api import ApiError
from tests.cluster.support import (
    WORKLOAD_KINDS,
    Cluster,
    describe,
    owned_pods,
    wait_for,
    warnings,
    workload_path,
)

ROLLOUT_SECONDS = 180


class NotConverged(AssertionError):
    """The stack did not converge in time: the report lists what waits and why."""


@dataclass(frozen=True)
class Deployed:
    cluster: Cluster
    stack: GpuStack
    objects: list[dict[str, Any]]
    accepted: list[str]  # kubectl's "<kind>/<name> serverside-applied" lines
    sent: int

    def workloads(self) -> list[dict[str, Any]]:
        return [o for o in self.objects if o["kind"] in WORKLOAD_KINDS]



def install_pod_network(applier: deploy.Applier, stack: GpuStack, folder: Path) -> list[dict[str, Any]]:
    """The README's CNI host step (Cilium, after ``kubeadm init`` or ``talosctl bootstrap``; none on
    K3s), applied before anything else as on a real cluster, where every other pod waits for it."""
    network = cilium.release(folder)
    if network is None:
        return []
    objects = deploy.helm_template(network, stack.spec.cluster.kubernetesVersion)
    applier.apply(objects, "the pod network (the README's CNI host step)")
    return objects


def apply_stack(cluster: Cluster, stack: GpuStack, folder: Path) -> Deployed:
    """Everything the stack's README applies, in its order (see deploy.py)."""
    applier = deploy.Applier(cluster.kubectl, cluster.kubeconfig)
    releases = deploy.releases(folder)
    charts = {r.name: deploy.helm_template(r, stack.spec.cluster.kubernetesVersion) for r in releases}
    pod_network = install_pod_network(applier, stack, folder)
    # README step 1: the namespaces (with their Pod Security labels) the charts install into.
    manifests = deploy.documents((folder / "helm" / "namespaces.yaml").read_text())
    manifests += deploy.kustomize(cluster.kubectl, folder / "manifests")
    delivery = deploy.delivery_objects(folder)
    everything = pod_network + [o for objects in charts.values() for o in objects] + manifests + delivery

    crds = [o for o in everything if o["kind"] == "CustomResourceDefinition"]
    have = {c["metadata"]["name"] for c in crds}
    crds += [c for c in deploy.upstream_crds() if c["metadata"]["name"] not in have]
    applier.apply(crds, "the CRDs")
    applier.wait_established()
    applier.apply(deploy.namespaces(everything, [r.namespace for r in releases]), "the namespaces")
    applier.apply(deploy.workload_secrets(manifests), "the workloads' Secrets")
    late = ("CustomResourceDefinition", "Namespace", *deploy.WEBHOOKS)
    early = [o for name in EARLY_MANIFESTS if (folder / "manifests" / f"{name}.yaml").is_file()
             for o in deploy.documents((folder / "manifests" / f"{name}.yaml").read_text())]
    applier.apply([o for o in early if o["kind"] not in late], "the early manifests (README step 1)")
    for release in releases:
        applier.apply([o for o in charts[release.name] if o["kind"] not in late], f"Helm release {release.name}")
    # "kubectl apply -k manifests/ once the releases are up" (the README's last step).
    release_workloads = [o for objects in charts.values() for o in objects if o["kind"] in WORKLOAD_KINDS]
    _wait_for_rollouts(cluster.api, release_workloads, fail=False)
    applier.apply([o for o in manifests if o["kind"] not in late], "manifests/")
    applier.apply(delivery, "the delivery objects (k3s/, argocd/, flux/)")
    _wait_for_rollouts(cluster.api, [o for o in everything if o["kind"] in WORKLOAD_KINDS], fail=False)
    applier.apply([o for o in everything if o["kind"] in deploy.WEBHOOKS], "the admission webhooks")
    return Deployed(cluster, stack, everything, applier.applied, applier.sent)


def rolled_out(api: Any, workload: dict[str, Any]) -> bool:
    try:
        status = api.get(workload_path(workload)).get("status", {})
    except ApiError as error:  # a finished Job removed by its ttlSecondsAfterFinished
        if error.code == 404 and workload["kind"] == "Job":
            return True
        raise
    kind, replicas = workload["kind"], workload.get("spec", {}).get("replicas", 1)
    if kind == "Deployment":
        return status.get("availableReplicas", 0) == replicas == status.get("updatedReplicas", 0)
    if kind == "StatefulSet":
        return status.get("readyReplicas", 0) == replicas
    if kind == "DaemonSet":
        desired = status.get("desiredNumberScheduled", -1)
        return desired == status.get("updatedNumberScheduled", 0) == status.get("numberReady", 0)
    return status.get("succeeded", 0) > 0  # a Job: complete


def _wait_for_rollouts(api: Any, workloads: list[dict[str, Any]], *, fail: bool) -> None:
    """Until every workload is rolled out; then, or at the time limit, return or (``fail``) fail."""

    def waiting() -> list[dict[str, Any]]:
        return [w for w in workloads if not rolled_out(api, w)]

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
    except AssertionError as error:
        if fail:
            raise NotConverged(str(error)) from None


def wait_for_rollouts(deployed: Deployed) -> None:
    """Until the stack converged; NotConverged with what waits and why, and why node agents did
    not act (the kubelet's log)."""
    try:
        _wait_for_rollouts(deployed.cluster.api, deployed.workloads(), fail=True)
    except NotConverged as error:
        log = deployed.cluster.state / "logs" / "kubelet.log"
        agents = [line for line in log.read_text(errors="replace").splitlines() if line.startswith("kubelet: ")]
        raise NotConverged("\n".join([str(error), *agents[-20:]])) from None


def install(cluster: Cluster, stack: GpuStack, folder: Path) -> Deployed:
    """Apply the rendered stack in ``folder`` and wait until it converges (NotConverged if not)."""
    deployed = apply_stack(cluster, stack, folder)
    wait_for_rollouts(deployed)
    return deployed


def unconverged(api: Any) -> list[str]:
    """Every workload of the cluster not rolled out, with its pods that do not run and why: for a
    stack installed by something else (Flux's controllers)."""
    waiting = []
    for kind, resource in WORKLOAD_KINDS.items():
        group = "batch/v1" if kind == "Job" else "apps/v1"
        for item in api.items(f"/apis/{group}/{resource}"):
            if any(owner["kind"] == "CronJob" for owner in item["metadata"].get("ownerReferences", [])):
                continue  # a scheduled run (the etcd snapshots: on control-plane nodes, which the harness has none of)
            workload = {**item, "kind": kind}
            if not rolled_out(api, workload):
                pods = [p for p in owned_pods(api, workload) if p["status"].get("phase") not in ("Running", "Succeeded")]
                waiting.append(f"{kind} {item['metadata']['namespace']}/{item['metadata']['name']}: {describe(api, pods)}")
    return waiting
