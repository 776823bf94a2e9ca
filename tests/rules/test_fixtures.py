"""Every rule fires on its ``fires-*`` fixtures at exactly the marked lines, and stays quiet
on its ``clean-*`` fixtures (conftest describes the format)."""

from __future__ import annotations

from pathlib import Path

from gpustack.lint.engine import lint
from gpustack.lint.input.load import load_text
from gpustack.lint.policy.config import Config
from gpustack.lint.rules import RULES

FIXTURES = Path(__file__).parent / "fixtures"


def test_fixture(rule_fixture, lint) -> None:  # type: ignore[no-untyped-def]
    fixture = rule_fixture
    assert fixture.rule in RULES, f"{fixture.path}: no rule {fixture.rule}"
    reported = lint(
        fixture.text, name=str(fixture.path), distribution=fixture.distribution, spec=fixture.spec,
        turn_on=(fixture.rule,),
    )
    lines = {r.line for r in reported if r.rule == fixture.rule}
    if fixture.fires:
        expected = fixture.expected_lines()
        assert expected, f"{fixture.path}: a fires fixture needs `# expect: {fixture.rule}` lines"
        assert lines == expected
    else:
        assert not lines, f"{fixture.rule} reported lines {sorted(lines)}"


def test_every_rule_has_fixtures_both_ways(rule_id: str) -> None:
    names = [p.name for p in (FIXTURES / rule_id).iterdir() if p.suffix == ".yaml" or p.is_dir()]  # folders: files linted together
    assert any(n.startswith("fires-") for n in names), f"{rule_id}: no fires-*.yaml"
    assert any(n.startswith("clean-") for n in names), f"{rule_id}: no clean-*.yaml"


def test_set_rules_are_quiet_on_partial_input() -> None:
    """A ``--partial`` set is not the whole set: set rules report nothing, and a note says so."""
    checked = 0
    for path in sorted(FIXTURES.glob("GS*/fires-*.yaml")):
        rule = RULES[path.parent.name]
        if rule.scope != "set" or rule.values:
            continue
        report = lint(load_text(str(path), path.read_text("utf-8")), Config(), partial=True)
        assert [f for f in report.findings if f.rule == rule.id] == [], path
        assert any(rule.id in note.message and "--partial" in note.message for note in report.notes)
        checked += 1
    assert checked >= 5
