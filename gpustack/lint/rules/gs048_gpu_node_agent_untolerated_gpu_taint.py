"""GS048: a GPU node agent does not tolerate a GPU pool's taint, so it never runs on those nodes.

GPU node agents (``facts/node_agents.py``: the device plugin and GFD, the GPU Operator's
operands, the DCGM exporter, HAMi's device plugin, DRA kubelet plugins, NFD's worker) are
DaemonSets; on a node whose taint they do not tolerate they never run. A release's tolerations
replace the chart's list (Helm does not merge lists), so a list that tolerates ``gpu`` misses a
pool tainted ``nvidia.com/gpu``. The GPU nodes' taints come from the spec's pools (or a live
cluster's), else from the GPU node groups the set declares (``facts/node_groups.py``); a
DaemonSet is held only to the spec's pools its node selection picks.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.lint.context import LintContext
from gpustack.lint.facts.node_agents import (
    CONSEQUENCES,
    AgentTolerations,
    agent_tolerations,
)
from gpustack.lint.facts.node_groups import gpu_node_groups, taints_of
from gpustack.lint.facts.pools import Taint, untolerated
from gpustack.lint.facts.scheduling import selected_pools
from gpustack.lint.model import Hit
from gpustack.lint.registry import Rule

Group = tuple[str, tuple[Taint, ...]]


def check(ctx: LintContext) -> Iterator[Hit]:
    groups = _gpu_groups(ctx)
    if not any(taints for _, taints in groups):
        return
    for agent in agent_tolerations(ctx):
        yield from _hits(_held_to(ctx, agent, groups), agent)


def _gpu_groups(ctx: LintContext) -> list[Group]:
    """(what, taints) of each GPU node group: the spec's GPU pools, else the set's node groups."""
    if ctx.cluster is not None:
        return [(f"pool {pool.name} of {ctx.cluster.spec_file}", pool.taints) for pool in ctx.cluster.pools if pool.gpus]
    return [(group[0], taints_of(group)) for group in gpu_node_groups(ctx)]


def _held_to(ctx: LintContext, agent: AgentTolerations, groups: list[Group]) -> list[Group]:
    """The groups a DaemonSet must run on: with pools, those its node selection picks."""
    if agent.pod is None or ctx.cluster is None:
        return groups
    picked = {f"pool {pool.name} of {ctx.cluster.spec_file}" for pool in selected_pools(agent.pod, ctx.cluster)}
    return [group for group in groups if group[0] in picked]


def _hits(groups: list[Group], agent: AgentTolerations) -> Iterator[Hit]:
    blocked = [(name, found) for name, taints in groups if (found := untolerated(taints, agent.tolerations))]
    if not blocked:
        return
    listed = "; ".join(f"{name} ({', '.join(map(str, taints))})" for name, taints in blocked)
    yield Hit(
        agent.resource,
        agent.path,
        f"{agent.what} do not tolerate the taints of GPU node group(s) {listed}: the agent never runs there: "
        f"{CONSEQUENCES[agent.component]}",
        fix=f"Add to the agent's tolerations: {_toleration(blocked[0][1][0])}.",
    )


def _toleration(taint: Taint) -> str:
    return f"`{{key: {taint.key}, operator: Exists, effect: {taint.effect}}}`"




RULE = Rule("GS048", "set", check)
