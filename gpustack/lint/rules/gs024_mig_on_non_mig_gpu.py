"""GS024: ``nvidia.com/mig-*`` requests that no node pool can satisfy.

A MIG profile exists only on GPUs that can do MIG and have it (A100, H100, H200: the
catalogue's ``migProfiles``); an L4 reports ``nvidia.com/mig.capable=false``
(it cannot do MIG; HAMi splits it in software). The device plugin
advertises ``nvidia.com/mig-<profile>`` only with ``migStrategy: mixed`` (the device plugin's README);
with ``single`` MIG devices are plain ``nvidia.com/gpu``. A pod asking for a profile nobody
advertises stays Pending forever, and so does one asking for more instances on one node than
the pools' own MIG layouts give a node.

Pools considered: those the pod can reach by node labels and taints (all pools when it
reaches none: GS026/GS028 report that). Needs ``--spec``.
"""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction

from gpustack.lint.context import LintContext
from gpustack.lint.facts.podspec import subject
from gpustack.lint.facts.pools import MIG_PREFIX, ClusterFacts, Pool
from gpustack.lint.facts.scheduling import container_asks, mig_profile, number_text, pod_total, reachable_pools
from gpustack.lint.model import Hit, PodSpec
from gpustack.lint.registry import Rule


def _why(profile: str, pools: tuple[Pool, ...], cluster: ClusterFacts) -> str | None:
    """Why no pool advertises the profile, or None when one does."""
    having = [pool for pool in pools if pool.offers_mig(profile)]
    if any(MIG_PREFIX + profile in pool.resources for pool in having):
        return None
    if having:
        return (
            f"pools {', '.join(p.name for p in having)} have it, but the device plugin advertises MIG "
            f"profiles only with migStrategy: mixed (the spec has {cluster.mig_strategy})"
        )
    described = []
    for pool in pools:
        if pool.gpu.mig_capable:
            described.append(f"{pool.name}: {pool.gpu.product} offers {', '.join(pool.gpu.mig_profiles)}")
        else:
            described.append(f"{pool.name}: {pool.gpu.product} cannot do MIG")
    return f"no pool it can run on has a GPU with that profile ({'; '.join(described)})"


def _too_few(profile: str, wanted: Fraction, pools: tuple[Pool, ...]) -> str | None:
    """Why no pool that advertises the profile has ``wanted`` instances on one node (the pod's
    containers together, or its largest init container), or None when one does or may."""
    counts = [(pool, pool.mig_per_node(profile)) for pool in pools if MIG_PREFIX + profile in pool.resources]
    if not counts or any(count is None or count >= wanted for _, count in counts):
        return None
    having = "; ".join(f"{pool.name}: {count} per node" for pool, count in counts)
    return f"it asks for {number_text(wanted)} on one node, and the MIG layouts give fewer ({having})"


def check(pod: PodSpec, ctx: LintContext) -> Iterator[Hit]:
    cluster = ctx.cluster
    if cluster is None or pod.system_component:
        return
    pools = reachable_pools(pod, cluster) or cluster.pools
    regular, init = container_asks(pod)
    judged: set[str] = set()
    for ask in regular + init:
        for amount in ask.amounts.values():
            profile = mig_profile(amount.name)
            if profile is None or amount.name in judged:
                continue
            judged.add(amount.name)
            why = _why(profile, pools, cluster) or _too_few(profile, pod_total(pod, amount.name), pools)
            if why:
                yield Hit(
                    pod.resource,
                    amount.path,
                    f"{subject(pod, ask.container)} asks for {amount.name}: {why}, so it stays Pending",
                    fix="Request whole GPUs (nvidia.com/gpu) or a HAMi share on GPUs without MIG, or run the "
                    "pod on a MIG-capable pool with migStrategy: mixed.",
                )


RULE = Rule("GS024", "pod", check)
