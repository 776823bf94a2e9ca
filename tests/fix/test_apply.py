"""Fix rounds and the check afterwards, with test rules: a file whose fix does not parse or
does not fix keeps its text; only rules marked fixable are fixed; collisions wait a round."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import pytest

from gpustack.lint.catalogue import RuleInfo
from gpustack.lint.context import LintContext
from gpustack.lint.engine import lint
from gpustack.lint.fix import apply
from gpustack.lint.fix.apply import FixOutcome, fix
from gpustack.lint.fix.splice import Spliced
from gpustack.lint.input.load import LoadResult, load_text
from gpustack.lint.model import Hit, Resource, SetValue, Severity
from gpustack.lint.policy.config import Config
from gpustack.lint.registry import Rule
from gpustack.lint.report.model import Report


def pinned(resource: Resource, ctx: LintContext) -> Iterator[Hit]:
    """GS960: ``tag: latest`` becomes ``tag: "1"`` (the fix works)."""
    if resource.get(("tag",)) == "latest":
        yield Hit(resource, ("tag",), "latest", edits=(SetValue(("tag",), "1"),))


def labelled(resource: Resource, ctx: LintContext) -> Iterator[Hit]:
    """GS961: wants label ``a``, but its fix sets ``b`` (a broken fix)."""
    if "a" not in resource.get(("labels",), {}):
        yield Hit(resource, ("labels",), "no label a", edits=(SetValue(("labels", "b"), "x"),))


def counted(resource: Resource, ctx: LintContext) -> Iterator[Hit]:
    """GS962: ``count: 0`` becomes 1."""
    if resource.get(("count",)) == 0:
        yield Hit(resource, ("count",), "zero", edits=(SetValue(("count",), 1),))


RULES: Mapping[str, Rule] = {
    "GS960": Rule("GS960", "object", pinned),
    "GS961": Rule("GS961", "object", labelled),
    "GS962": Rule("GS962", "object", counted),
}


def info(rule: str, *, fixable: bool = True) -> RuleInfo:
    return RuleInfo(rule, rule.lower(), Severity.WARNING, "object", "S.", "R.", "Fix it.", fixable=fixable)


CATALOGUE = {rule: info(rule) for rule in RULES}


def fixed(*files: tuple[str, str], catalogue: Mapping[str, RuleInfo] = CATALOGUE) -> FixOutcome:
    loaded = LoadResult.merge(load_text(name, text) for name, text in files)

    def relint(again: LoadResult) -> Report:
        return lint(again, Config(), rules=RULES, catalogue=catalogue)

    return fix(loaded, relint(loaded), relint)


GOOD = "kind: A\napiVersion: v1\ntag: latest  # moving\nlabels: {a: y}\n"


def test_a_working_fix_is_spliced_and_the_report_is_of_the_fixed_text() -> None:
    outcome = fixed(("good.yaml", GOOD))
    assert outcome.fixed == {"good.yaml": GOOD.replace("latest", '"1"')}
    assert (outcome.count, outcome.report.findings, outcome.failures) == (1, (), ())


def test_a_fix_that_does_not_fix_leaves_its_file_as_it_was_with_an_error() -> None:
    broken = "kind: A\napiVersion: v1\ntag: latest\nlabels: {c: y}\n"
    outcome = fixed(("broken.yaml", broken), ("good.yaml", GOOD))
    assert list(outcome.fixed) == ["good.yaml"]  # the other file is still fixed
    assert [(e.file, e.message) for e in outcome.failures] == [
        ("broken.yaml", "not fixed, left as it was: GS961 is still reported at line 4 after its fix")
    ]
    assert [(f.file, f.rule) for f in outcome.report.findings] == [("broken.yaml", "GS960"), ("broken.yaml", "GS961")]


def test_a_fix_that_does_not_parse_leaves_its_file_as_it_was(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(apply, "splice", lambda text, fixes: Spliced("tag: [unclosed\n", frozenset({0}), {}))
    outcome = fixed(("good.yaml", GOOD))
    assert outcome.fixed == {}
    assert outcome.failures[0].message.startswith("not fixed, left as it was: the fixed text does not parse (line 2")


def test_only_rules_the_catalogue_marks_fixable_are_fixed() -> None:
    outcome = fixed(("good.yaml", GOOD), catalogue={**CATALOGUE, "GS960": info("GS960", fixable=False)})
    assert outcome.fixed == {} and not outcome.report.findings[0].fixable


def test_a_finding_that_a_fix_reveals_is_fixed_in_the_next_round() -> None:
    def one(resource: Resource, ctx: LintContext) -> Iterator[Hit]:
        """GS963: ``count: 1`` becomes 2; it is 1 only after GS962's fix."""
        if resource.get(("count",)) == 1:
            yield Hit(resource, ("count",), "one", edits=(SetValue(("count",), 2),))

    rules = {**RULES, "GS963": Rule("GS963", "object", one)}
    catalogue = {**CATALOGUE, "GS963": info("GS963")}

    def relint(again: LoadResult) -> Report:
        return lint(again, Config(), rules=rules, catalogue=catalogue)

    loaded = load_text("n.yaml", "kind: A\napiVersion: v1\ncount: 0\nlabels: {a: y}\n")
    outcome = fix(loaded, relint(loaded), relint)
    assert outcome.fixed == {"n.yaml": "kind: A\napiVersion: v1\ncount: 2\nlabels: {a: y}\n"}
    assert (outcome.count, outcome.report.findings) == (2, ())
