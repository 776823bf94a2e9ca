"""Every rule fires on its ``fires-*`` fixtures at exactly the marked lines, and stays quiet
on its ``clean-*`` fixtures (conftest describes the format)."""

from __future__ import annotations

from pathlib import Path

from gpustack.lint.rules import RULES

FIXTURES = Path(__file__).parent / "fixtures"


def test_fixture(rule_fixture, lint) -> None:  # type: ignore[no-untyped-def]
    fixture = rule_fixture
    assert fixture.rule in RULES, f"{fixture.path}: no rule {fixture.rule}"
    reported = lint(fixture.text, name=str(fixture.path), distribution=fixture.distribution, spec=fixture.spec)
    lines = {r.line for r in reported if r.rule == fixture.rule}
    if fixture.fires:
        expected = fixture.expected_lines()
        assert expected, f"{fixture.path}: a fires fixture needs `# expect: {fixture.rule}` lines"
        assert lines == expected
    else:
        assert not lines, f"{fixture.rule} reported lines {sorted(lines)}"


def test_every_rule_has_fixtures_both_ways(rule_id: str) -> None:
    names = [p.name for p in (FIXTURES / rule_id).glob("*.yaml")]
    assert any(n.startswith("fires-") for n in names), f"{rule_id}: no fires-*.yaml"
    assert any(n.startswith("clean-") for n in names), f"{rule_id}: no clean-*.yaml"
