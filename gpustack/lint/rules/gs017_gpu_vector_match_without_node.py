"""GS017: a PromQL join of DCGM series that does not match on the node.

DCGM Exporter numbers GPUs per node (``gpu="0"`` exists on every node), so ``on(gpu)``
pairs a series of one node with those of every other: in a multi-node cluster a
``GPUIdleButAllocated`` alert joined that way compares node A's utilisation with node B's memory.
A join keeps the node when its label list holds ``Hostname`` (``hostname`` from dcgm-exporter
after 4.8.2, which renamed it), ``instance``, ``node`` or ``UUID``.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.lint.context import LintContext
from gpustack.lint.facts import promql
from gpustack.lint.facts.rulefiles import RULE_KINDS
from gpustack.lint.model import Hit, Resource
from gpustack.lint.registry import Rule

NODE_LABELS = frozenset({"Hostname", "hostname", "instance", "node", "UUID"})
# Labels every scraped DCGM series carries (exporter: Hostname, UUID; Prometheus: instance);
# ``ignoring`` all of them leaves only per-node numbering such as ``gpu`` to match on.
ALWAYS_PRESENT_NODE_LABELS = frozenset({"Hostname", "instance", "UUID"})


def _loses_node(join: promql.Join) -> bool:
    labels = frozenset(join.labels)
    if join.on:
        # on() with no labels matches against a single series (a global threshold): deliberate.
        return bool(labels) and not labels & NODE_LABELS
    return ALWAYS_PRESENT_NODE_LABELS <= labels


def check(resource: Resource, ctx: LintContext) -> Iterator[Hit]:
    for rule in promql.rule_expressions(resource):
        tree = promql.parse(rule.expr)
        if tree is None:
            continue
        bad = [
            join
            for join in promql.joins(tree)
            if _loses_node(join) and any(name.startswith("DCGM_") for name in join.metrics)
        ]
        if not bad:
            continue
        shown = ", ".join(f"`{join}`" for join in bad)
        yield Hit(
            resource,
            rule.expr_path,
            f"{rule.label} joins DCGM series with {shown}: GPU indexes repeat on every node, "
            "so series of different nodes match each other",
            fix="Match on the node too, e.g. `on(Hostname, gpu)`, or on `UUID` alone.",
        )


RULE = Rule("GS017", "object", check, RULE_KINDS)
