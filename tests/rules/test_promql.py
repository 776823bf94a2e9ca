"""gpustack.lint.facts.promql: rule expressions, joins and value coverage on a real PromQL AST."""

from __future__ import annotations

import subprocess
import sys

import pytest

from gpustack.lint.facts import promql
from gpustack.lint.model import Resource

XID = promql.Source("DCGM_FI_DEV_XID_ERRORS")
XID_COUNT = promql.Source("DCGM_EXP_XID_ERRORS_COUNT", label="xid")
CRITICAL = (31, 43, 79, 92)


def tree(expr: str) -> object:
    parsed = promql.parse(expr)
    assert parsed is not None, expr
    return parsed


def test_rule_expressions_yield_alerts_and_records_with_paths() -> None:
    data = {
        "kind": "PrometheusRule",
        "spec": {
            "groups": [
                {"name": "a", "rules": [{"alert": "Hot", "expr": "DCGM_FI_DEV_GPU_TEMP > 85"}]},
                {"name": "r", "rules": [{"record": "r", "expr": 1}]},
                {"name": "b", "rules": [{"alert": "NoExpr"}, "not a rule", {"alert": "Bool", "expr": True}]},
                {"name": "c"},
            ]
        },
    }
    rules = list(promql.rule_expressions(Resource("f.yaml", data, lambda path: (1, 1))))
    assert [(r.label, r.expr, r.expr_path) for r in rules] == [
        ("alert Hot", "DCGM_FI_DEV_GPU_TEMP > 85", ("spec", "groups", 0, "rules", 0, "expr")),
        ("record r", "1", ("spec", "groups", 1, "rules", 0, "expr")),
    ]


@pytest.mark.parametrize("expr", ["", "DCGM_FI_DEV_GPU_TEMP > {{ .Values.t }}", "rate(x[5m]", "a and and b"])
def test_parse_gives_none_for_what_is_not_promql(expr: str) -> None:
    assert promql.parse(expr) is None


def test_metric_names_include_name_matchers_and_range_selectors() -> None:
    expr = 'changes(DCGM_FI_DEV_XID_ERRORS[5m]) > 0 and {__name__="DCGM_FI_DEV_GPU_UTIL"} < 5 or {__name__=~"x.*"}'
    assert promql.metric_names(tree(expr)) == {"DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_GPU_UTIL"}


def test_joins_report_on_and_ignoring_with_their_operands() -> None:
    joins = list(promql.joins(tree("DCGM_FI_DEV_GPU_UTIL < 5 and on(gpu) DCGM_FI_DEV_FB_USED > 1024")))
    assert [(str(j), j.on, j.labels, j.metrics) for j in joins] == [
        ("and on(gpu)", True, ("gpu",), {"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED"})
    ]
    nested = list(promql.joins(tree("(a / ignoring(Hostname) group_left b) * on(UUID) c")))
    assert [str(j) for j in nested] == ["* on(UUID)", "/ ignoring(Hostname)"]


@pytest.mark.parametrize(
    "expr",
    ["a + b", "a and b", "a > 5", "sum by (gpu) (DCGM_FI_DEV_GPU_UTIL)", "a == bool 1"],
)
def test_operations_without_explicit_matching_are_no_joins(expr: str) -> None:
    assert list(promql.joins(tree(expr))) == []


@pytest.mark.parametrize(
    ("expr", "covered"),
    [
        ("DCGM_FI_DEV_XID_ERRORS > 0", CRITICAL),
        ("DCGM_FI_DEV_XID_ERRORS != 0", CRITICAL),
        ("DCGM_FI_DEV_XID_ERRORS", CRITICAL),
        ("changes(DCGM_FI_DEV_XID_ERRORS[5m]) > 0", CRITICAL),
        ("DCGM_FI_DEV_XID_ERRORS == 79", (79,)),
        ("79 == DCGM_FI_DEV_XID_ERRORS", (79,)),
        ("DCGM_FI_DEV_XID_ERRORS > 60", (79, 92)),
        ("(60) < DCGM_FI_DEV_XID_ERRORS", (79, 92)),
        ("changes(DCGM_FI_DEV_XID_ERRORS[5m]) > 0 and DCGM_FI_DEV_XID_ERRORS == 79", (79,)),
        ("DCGM_FI_DEV_XID_ERRORS == 31 or DCGM_FI_DEV_XID_ERRORS == 43", (31, 43)),
        ("DCGM_FI_DEV_XID_ERRORS > 0 unless DCGM_FI_DEV_XID_ERRORS == 43", (31, 79, 92)),
        ("max by (Hostname, gpu) (last_over_time(DCGM_FI_DEV_XID_ERRORS[5m])) == 92", (92,)),
        ("count(DCGM_FI_DEV_XID_ERRORS == 31) > 0", (31,)),
        ("DCGM_FI_DEV_XID_ERRORS == 79 and on(Hostname) up == 1", (79,)),
        ("DCGM_FI_DEV_XID_ERRORS == 1", ()),
    ],
)
def test_value_coverage_of_the_xid_gauge(expr: str, covered: tuple[int, ...]) -> None:
    assert promql.value_coverage(tree(expr), XID, CRITICAL) == frozenset(covered)


@pytest.mark.parametrize("expr", ["DCGM_FI_DEV_GPU_TEMP > 85", "vector(1)", "up == 0 or absent(foo)"])
def test_value_coverage_is_none_when_the_metric_is_not_read(expr: str) -> None:
    assert promql.value_coverage(tree(expr), XID, CRITICAL) is None


@pytest.mark.parametrize(
    ("expr", "covered"),
    [
        ("increase(DCGM_EXP_XID_ERRORS_COUNT[5m]) > 0", CRITICAL),
        ('increase(DCGM_EXP_XID_ERRORS_COUNT{xid=~"79|92"}[5m]) > 0', (79, 92)),
        ('DCGM_EXP_XID_ERRORS_COUNT{xid="43"} > 0', (43,)),
        ('DCGM_EXP_XID_ERRORS_COUNT{xid!="43"} > 0', (31, 79, 92)),
        ('DCGM_EXP_XID_ERRORS_COUNT{xid!~"3.*|4.*"} > 0', (79, 92)),
    ],
)
def test_value_coverage_of_a_label_source(expr: str, covered: tuple[int, ...]) -> None:
    assert promql.value_coverage(tree(expr), XID_COUNT, CRITICAL) == frozenset(covered)


def test_the_parser_is_imported_only_when_used() -> None:
    code = (
        "import sys; import gpustack.lint.facts.promql, gpustack.lint.rules; "
        "assert 'promql_parser' not in sys.modules, 'imported eagerly'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_range_calls_name_the_function_and_the_series_of_plain_ranges() -> None:
    calls = promql.range_calls(
        tree(
            "rate(DCGM_FI_DEV_GPU_UTIL[5m]) + irate((DCGM_FI_DEV_FB_USED)[5m:1m])"
            " + deriv(sum(DCGM_FI_DEV_GPU_TEMP)[10m:]) + avg(DCGM_FI_DEV_POWER_USAGE)"
        )
    )
    assert [(call.function, sorted(call.metrics)) for call in calls] == [
        ("rate", ["DCGM_FI_DEV_GPU_UTIL"]),
        ("irate", ["DCGM_FI_DEV_FB_USED"]),
    ]
