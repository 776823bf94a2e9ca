"""GS041: a counter function over a DCGM gauge (``rate(DCGM_FI_DEV_GPU_UTIL[5m])``), or a
gauge function over a DCGM counter.

``rate``, ``irate``, ``increase`` and ``resets`` assume a series that only grows and read
every drop as a counter reset: over a utilisation, a temperature or a memory reading they
return the per-second change of the level (and treat each fall as a reset), not the level.
``delta`` and ``idelta`` assume a gauge and misread a counter's reset as a drop. Which DCGM
metrics are which is data (``data/dcgm-metrics.yaml``, dcgm-exporter's own declarations);
``deriv`` and ``predict_linear`` over a gauge are correct and never reported.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache

from gpustack.lint.context import LintContext
from gpustack.lint.facts import promql
from gpustack.lint.facts.rulefiles import RULE_KINDS
from gpustack.lint.model import Hit, Resource
from gpustack.lint.registry import Rule
from gpustack.shipped import lint_data

COUNTER_FUNCTIONS = frozenset({"rate", "irate", "increase", "resets"})
GAUGE_FUNCTIONS = frozenset({"delta", "idelta"})
XID = "DCGM_FI_DEV_XID_ERRORS"


@dataclass(frozen=True)
class MetricTypes:
    gauges: frozenset[str]
    counters: frozenset[str]


@cache
def metric_types() -> MetricTypes:
    data: Mapping[str, list[str]] = lint_data("dcgm-metrics.yaml")
    return MetricTypes(frozenset(data["gauges"]), frozenset(data["counters"]))


def _misuses(expr: str) -> Iterator[tuple[promql.RangeCall, str, bool]]:
    """(call, metric, whether the metric is a gauge) for each misused range call."""
    tree = promql.parse(expr)
    if tree is None:
        return
    types = metric_types()
    seen: set[tuple[str, str]] = set()
    for call in promql.range_calls(tree):
        for metric in sorted(call.metrics):
            gauge = metric in types.gauges
            misused = call.function in COUNTER_FUNCTIONS if gauge else call.function in GAUGE_FUNCTIONS
            if (gauge or metric in types.counters) and misused and (call.function, metric) not in seen:
                seen.add((call.function, metric))
                yield call, metric, gauge


def _gauge_fix(metric: str) -> str:
    if metric == XID:
        return (
            f"`{XID}` holds the code of the last XID: alert on `changes({XID}[5m]) > 0` (a new code) "
            f"or on the code itself, e.g. `{XID} == 79`."
        )
    return (
        f"Read the level over the window with `avg_over_time({metric}[5m])` or `max_over_time({metric}[5m])`, "
        f"or compare `{metric}` itself; `deriv()` if the trend is what you mean."
    )


def check(resource: Resource, ctx: LintContext) -> Iterator[Hit]:
    for rule in promql.rule_expressions(resource):
        for call, metric, gauge in _misuses(rule.expr):
            if gauge:
                yield Hit(
                    resource,
                    rule.expr_path,
                    f"{rule.label} applies {call} to {metric}, a gauge (dcgm-exporter's type): {call} is for "
                    "counters; it yields how fast the value changes and reads every fall as a counter reset, "
                    "not the value itself",
                    fix=_gauge_fix(metric),
                )
            else:
                yield Hit(
                    resource,
                    rule.expr_path,
                    f"{rule.label} applies {call} to {metric}, a counter (dcgm-exporter's type): {call} is for "
                    "gauges and reads a counter reset (exporter or driver restart) as a large negative change",
                    fix=f"Use `increase({metric}[<window>])`, which accounts for counter resets.",
                )


RULE = Rule("GS041", "object", check, RULE_KINDS)
