"""A small PromQL evaluator for gpustack's alert tests: synthetic series in, alert states out.

It evaluates, on the AST of the real parser (promql-parser), the subset of PromQL gpustack's
rules use, with Prometheus' semantics: instant selectors see the latest sample at most 5
minutes old and a series that left the scrape is stale at once; comparisons filter (or return
0/1 with ``bool``); vector matching with ``on``/``ignoring`` fails on duplicate series as
Prometheus does; ``and``/``or``/``unless`` are set operations; ``count``/``sum``/``max``/``min``/
``avg`` with ``by``/``without``; ``changes``/``*_over_time``. Anything else raises, so a rule that
grows beyond the subset fails its test instead of passing untested.

Alerts follow Prometheus' rule manager: pending when the expression first returns a series,
firing once it has for ``for``, and, with ``keep_firing_for``, firing on for that long after the
expression stopped returning it.

Series are written like promtool's: ``{"X{gpu=\"0\"}": "80x10 95x20 _x5"}``: space-separated
samples one step apart from t=0, ``vxN`` is N samples of v, ``_`` is a step where the series is
not in the scrape.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import promql_parser as pp

STEP = 60  # seconds between samples and between rule evaluations
LOOKBACK = 300  # Prometheus' default lookback delta

Labels = frozenset[tuple[str, str]]
Vector = dict[Labels, float]
Samples = list[float | None]  # one per step; None: not in the scrape


class Unsupported(Exception):
    """The expression uses PromQL this evaluator does not implement."""


def parse_series(spec: Mapping[str, str]) -> dict[Labels, Samples]:
    """``{'name{a="b"}': "1x3 2 _"}`` → labels → one sample (or None) per step."""
    result: dict[Labels, Samples] = {}
    for selector, text in spec.items():
        node = pp.parse(selector)
        if not isinstance(node, pp.VectorSelector):
            raise ValueError(f"not a series: {selector}")
        labels = {m.name: m.value for m in node.matchers.matchers}
        labels["__name__"] = node.name
        samples: Samples = []
        for token in text.split():
            value, _, times = token.partition("x")
            samples += [None if value == "_" else float(value)] * (int(times) if times else 1)
        result[frozenset(labels.items())] = samples
    return result


_COMPARE: dict[str, Callable[[float, float], bool]] = {
    "==": operator.eq, "!=": operator.ne, ">": operator.gt, "<": operator.lt, ">=": operator.ge, "<=": operator.le,
}
_ARITHMETIC: dict[str, Callable[[float, float], float]] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul,
    "/": lambda a, b: a / b if b else (math.nan if a == 0 else math.copysign(math.inf, a)),
}


@dataclass(frozen=True)
class Evaluator:
    series: dict[Labels, Samples]

    def instant(self, expr: str | Any, t: int) -> Vector | float:
        node = pp.parse(expr) if isinstance(expr, str) else expr
        return self._eval(node, t)

    # --- nodes ------------------------------------------------------------------------------

    def _eval(self, node: Any, t: int) -> Vector | float:
        if isinstance(node, pp.NumberLiteral):
            return float(node.val)
        if isinstance(node, pp.ParenExpr):
            return self._eval(node.expr, t)
        if isinstance(node, pp.UnaryExpr):
            value = self._eval(node.expr, t)
            return -value if isinstance(value, float) else {k: -v for k, v in _drop_name(value).items()}
        if isinstance(node, pp.VectorSelector):
            return self._select(node, t)
        if isinstance(node, pp.Call):
            return self._call(node, t)
        if isinstance(node, pp.AggregateExpr):
            return self._aggregate(node, t)
        if isinstance(node, pp.BinaryExpr):
            return self._binary(node, t)
        raise Unsupported(type(node).__name__)

    def _matching(self, selector: Any) -> list[tuple[Labels, Samples]]:
        if selector.offset is not None or selector.at is not None:
            raise Unsupported("offset/@")
        found = []
        for labels, samples in self.series.items():
            as_dict = dict(labels)
            if selector.name and as_dict.get("__name__") != selector.name:
                continue
            if all(_matches(m, as_dict.get(m.name, "")) for m in selector.matchers.matchers):
                found.append((labels, samples))
        return found

    def _select(self, selector: Any, t: int) -> Vector:
        result: Vector = {}
        step = t // STEP
        for labels, samples in self._matching(selector):
            for i in range(min(step, len(samples) - 1), -1, -1):
                if (step - i) * STEP > LOOKBACK:
                    break
                if samples[i] is None:  # left the scrape: stale from here on
                    break
                result[labels] = samples[i]  # type: ignore[assignment]
                break
        return result

    def _range(self, matrix: Any, t: int) -> dict[Labels, list[float]]:
        seconds = int(matrix.range.total_seconds())
        result = {}
        for labels, samples in self._matching(matrix.vector_selector):
            window = [
                value
                for i, value in enumerate(samples)
                if value is not None and t - seconds < i * STEP <= t
            ]
            if window:
                result[labels] = window
        return result

    def _call(self, node: Any, t: int) -> Vector:
        name = node.func.name
        functions: dict[str, Callable[[list[float]], float]] = {
            "changes": lambda w: float(sum(1 for a, b in zip(w, w[1:]) if a != b)),
            "max_over_time": max,
            "min_over_time": min,
            "last_over_time": lambda w: w[-1],
            "count_over_time": lambda w: float(len(w)),
        }
        if name not in functions or len(node.args) != 1 or not isinstance(node.args[0], pp.MatrixSelector):
            raise Unsupported(f"function {name}")
        windows = self._range(node.args[0], t)
        keep_name = name == "last_over_time"
        return {
            (labels if keep_name else _without_name(labels)): functions[name](window)
            for labels, window in windows.items()
        }

    def _aggregate(self, node: Any, t: int) -> Vector:
        op = str(node.op)
        functions: dict[str, Callable[[list[float]], float]] = {
            "count": lambda v: float(len(v)), "sum": math.fsum, "max": max, "min": min,
            "avg": lambda v: math.fsum(v) / len(v),
        }
        if op not in functions or node.param is not None:
            raise Unsupported(f"aggregation {op}")
        vector = self._vector(node.expr, t)
        modifier = node.modifier
        groups: dict[Labels, list[float]] = {}
        for labels, value in vector.items():
            if modifier is None:
                key: Labels = frozenset()
            elif modifier.type == pp.AggModifierType.By:
                key = frozenset((k, v) for k, v in labels if k in modifier.labels)
            else:
                key = frozenset((k, v) for k, v in labels if k not in modifier.labels and k != "__name__")
            groups.setdefault(key, []).append(value)
        return {key: functions[op](values) for key, values in groups.items()}

    def _binary(self, node: Any, t: int) -> Vector | float:
        op = str(node.op)
        lhs, rhs = self._eval(node.lhs, t), self._eval(node.rhs, t)
        modifier = node.modifier
        returns_bool = modifier is not None and modifier.return_bool
        if op in ("and", "or", "unless"):
            return _set_operation(op, self._as_vector(lhs), self._as_vector(rhs), modifier)
        if isinstance(lhs, float) and isinstance(rhs, float):
            if op in _COMPARE:
                if not returns_bool:
                    raise Unsupported("scalar comparison without bool")
                return float(_COMPARE[op](lhs, rhs))
            return _ARITHMETIC[op](lhs, rhs)
        if isinstance(lhs, float) or isinstance(rhs, float):
            return _vector_scalar(op, lhs, rhs, returns_bool)
        return _vector_vector(op, lhs, rhs, modifier, returns_bool)

    def _vector(self, node: Any, t: int) -> Vector:
        return self._as_vector(self._eval(node, t))

    @staticmethod
    def _as_vector(value: Vector | float) -> Vector:
        if isinstance(value, float):
            raise Unsupported("a scalar where a vector is needed")
        return value


def _matches(matcher: Any, value: str) -> bool:
    op = matcher.op
    if op == pp.MatchOp.Equal:
        return value == matcher.value
    if op == pp.MatchOp.NotEqual:
        return value != matcher.value
    found = re.fullmatch(matcher.value, value) is not None
    return found if op == pp.MatchOp.Re else not found


def _without_name(labels: Labels) -> Labels:
    return frozenset((k, v) for k, v in labels if k != "__name__")


def _drop_name(vector: Vector) -> Vector:
    return {_without_name(labels): value for labels, value in vector.items()}


def _signature(labels: Labels, modifier: Any) -> Labels:
    matching = modifier.matching if modifier is not None else None
    if matching is not None and matching.type == pp.LabelModifierType.Include:
        return frozenset((k, v) for k, v in labels if k in matching.labels)
    ignored = set(matching.labels) if matching is not None else set()
    return frozenset((k, v) for k, v in labels if k not in ignored and k != "__name__")


def _set_operation(op: str, lhs: Vector, rhs: Vector, modifier: Any) -> Vector:
    right = {_signature(labels, modifier) for labels in rhs}
    if op == "and":
        return {k: v for k, v in lhs.items() if _signature(k, modifier) in right}
    if op == "unless":
        return {k: v for k, v in lhs.items() if _signature(k, modifier) not in right}
    left = {_signature(labels, modifier) for labels in lhs}
    return {**lhs, **{k: v for k, v in rhs.items() if _signature(k, modifier) not in left}}


def _vector_scalar(op: str, lhs: Vector | float, rhs: Vector | float, returns_bool: bool) -> Vector:
    vector, scalar, vector_left = (lhs, rhs, True) if isinstance(rhs, float) else (rhs, lhs, False)
    assert isinstance(vector, dict) and isinstance(scalar, float)
    result: Vector = {}
    for labels, value in vector.items():
        a, b = (value, scalar) if vector_left else (scalar, value)
        if op in _COMPARE:
            if returns_bool:
                result[_without_name(labels)] = float(_COMPARE[op](a, b))
            elif _COMPARE[op](a, b):
                result[labels] = value
        else:
            result[_without_name(labels)] = _ARITHMETIC[op](a, b)
    return result


def _vector_vector(op: str, lhs: Vector, rhs: Vector, modifier: Any, returns_bool: bool) -> Vector:
    if modifier is not None and str(modifier.card) != "VectorMatchCardinality.OneToOne":
        raise Unsupported("group_left/group_right")
    right: dict[Labels, float] = {}
    for labels, value in rhs.items():
        signature = _signature(labels, modifier)
        if signature in right:
            raise ValueError(f"many-to-many matching: duplicate series on the right for {sorted(signature)}")
        right[signature] = value
    result: Vector = {}
    produced: set[Labels] = set()
    matching = modifier.matching if modifier is not None else None
    for labels, value in lhs.items():
        signature = _signature(labels, modifier)
        if signature not in right:
            continue
        if signature in produced:
            raise ValueError(f"many-to-one matching must be explicit: duplicate series on the left for {sorted(signature)}")
        produced.add(signature)
        out = _result_labels(labels, matching, keep_name=op in _COMPARE and not returns_bool)
        if op in _COMPARE and not returns_bool:
            if _COMPARE[op](value, right[signature]):
                result[out] = value
        elif op in _COMPARE:
            result[out] = float(_COMPARE[op](value, right[signature]))
        else:
            result[out] = _ARITHMETIC[op](value, right[signature])
    return result


def _result_labels(labels: Labels, matching: Any, *, keep_name: bool) -> Labels:
    """Prometheus' resultMetric for one-to-one matching: on() keeps only its labels, ignoring() drops its."""
    if matching is not None and matching.type == pp.LabelModifierType.Include:
        return frozenset((k, v) for k, v in labels if k in matching.labels)
    dropped = set(matching.labels) if matching is not None else set()
    if not keep_name:
        dropped.add("__name__")
    return frozenset((k, v) for k, v in labels if k not in dropped)


# --- alerts ---------------------------------------------------------------------------------


def _seconds(duration: str | None) -> int:
    if not duration:
        return 0
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}
    return int(sum(int(n) * units[u] for n, u in re.findall(r"(\d+)(ms|s|m|h|d)", duration)))


@dataclass(frozen=True)
class AlertState:
    labels: dict[str, str]
    state: str  # "pending" or "firing"
    value: float


def alert_timeline(rule: Mapping[str, Any], series: Mapping[str, str], minutes: int) -> list[list[AlertState]]:
    """The rule's alerts after each evaluation, one entry per minute from t=0 to ``minutes``."""
    evaluator = Evaluator(parse_series(series))
    tree = pp.parse(rule["expr"])
    hold, keep = _seconds(rule.get("for")), _seconds(rule.get("keep_firing_for"))
    active: dict[Labels, dict[str, Any]] = {}  # labels → {since, false_since, value, firing}
    timeline = []
    for step in range(minutes + 1):
        t = step * STEP
        result = evaluator.instant(tree, t)
        vector = _drop_name(result) if isinstance(result, dict) else {}
        for labels, value in vector.items():
            alert = active.setdefault(labels, {"since": t, "firing": False})
            alert.update(false_since=None, value=value)
            if t - alert["since"] >= hold:
                alert["firing"] = True
        for labels in list(active):
            if labels in vector:
                continue
            alert = active[labels]
            if alert["false_since"] is None:
                alert["false_since"] = t
            if not (alert["firing"] and t - alert["false_since"] < keep):
                del active[labels]
        timeline.append(
            [
                AlertState(
                    {**dict(labels), **rule.get("labels", {})},
                    "firing" if alert["firing"] else "pending",
                    alert["value"],
                )
                for labels, alert in sorted(active.items(), key=lambda item: sorted(item[0]))
            ]
        )
    return timeline


def firing(timeline: list[list[AlertState]], minute: int) -> list[dict[str, str]]:
    """Label sets of the alerts firing after the evaluation at ``minute``."""
    return [alert.labels for alert in timeline[minute] if alert.state == "firing"]
