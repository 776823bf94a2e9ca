"""GS028: a GPU workload that tolerates the taints of none of the GPU pools it may use.

GPU pools are commonly tainted ``nvidia.com/gpu:NoSchedule`` so that only GPU pods land
there (the GPU Operator's and device plugin's DaemonSets tolerate it).
A GPU pod without a matching toleration (Kubernetes' rules: key, ``Exists`` or ``Equal`` with
the value, effect or none) is never scheduled on such a pool; when every pool it selects is
tainted so, it stays Pending forever. One pool it tolerates is enough: no finding. Only
``NoSchedule`` and ``NoExecute`` keep pods off; the API server's ExtendedResourceToleration
admission plugin (off by default) would add tolerations for taints named after the
requested extended resources. With ``--spec`` the pools' ``taints`` decide (an error); without
one, the GPU node groups the set itself declares (``facts/node_groups.py``: Talos machine configs,
talhelper nodes, Karpenter NodePools, OpenShift MachineSets) do, as a warning: GPU nodes outside
the set may take the pod.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.lint.context import LintContext
from gpustack.lint.facts.consumers import is_gpu_workload
from gpustack.lint.facts.node_groups import gpu_node_groups, taints_of
from gpustack.lint.facts.podspec import subject
from gpustack.lint.facts.pools import Taint, untolerated
from gpustack.lint.facts.scheduling import selected_pools, tolerations
from gpustack.lint.model import Hit, Path, PodSpec, Severity
from gpustack.lint.registry import Rule


def check(pod: PodSpec, ctx: LintContext) -> Iterator[Hit]:
    cluster = ctx.cluster
    if not is_gpu_workload(pod):
        return
    allowed = tolerations(pod)
    if cluster is None:
        groups = [(what, untolerated(taints_of((what, taints)), allowed)) for what, taints in ctx.set_fact(gpu_node_groups)]
        yield from _hit(pod, groups, "tolerates the taints of none of the set's GPU node groups: {listed}; unless GPU "
                        "nodes outside the set take it, it stays Pending", Severity.WARNING)
        return
    pools = selected_pools(pod, cluster) or cluster.pools
    groups = [(pool.name, pool.untolerated(allowed)) for pool in pools]
    yield from _hit(pod, groups, "is kept off every GPU pool it may run on by taints it does not tolerate: {listed}; "
                    "it stays Pending", None)


def _hit(pod: PodSpec, blocked: list[tuple[str, tuple[Taint, ...]]], message: str, severity: Severity | None) -> Iterator[Hit]:
    """One finding when every group keeps the pod off (``message`` lists them at ``{listed}``)."""
    if not blocked or any(not taints for _, taints in blocked):
        return
    listed = "; ".join(f"{name} ({', '.join(map(str, taints))})" for name, taints in blocked)
    first = blocked[0][1][0]
    path: Path = (*pod.path, "tolerations") if "tolerations" in pod.spec else pod.path
    value = f", operator: Equal, value: {first.value}" if first.value else ", operator: Exists"
    yield Hit(
        pod.resource,
        path,
        f"{subject(pod)} " + message.format(listed=listed),
        severity=severity,
        fix=f"Add a toleration: `{{key: {first.key}{value}, effect: {first.effect}}}`.",
    )


RULE = Rule("GS028", "pod", check, set_fact=gpu_node_groups)
