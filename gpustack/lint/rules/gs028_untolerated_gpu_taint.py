"""GS028: a GPU workload that tolerates the taints of none of the GPU pools it may use.

GPU pools are commonly tainted ``nvidia.com/gpu:NoSchedule`` so that only GPU pods land
there (the GPU Operator's and device plugin's DaemonSets tolerate it).
A GPU pod without a matching toleration (Kubernetes' rules: key, ``Exists`` or ``Equal`` with
the value, effect or none) is never scheduled on such a pool; when every pool it selects is
tainted so, it stays Pending forever. One pool it tolerates is enough: no finding. Only
``NoSchedule`` and ``NoExecute`` keep pods off. With ``--spec`` the pools' ``taints`` decide (an
error); without one, the GPU node groups the set itself declares (``facts/node_groups.py``: Talos
machine configs, talhelper nodes, Karpenter NodePools, OpenShift MachineSets, eksctl, AKS and GKE
node pools, K3s/RKE2 configs) do, as a warning:
GPU nodes outside the set may take the pod.

The API server's ExtendedResourceToleration admission plugin, off upstream and on EKS, GKE and
AKS (``facts/managed.py``), gives every pod that requests an extended resource the toleration
``{key: <resource>, operator: Exists, effect: NoSchedule}``: where the pod or the set says the
cluster is one of those, a ``NoSchedule`` taint named after a resource the pod requests keeps it
off nothing. Where a spec or the distribution says upstream's defaults, such a taint counts; where
nothing says either, it counts too, and the message says what it assumes.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from gpustack.lint.context import LintContext
from gpustack.lint.facts import managed
from gpustack.lint.facts.consumers import is_gpu_workload
from gpustack.lint.facts.node_groups import NodeGroup, gpu_node_groups, taints_of
from gpustack.lint.facts.podspec import subject
from gpustack.lint.facts.pools import Taint, untolerated
from gpustack.lint.facts.scheduling import selected_pools, tolerations
from gpustack.lint.model import Hit, Path, PodSpec, Severity
from gpustack.lint.registry import Rule

Groups = list[tuple[str, tuple[Taint, ...]]]  # (what, its taints) or, after tolerations, (what, those kept)
ASSUMED = ("assumed: the API server runs without the ExtendedResourceToleration admission plugin, upstream's "
           "default; on EKS, GKE and AKS it tolerates {taints} for pods that request {resources}")


def set_facts(ctx: LintContext) -> tuple[tuple[NodeGroup, ...], str | None]:
    """What the check reads of the whole set: its GPU node groups and the managed cloud it names."""
    return gpu_node_groups(ctx), managed.set_cloud(ctx)


def check(pod: PodSpec, ctx: LintContext) -> Iterator[Hit]:
    cluster = ctx.cluster
    if not is_gpu_workload(pod):
        return
    groups, cloud = ctx.set_fact(set_facts)
    if cluster is None:
        tainted = [(what, taints_of((what, taints))) for what, taints in groups]
        message = ("tolerates the taints of none of the set's GPU node groups: {listed}; unless GPU nodes outside the "
                   "set take it, it stays Pending")
        severity: Severity | None = Severity.WARNING
    else:
        tainted = [(pool.name, pool.taints) for pool in selected_pools(pod, cluster) or cluster.pools]
        message = "is kept off every GPU pool it may run on by taints it does not tolerate: {listed}; it stays Pending"
        severity = None
    allowed = tolerations(pod)
    blocked = _blocked(tainted, allowed)
    if not blocked:  # the admission plugin's tolerations only add to the pod's own
        return
    plugin = managed.extended_resource_toleration(pod, ctx, cloud)
    admitted = [*allowed, *managed.admitted_tolerations(pod)]
    if plugin:
        blocked = _blocked(tainted, admitted)
        if not blocked:
            return
    elif plugin is None and not _blocked(tainted, admitted):
        message += f" ({_assumed(pod, blocked)})"
    yield _hit(pod, blocked, message, severity)


def _blocked(tainted: Groups, allowed: list[Mapping[str, Any]]) -> Groups:
    """Each group with the taints that keep a pod with ``allowed`` tolerations off it, when every
    group keeps it off; else none (one group it may use is enough)."""
    blocked = [(what, untolerated(taints, allowed)) for what, taints in tainted]
    return blocked if blocked and all(taints for _, taints in blocked) else []


def _assumed(pod: PodSpec, blocked: Groups) -> str:
    """What the finding assumes where the platform is not known: the admission plugin off."""
    requested = managed.requested_extended_resources(pod)
    keys = sorted({t.key for _, taints in blocked for t in taints if t.key in requested and t.effect == "NoSchedule"})
    return ASSUMED.format(taints=", ".join(f"{key}:NoSchedule" for key in keys), resources=", ".join(keys))


def _hit(pod: PodSpec, blocked: Groups, message: str, severity: Severity | None) -> Hit:
    """The finding: ``message`` lists the groups at ``{listed}``."""
    listed = "; ".join(f"{name} ({', '.join(map(str, taints))})" for name, taints in blocked)
    first = blocked[0][1][0]
    path: Path = (*pod.path, "tolerations") if "tolerations" in pod.spec else pod.path
    value = f", operator: Equal, value: {first.value}" if first.value else ", operator: Exists"
    return Hit(
        pod.resource,
        path,
        f"{subject(pod)} " + message.format(listed=listed),
        severity=severity,
        fix=f"Add a toleration: `{{key: {first.key}{value}, effect: {first.effect}}}`.",
    )


RULE = Rule("GS028", "pod", check, set_fact=set_facts)
