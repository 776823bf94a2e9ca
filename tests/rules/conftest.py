"""Rule fixtures, Polaris style: ``fixtures/GSNNN/fires-*.yaml`` and ``clean-*.yaml``.

- In a ``fires-*`` fixture every line that must be reported for the rule carries a trailing
  ``# expect: GSNNN`` (several ids: ``# expect: GS002, GS023``); the reported lines of that
  rule must be exactly those.
- A ``clean-*`` fixture must produce no finding of its rule.
- A fixture is linted with its own rule selected, so an opt-in rule (``optIn: true``) runs on its
  fixtures; other opt-in rules stay off, as in a default run.
- An optional first-line comment sets the cluster context: ``# distribution: k3s``, or
  ``# spec: l4-hami.yaml`` (a spec under ``specs/``, as ``gpustack lint --spec`` reads it).

Files go through the real loader and engine (suppressions, catalogue severities and all).
Test modules use the pytest fixtures below: ``rule_fixture`` (parametrized over all fixture
files), ``rule_id`` (over all rules) and ``lint``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from gpustack.lint.engine import lint
from gpustack.lint.input.load import load_text
from gpustack.lint.policy.config import Config
from gpustack.lint.policy.selection import Choice, Selection
from gpustack.lint.rules import RULES

FIXTURES = Path(__file__).parent / "fixtures"
SPECS = Path(__file__).parent / "specs"
_EXPECT = re.compile(r"#\s*expect:\s*(GS\d{3}(?:\s*,\s*GS\d{3})*)")
_DISTRIBUTION = re.compile(r"^#\s*distribution:\s*(\S+)")
_SPEC = re.compile(r"^#\s*spec:\s*(\S+)")


@dataclass(frozen=True)
class Fixture:
    path: Path
    rule: str
    fires: bool
    text: str

    @property
    def id(self) -> str:
        return f"{self.rule}/{self.path.stem}"

    @property
    def distribution(self) -> str | None:
        match = _DISTRIBUTION.match(self.text)
        return match.group(1) if match else None

    @property
    def spec(self) -> Path | None:
        match = _SPEC.match(self.text)
        return SPECS / match.group(1) if match else None

    def expected_lines(self, rule: str | None = None) -> set[int]:
        """Lines marked ``# expect:`` for ``rule`` (default: the fixture's own)."""
        rule = rule or self.rule
        return {
            number
            for number, line in enumerate(self.text.splitlines(), start=1)
            if (match := _EXPECT.search(line)) and rule in re.split(r"\s*,\s*", match.group(1))
        }


def fixtures() -> list[Fixture]:
    found = []
    for path in sorted(FIXTURES.glob("GS[0-9][0-9][0-9]/*.yaml")):
        kind = path.name.split("-", 1)[0]
        if kind in ("fires", "clean"):
            found.append(Fixture(path, path.parent.name, kind == "fires", path.read_text("utf-8")))
    return found


@dataclass(frozen=True)
class Reported:
    rule: str
    line: int
    column: int
    message: str
    severity: str


def lint_text(
    text: str,
    *,
    name: str = "fixture.yaml",
    distribution: str | None = None,
    spec: Path | None = None,
    turn_on: tuple[str, ...] = (),
) -> list[Reported]:
    """Every finding of the real loader and engine on one manifest stream: the rules of a
    default run, and ``turn_on`` (opt-in rules, selected by id) besides."""
    loaded = load_text(name, text)
    assert not loaded.errors, loaded.errors
    selection = Selection((Choice(on=frozenset(turn_on)),)) if turn_on else Selection()
    report = lint(loaded, Config(distribution=distribution, spec=spec, selection=selection))
    assert not report.errors, report.errors  # a rule that raised
    return [Reported(f.rule, f.line, f.column, f.message, str(f.severity)) for f in report.findings]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize ``rule_fixture`` over every fixture file and ``rule_id`` over every rule."""
    if "rule_fixture" in metafunc.fixturenames:
        found = fixtures()
        metafunc.parametrize("rule_fixture", found, ids=[f.id for f in found])
    if "rule_id" in metafunc.fixturenames:
        metafunc.parametrize("rule_id", sorted(RULES))


@pytest.fixture(name="lint")
def lint_fixture_() -> Callable[..., list[Reported]]:
    """``lint(text, name=..., distribution=None, spec=None, turn_on=())``: every finding on a
    manifest stream."""
    return lint_text
