"""GS027: a pod asking for more GPU than any node it can run on offers.

A pod lands on one node: its GPUs (the sum over its containers, or its largest init
container) must fit one node of a pool. HAMi (https://github.com/Project-HAMi/HAMi) splits each
GPU into ``splitCount`` vGPUs and gives each vGPU of a container its own GPU, with at most the
card's memory × ``deviceMemoryScaling`` (``nvidia.com/gpumem``, MiB) and 100 % × core scaling
of its cores; time-slicing and MPS multiply ``nvidia.com/gpu`` by their replicas. A request
beyond that, or for a resource no pool advertises (HAMi's on a pool HAMi does not serve), is
never scheduled: the pod stays Pending forever.

Pools considered: those the pod can reach by node labels and taints (all pools when it
reaches none: GS026/GS028 report that). MIG resources are GS024's. Needs ``--spec``.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.lint.context import LintContext
from gpustack.lint.facts.consumers import is_gpu_workload
from gpustack.lint.facts.podspec import subject
from gpustack.lint.facts.scheduling import reachable_pools, shortfall
from gpustack.lint.model import Hit, PodSpec
from gpustack.lint.registry import Rule

FIX = "Ask for what one node of a pool offers (see the spec's nodePools), or add a pool with larger nodes."


def check(pod: PodSpec, ctx: LintContext) -> Iterator[Hit]:
    cluster = ctx.cluster
    if cluster is None or not is_gpu_workload(pod):
        return
    pools = reachable_pools(pod, cluster) or cluster.pools
    found = [shortfall(pod, pool) for pool in pools]
    reasons = [item for item in found if item is not None]
    if not reasons or len(reasons) < len(found):
        return
    listed = "; ".join(item.reason for item in reasons)
    yield Hit(pod.resource, reasons[0].path, f"{subject(pod)} fits no node: {listed}, so it stays Pending", fix=FIX)


RULE = Rule("GS027", "pod", check)
