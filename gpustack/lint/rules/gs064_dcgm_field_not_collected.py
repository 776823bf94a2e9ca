"""GS064: an alert or recording rule on a DCGM field that the exporter does not collect.

dcgm-exporter exports only the fields of its counters CSV; its default files leave the
throttling-violation, ECC, pending-retirement and NVLink error counters and most profiling
pipes commented out. A rule on ``DCGM_FI_DEV_POWER_VIOLATION`` or ``DCGM_FI_DEV_ECC_DBE_VOL_TOTAL``
then reads a series that never exists: the alert never fires, a ratio is empty. What the set's
exporters collect is ``facts.dcgm_collectors``; where some exporter's counters file is one the
set does not hold, the rule stays quiet. With no exporter in the set the defaults are assumed,
and the finding is info.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.lint.context import LintContext
from gpustack.lint.facts import promql
from gpustack.lint.facts.rulefiles import RULE_KINDS
from gpustack.lint.facts.dcgm_collectors import collected
from gpustack.lint.model import Hit, Severity
from gpustack.lint.registry import Rule

FIX = (
    "Add the field to the exporter's counters CSV (the dcgm-exporter chart's `customMetrics`, the GPU Operator's "
    "`dcgmExporter.config.name` ConfigMap, or the file `-f` names), or read a field it collects."
)


def check(ctx: LintContext) -> Iterator[Hit]:
    rules = [(resource, rule) for resource in promql.rule_resources(ctx) for rule in promql.rule_expressions(resource)]
    if not rules or (ctx.cluster is not None and not collected(ctx).in_set):
        return  # with a spec, gpustack renders the exporter and its counters itself
    fields = collected(ctx)
    if fields.fields is None:
        return
    for resource, rule in rules:
        tree = promql.parse(rule.expr)
        if tree is None:
            continue
        missing = sorted(name for name in promql.metric_names(tree) if name.startswith("DCGM_FI_") and name not in fields.fields)
        if missing:
            yield Hit(
                resource,
                rule.expr_path,
                f"{rule.label} reads {', '.join(missing)}, which {fields.source} do not collect: "
                "the series never exists, so the rule never fires",
                severity=None if fields.in_set else Severity.INFO,
                fix=FIX,
            )


RULE = Rule("GS064", "set", check, RULE_KINDS)
