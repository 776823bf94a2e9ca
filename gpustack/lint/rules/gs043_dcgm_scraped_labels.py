"""GS043: a PromQL rule that reads DCGM series with labels they do not have once scraped.

dcgm-exporter writes the GPU's workload as ``namespace``/``pod``/``container``. Its
ServiceMonitors (the dcgm-exporter chart's and the GPU Operator's) keep ``honorLabels: false``,
so prometheus-operator's target labels (the exporter pod's own namespace, pod and container)
win and Prometheus renames the workload's to ``exported_namespace``/``exported_pod``/
``exported_container``. A selector, ``by`` or ``on`` naming the plain labels on a DCGM metric
then reads the exporter, not the workload. And ``DCGM_FI_DEV_GPU_UTIL`` is not reported for MIG
instances: on MIG pools an alert on it alone never fires.

The scrape is known from a ServiceMonitor in the set (endpoints without ``honorLabels: true``
whose name or selector names a DCGM exporter), an exporter chart release in the set whose
ServiceMonitor is on (off, something else scrapes the exporter, as it may choose), or a spec
(gpustack renders the ServiceMonitor with ``honorLabels: false``); MIG pools from the spec.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpustack.lint.context import LintContext
from gpustack.lint.facts import promql
from gpustack.lint.facts.rulefiles import RULE_KINDS
from gpustack.lint.facts.operands import exporter_service_monitors
from gpustack.lint.model import Hit, Resource, get_value
from gpustack.lint.registry import Rule

WORKLOAD_LABELS = ("namespace", "pod", "container")
GPU_UTIL = "DCGM_FI_DEV_GPU_UTIL"
MIG_FALLBACK = "DCGM_FI_PROF_GR_ENGINE_ACTIVE"


def check(ctx: LintContext) -> Iterator[Hit]:
    renamed = _renamed_by(ctx)
    mig = _mig_pools(ctx)
    if renamed is None and not mig:
        return
    for resource in promql.rule_resources(ctx):
        for rule in promql.rule_expressions(resource):
            tree = promql.parse(rule.expr)
            if tree is None:
                continue
            if renamed is not None:
                for label in _workload_labels_on_dcgm(tree):
                    yield Hit(
                        resource,
                        rule.expr_path,
                        f"{rule.label} reads `{label}` on DCGM series; scraped with honorLabels false "
                        f"({renamed}) that label is the exporter pod's own and the workload's is "
                        f"`exported_{label}`",
                        fix=f"Use `exported_{label}` (or set honorLabels: true on the exporter's ServiceMonitor).",
                    )
            if mig and GPU_UTIL in promql.metric_names(tree) and MIG_FALLBACK not in promql.metric_names(tree):
                yield Hit(
                    resource,
                    rule.expr_path,
                    f"{rule.label} reads {GPU_UTIL}, which MIG instances do not report (pools {', '.join(mig)}): "
                    "it never fires for a MIG GPU",
                    fix=f"Fall back to the engine activity: `({GPU_UTIL} or 100 * {MIG_FALLBACK})`.",
                )


def _renamed_by(ctx: LintContext) -> str | None:
    """What scrapes DCGM series with honorLabels false, in words; None when nothing in sight does."""
    for monitor in ctx.of_kind("ServiceMonitor"):
        if _scrapes_dcgm(monitor) and not _honours_labels(monitor):
            return f"ServiceMonitor {monitor.ref.name}"
    for release, keys in exporter_service_monitors(ctx):
        # honorLabels defaults to false in both charts' values.
        if get_value(release.values, *keys, "honorLabels", default=False) is not True:
            return f"the ServiceMonitor of {release}"
    if ctx.cluster is not None:
        return "the ServiceMonitor gpustack renders for the spec's exporter"
    return None


def _scrapes_dcgm(monitor: Resource) -> bool:
    selector = get_value(monitor.data, "spec", "selector", default={})
    return "dcgm" in f"{monitor.ref.name} {selector}".lower()


def _honours_labels(monitor: Resource) -> bool:
    endpoints = get_value(monitor.data, "spec", "endpoints", default=[])
    return bool(endpoints) and all(isinstance(e, dict) and e.get("honorLabels") is True for e in endpoints)


def _mig_pools(ctx: LintContext) -> list[str]:
    if ctx.cluster is None:
        return []
    return [
        pool.name
        for pool in ctx.cluster.pools
        if any(r.startswith("nvidia.com/mig-") for r in pool.resources) or "nvidia.com/mig.config" in pool.labels
    ]


def _workload_labels_on_dcgm(tree: Any) -> list[str]:
    """Workload labels a DCGM selector matches on, or a grouping/join over DCGM metrics names."""
    import promql_parser as pp

    found: list[str] = []

    def dcgm(node: Any) -> bool:
        return any(name.startswith("DCGM_") for name in promql.metric_names(node))

    def visit(node: Any) -> None:
        if isinstance(node, pp.VectorSelector) and dcgm(node):
            found.extend(m.name for m in node.matchers.matchers if m.name in WORKLOAD_LABELS)
        elif isinstance(node, pp.AggregateExpr) and node.modifier is not None and dcgm(node.expr):
            found.extend(label for label in node.modifier.labels if label in WORKLOAD_LABELS)
        elif isinstance(node, pp.BinaryExpr) and node.modifier is not None and node.modifier.matching is not None:
            if dcgm(node):
                found.extend(label for label in node.modifier.matching.labels if label in WORKLOAD_LABELS)

    pp.walk(tree, visit)
    return list(dict.fromkeys(found))


RULE = Rule("GS043", "set", check, RULE_KINDS)
