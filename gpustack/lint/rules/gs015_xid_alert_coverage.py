"""GS015: DCGM alerting without (complete) XID alerts.

XIDs are the driver's error reports; by default 31, 43, 79, 92 are the ones to
page on (``options.critical_xids``, configurable in ``.gpustack.yaml``). A set of
PrometheusRules that alerts on DCGM metrics but never on an XID misses a GPU fallen off the
bus (79) entirely.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.lint.context import LintContext
from gpustack.lint.facts import promql
from gpustack.lint.facts.rulefiles import RULE_KINDS
from gpustack.lint.model import Hit, Resource
from gpustack.lint.registry import Rule

# The exporter's gauge holds the code of the last XID; its optional counter labels each
# XID with the code (dcgm-exporter's etc/default-counters.csv).
XID_SOURCES = (
    promql.Source("DCGM_FI_DEV_XID_ERRORS"),
    promql.Source("DCGM_EXP_XID_ERRORS_COUNT", label="xid"),
)


def check(ctx: LintContext) -> Iterator[Hit]:
    critical = frozenset(ctx.options.critical_xids)
    first_dcgm_alert: tuple[Resource, promql.RuleExpr] | None = None
    first_xid_alert: tuple[Resource, promql.RuleExpr] | None = None
    covered: set[int] = set()
    for resource in promql.rule_resources(ctx):
        for rule in promql.rule_expressions(resource):
            tree = promql.parse(rule.expr) if rule.alert else None
            if tree is None:
                continue
            if first_dcgm_alert is None and any(n.startswith("DCGM_") for n in promql.metric_names(tree)):
                first_dcgm_alert = (resource, rule)
            for source in XID_SOURCES:
                codes = promql.value_coverage(tree, source, critical)
                if codes is not None:
                    covered |= codes
                    first_xid_alert = first_xid_alert or (resource, rule)
    if first_dcgm_alert is None:
        return
    if first_xid_alert is None:
        resource, rule = first_dcgm_alert
        yield Hit(
            resource,
            (*rule.path, "alert"),
            "PrometheusRules alert on DCGM metrics but none on DCGM_FI_DEV_XID_ERRORS: "
            "driver errors such as XID 79 (GPU fallen off the bus) go unnoticed",
        )
        return
    missing = sorted(critical - covered)
    if missing:
        resource, rule = first_xid_alert
        codes = ", ".join(str(code) for code in missing)
        yield Hit(
            resource,
            rule.expr_path,
            f"XID alerts in the set miss critical code(s) {codes}",
            fix=f"Alert on these codes too (e.g. `DCGM_FI_DEV_XID_ERRORS == {missing[0]}`), "
            "or on any XID with `changes(DCGM_FI_DEV_XID_ERRORS[5m]) > 0`.",
        )


RULE = Rule("GS015", "set", check, RULE_KINDS)
