"""PromQL in PrometheusRules and in Prometheus rule files, read with a real parser (promql-parser).

A rule file (``rule_files:`` of Prometheus's own config, https://prometheus.io/docs/prometheus/latest/configuration/recording_rules/)
is a document holding ``groups:`` and nothing else, each group a name and ``rules``: the same
groups a PrometheusRule holds under ``spec``, loaded by Prometheus without any selector.

``promql_parser`` is imported on first use only, so linting a set without PrometheusRules
never loads it. Expressions that do not parse (Helm templates left in, typos) yield nothing:
the rules that use this module judge only what Prometheus itself would accept.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from gpustack.lint.facts.rulefiles import RULE_GROUP_KIND, is_rule_file
from gpustack.lint.model import Path, Resource

if TYPE_CHECKING:
    from gpustack.lint.context import LintContext


# Functions and aggregations whose output samples are input samples, so a comparison after
# them still compares the metric's own value (``max_over_time(X[5m]) == 79`` is about code 79).
_VALUE_KEEPING_CALLS = frozenset(
    {"last_over_time", "max_over_time", "min_over_time", "label_replace", "label_join", "sort", "sort_desc"}
)
_VALUE_KEEPING_AGGREGATIONS = frozenset({"max", "min", "topk", "bottomk"})

_COMPARISONS: dict[str, Callable[[float, float], bool]] = {
    "==": operator.eq,
    "!=": operator.ne,
    ">": operator.gt,
    "<": operator.lt,
    ">=": operator.ge,
    "<=": operator.le,
}
_MIRRORED = {"==": "==", "!=": "!=", ">": "<", "<": ">", ">=": "<=", "<=": ">="}


@dataclass(frozen=True)
class RuleExpr:
    """One alerting or recording rule of a PrometheusRule, with its path in the object."""

    path: Path  # ("spec", "groups", g, "rules", r); a rule file's ("groups", g, "rules", r)
    alert: str | None
    record: str | None
    expr: str

    @property
    def expr_path(self) -> Path:
        return (*self.path, "expr")

    @property
    def label(self) -> str:
        """How a message names the rule: ``alert GPUIdleButAllocated``."""
        return f"alert {self.alert}" if self.alert else f"record {self.record or '<unnamed>'}"


def rule_resources(ctx: LintContext) -> list[Resource]:
    """The set's PrometheusRules and rule files, in input order."""
    return [r for r in ctx.of_kind(RULE_GROUP_KIND, None) if r.kind == RULE_GROUP_KIND or is_rule_file(r)]


def rule_expressions(resource: Resource) -> Iterator[RuleExpr]:
    """Every rule with an ``expr`` in a PrometheusRule's ``spec.groups[].rules[]`` (the CRD
    allows int or string), or a rule file's ``groups[].rules[]``."""
    prefix: Path = ("spec", "groups") if resource.kind == RULE_GROUP_KIND else ("groups",)
    if resource.kind != RULE_GROUP_KIND and not is_rule_file(resource):
        return
    groups = resource.get(prefix)
    if not isinstance(groups, list):
        return
    for g, group in enumerate(groups):
        rules = group.get("rules") if isinstance(group, dict) else None
        if not isinstance(rules, list):
            continue
        for r, rule in enumerate(rules):
            if not isinstance(rule, dict) or isinstance(rule.get("expr"), bool):
                continue
            expr = rule.get("expr")
            if isinstance(expr, (str, int, float)) and str(expr).strip():
                yield RuleExpr(
                    (*prefix, g, "rules", r),
                    _text(rule.get("alert")),
                    _text(rule.get("record")),
                    str(expr),
                )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


@lru_cache(maxsize=1024)
def parse(expr: str) -> Any | None:
    """The AST of ``expr`` (a ``promql_parser.Expr``), or None when it is not valid PromQL."""
    import promql_parser

    try:
        return promql_parser.parse(expr)
    except ValueError:
        return None


def metric_names(node: Any) -> frozenset[str]:
    """Names of the series an expression selects (``foo{}`` or ``{__name__="foo"}``)."""
    import promql_parser

    names: set[str] = set()

    def visit(child: Any) -> None:
        if isinstance(child, promql_parser.VectorSelector):
            names.update(_selector_names(child))

    promql_parser.walk(node, visit)
    return frozenset(names)


# Functions whose result is how a series changes, not its value.
_CHANGE_CALLS = frozenset({"rate", "irate", "increase", "delta", "idelta", "deriv", "resets", "changes"})


def level_names(node: Any) -> frozenset[str]:
    """Names of the series whose values an expression carries on, left out where only their
    change is (``rate()``, ``delta()``, ``deriv()``, ...)."""
    import promql_parser as pp

    if isinstance(node, pp.VectorSelector):
        return frozenset(_selector_names(node))
    if isinstance(node, pp.MatrixSelector):
        return level_names(node.vector_selector)
    if isinstance(node, (pp.ParenExpr, pp.SubqueryExpr, pp.UnaryExpr, pp.AggregateExpr)):
        return level_names(node.expr)
    if isinstance(node, pp.Call):
        if node.func.name in _CHANGE_CALLS:
            return frozenset()
        return frozenset().union(*(level_names(arg) for arg in node.args if isinstance(arg, pp.Expr)))
    if isinstance(node, pp.BinaryExpr):
        return level_names(node.lhs) | level_names(node.rhs)
    return frozenset()  # number and string literals


def _selector_names(selector: Any) -> set[str]:
    import promql_parser

    if selector.name:
        return {selector.name}
    return {
        matcher.value
        for matcher in selector.matchers.matchers
        if matcher.name == "__name__" and matcher.op == promql_parser.MatchOp.Equal
    }


@dataclass(frozen=True)
class Join:
    """A binary operation between two vectors with explicit ``on(...)`` / ``ignoring(...)``."""

    operator: str
    on: bool  # on(...) when True, ignoring(...) when False
    labels: tuple[str, ...]
    metrics: frozenset[str]  # series selected by either operand

    def __str__(self) -> str:
        return f"{self.operator} {'on' if self.on else 'ignoring'}({', '.join(self.labels)})"


def joins(node: Any) -> Iterator[Join]:
    """Every vector matching with an explicit label list in ``node``, outermost first."""
    import promql_parser

    found: list[Join] = []

    def visit(child: Any) -> None:
        if not isinstance(child, promql_parser.BinaryExpr) or child.modifier is None:
            return
        matching = child.modifier.matching
        if matching is None:
            return
        found.append(
            Join(
                str(child.op),
                matching.type == promql_parser.LabelModifierType.Include,
                tuple(matching.labels),
                metric_names(child.lhs) | metric_names(child.rhs),
            )
        )

    promql_parser.walk(node, visit)
    yield from found


@dataclass(frozen=True)
class Source:
    """Where a metric carries the value asked about: its sample value, or one of its labels.

    ``DCGM_FI_DEV_XID_ERRORS`` holds the last XID code as its value (a gauge);
    ``DCGM_EXP_XID_ERRORS_COUNT`` counts XIDs with the code in label ``xid``.
    """

    metric: str
    label: str | None = None


def value_coverage(node: Any, source: Source, candidates: Iterable[int]) -> frozenset[int] | None:
    """Which of ``candidates`` make ``node`` return series when ``source`` reports that value.

    None when ``node`` does not read ``source.metric`` at all. A term that reads the metric
    without comparing its value (``changes(X[5m]) > 0``, a bare ``X``) covers every value.
    ``and`` intersects, ``or`` unites, ``unless`` subtracts; other arithmetic covers everything.
    """
    return _Coverage(source, frozenset(candidates)).of(node)[0]


@dataclass(frozen=True)
class _Coverage:
    source: Source
    every: frozenset[int]

    def of(self, node: Any) -> tuple[frozenset[int] | None, bool]:
        """(covered values or None, whether the samples still are the metric's value)."""
        import promql_parser as pp

        if isinstance(node, pp.VectorSelector):
            return self._selector(node)
        if isinstance(node, pp.MatrixSelector):
            return self._selector(node.vector_selector)
        if isinstance(node, (pp.ParenExpr, pp.SubqueryExpr)):
            return self.of(node.expr)
        if isinstance(node, pp.UnaryExpr):
            return self.of(node.expr)[0], False
        if isinstance(node, pp.Call):
            parts = [self.of(arg) for arg in node.args if isinstance(arg, pp.Expr)]
            covered = _union(part[0] for part in parts)
            keeps = node.func.name in _VALUE_KEEPING_CALLS and any(part[1] for part in parts)
            return covered, keeps
        if isinstance(node, pp.AggregateExpr):
            covered, keeps = self.of(node.expr)
            return covered, keeps and str(node.op) in _VALUE_KEEPING_AGGREGATIONS
        if isinstance(node, pp.BinaryExpr):
            return self._binary(node)
        return None, False  # number and string literals

    def _selector(self, selector: Any) -> tuple[frozenset[int] | None, bool]:
        if self.source.metric not in _selector_names(selector):
            return None, False
        if self.source.label is None:
            return self.every, True
        label = self.source.label
        matchers = [m for m in selector.matchers.matchers if m.name == label]
        return frozenset(v for v in self.every if all(_matches(m, str(v)) for m in matchers)), False

    def _binary(self, node: Any) -> tuple[frozenset[int] | None, bool]:
        op = str(node.op)
        lhs, lhs_keeps = self.of(node.lhs)
        rhs, rhs_keeps = self.of(node.rhs)
        if op == "and":
            if lhs is None or rhs is None:
                return lhs if rhs is None else rhs, lhs_keeps
            return lhs & rhs, lhs_keeps
        if op == "or":
            return _union((lhs, rhs)), False
        if op == "unless":
            return (lhs - rhs if lhs is not None and rhs is not None else lhs), lhs_keeps
        returns_bool = node.modifier is not None and node.modifier.return_bool
        if op in _COMPARISONS and not returns_bool:
            threshold_rhs, threshold_lhs = _number(node.rhs), _number(node.lhs)
            if lhs is not None and lhs_keeps and threshold_rhs is not None:
                return frozenset(v for v in lhs if _COMPARISONS[op](v, threshold_rhs)), True
            if rhs is not None and rhs_keeps and threshold_lhs is not None:
                return frozenset(v for v in rhs if _COMPARISONS[_MIRRORED[op]](v, threshold_lhs)), True
            return _union((lhs, rhs)), lhs_keeps if rhs is None else False
        covered = _union((lhs, rhs))
        return (self.every if covered is not None else None), False


def _union(parts: Iterable[frozenset[int] | None]) -> frozenset[int] | None:
    present = [part for part in parts if part is not None]
    return frozenset().union(*present) if present else None


def _number(node: Any) -> float | None:
    import promql_parser as pp

    while isinstance(node, pp.ParenExpr):
        node = node.expr
    return node.val if isinstance(node, pp.NumberLiteral) else None


def _matches(matcher: Any, value: str) -> bool:
    import promql_parser as pp

    if matcher.op == pp.MatchOp.Equal:
        return value == matcher.value
    if matcher.op == pp.MatchOp.NotEqual:
        return value != matcher.value
    try:
        found = re.fullmatch(matcher.value, value) is not None
    except re.error:
        return True
    return found if matcher.op == pp.MatchOp.Re else not found


@dataclass(frozen=True)
class Comparison:
    """A comparison operator between two operands, with the series whose values each side
    compares (``level_names``: ``rate(X[5m]) > 1`` compares how fast X changes, not X)."""

    operator: str
    lhs: frozenset[str]
    rhs: frozenset[str]

    def above(self, metric: str) -> bool:
        """Whether it asks for ``metric`` above something (``X > 90``, ``90 <= X``)."""
        return (self.operator in (">", ">=") and metric in self.lhs) or (
            self.operator in ("<", "<=") and metric in self.rhs
        )


def comparisons(node: Any) -> Iterator[Comparison]:
    """Every comparison (``==``, ``!=``, ``>``, ``<``, ``>=``, ``<=``) in ``node``, outermost first."""
    import promql_parser

    found: list[Comparison] = []

    def visit(child: Any) -> None:
        if isinstance(child, promql_parser.BinaryExpr) and str(child.op) in _COMPARISONS:
            found.append(Comparison(str(child.op), level_names(child.lhs), level_names(child.rhs)))

    promql_parser.walk(node, visit)
    yield from found


@dataclass(frozen=True)
class RangeCall:
    """A function applied to the raw samples of one series selector: ``rate(X[5m])``,
    ``delta(X[10m:1m])``."""

    function: str
    metrics: frozenset[str]  # series the range selects

    def __str__(self) -> str:
        return f"{self.function}()"


def range_calls(node: Any) -> Iterator[RangeCall]:
    """Every call whose argument is a range over a plain selector (``X[5m]``, or a subquery
    ``X[5m:1m]`` of one), outermost first. A range over a computed expression (``sum(X)[5m:]``)
    is not a series' raw samples and is left out."""
    import promql_parser as pp

    found: list[RangeCall] = []

    def visit(child: Any) -> None:
        if not isinstance(child, pp.Call):
            return
        for arg in child.args:
            selector = None
            if isinstance(arg, pp.MatrixSelector):
                selector = arg.vector_selector
            elif isinstance(arg, pp.SubqueryExpr):
                inner = arg.expr
                while isinstance(inner, pp.ParenExpr):
                    inner = inner.expr
                selector = inner if isinstance(inner, pp.VectorSelector) else None
            if selector is not None:
                found.append(RangeCall(child.func.name, frozenset(_selector_names(selector))))

    pp.walk(node, visit)
    yield from found
