"""Each fixable rule's golden before/after files: exact text, idempotent, clean afterwards
(conftest describes the format)."""

from __future__ import annotations

from pathlib import Path

from gpustack.lint.catalogue import load_catalogue
from gpustack.lint.input.load import load_text

FIXTURES = Path(__file__).parent / "fixtures"


def test_before_fires_fixable_and_fixes_to_after(golden, fix_text) -> None:  # type: ignore[no-untyped-def]
    fixed = fix_text(golden.path.read_text("utf-8"), turn_on=(golden.rule,))
    fired = [f for f in fixed.before.findings if f.rule == golden.rule]
    assert fired and all(f.fixable for f in fired), fired
    assert not fixed.outcome.failures and not fixed.outcome.notes
    assert fixed.text == golden.after.read_text("utf-8")


def test_fixing_after_changes_nothing(golden, fix_text) -> None:  # type: ignore[no-untyped-def]
    after = golden.after.read_text("utf-8")
    fixed = fix_text(after, turn_on=(golden.rule,))
    assert fixed.text == after and fixed.outcome.count == 0


def test_after_parses_as_before_and_nothing_fixable_remains(golden, fix_text) -> None:  # type: ignore[no-untyped-def]
    before = load_text("before.yaml", golden.path.read_text("utf-8"))
    after = load_text("after.yaml", golden.after.read_text("utf-8"))
    assert not after.errors and len(after.resources) == len(before.resources)
    remaining = fix_text(golden.after.read_text("utf-8"), turn_on=(golden.rule,)).before.findings
    assert [f for f in remaining if f.rule == golden.rule or f.fixable] == []


def test_unfixed_fires_without_a_fix_and_stays_as_it_is(unfixed, fix_text) -> None:  # type: ignore[no-untyped-def]
    text = unfixed.path.read_text("utf-8")
    fixed = fix_text(text, turn_on=(unfixed.rule,))
    fired = [f for f in fixed.before.findings if f.rule == unfixed.rule]
    assert fired and not any(f.fixable for f in fired), fired
    assert fixed.text == text


def test_every_fixable_rule_has_goldens_and_every_golden_a_pair(all_cases) -> None:  # type: ignore[no-untyped-def]
    fixable = {info.id for info in load_catalogue().values() if info.fixable}
    assert {case.rule for case in all_cases("before")} == fixable
    befores = {(case.rule, case.name) for case in all_cases("before")}
    afters = {(path.parent.name, path.stem.split("-", 1)[1]) for path in FIXTURES.glob("GS*/after-*.yaml")}
    assert afters == befores
