"""Rule fixtures, Polaris style: ``fixtures/GSNNN/fires-*.yaml`` and ``clean-*.yaml``.

- In a ``fires-*`` fixture every line that must be reported for the rule carries a trailing
  ``# expect: GSNNN`` (several ids: ``# expect: GS002, GS023``); the reported lines of that
  rule must be exactly those.
- A ``clean-*`` fixture must produce no finding of its rule.
- An optional first-line comment ``# distribution: k3s`` sets the cluster context.

Files are read by the real loader and every rule of the registry runs on them with the
engine's scope dispatch (registry docstring). Test modules use the pytest fixtures below:
``rule_fixture`` (parametrized over all fixture files), ``rule_id`` (over all rules), ``lint``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from gpustack.lint.context import LintContext
from gpustack.lint.load import load_text
from gpustack.lint.model import Hit, Resource
from gpustack.lint.podspec import extract_all
from gpustack.lint.rules import RULES

FIXTURES = Path(__file__).parent / "fixtures"
_EXPECT = re.compile(r"#\s*expect:\s*(GS\d{3}(?:\s*,\s*GS\d{3})*)")
_DISTRIBUTION = re.compile(r"^#\s*distribution:\s*(\S+)")


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
    severity: str | None  # the rule's own severity for this hit; None: the catalogue default


def lint_text(text: str, *, name: str = "fixture.yaml", distribution: str | None = None) -> list[Reported]:
    """Every rule's hits on one manifest stream, with 1-based positions."""
    loaded = load_text(name, text)
    assert not loaded.errors, loaded.errors
    return lint_resources(loaded.resources, distribution=distribution)


def lint_resources(resources: tuple[Resource, ...], *, distribution: str | None = None) -> list[Reported]:
    ctx = LintContext(resources, extract_all(resources), distribution=distribution)
    hits: list[tuple[str, Hit]] = []
    for rule in RULES.values():
        if rule.scope == "pod":
            targets: tuple[object, ...] = tuple(p for p in ctx.pod_specs if rule.applies_to(p.resource.kind))
        elif rule.scope == "object":
            targets = tuple(r for r in resources if rule.applies_to(r.kind))
        else:
            targets = (None,)
        for target in targets:
            found = rule.check(ctx) if target is None else rule.check(target, ctx)
            hits += [(rule.id, hit) for hit in found]
    reported = []
    for rule_id, hit in hits:
        line, column = hit.resource.locate(hit.path)
        severity = str(hit.severity) if hit.severity is not None else None
        reported.append(Reported(rule_id, line, column, hit.message, severity))
    return sorted(reported, key=lambda r: (r.line, r.column, r.rule))


def lint_fixture(fixture: Fixture) -> list[Reported]:
    return lint_text(fixture.text, name=str(fixture.path), distribution=fixture.distribution)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize ``rule_fixture`` over every fixture file and ``rule_id`` over every rule."""
    if "rule_fixture" in metafunc.fixturenames:
        found = fixtures()
        metafunc.parametrize("rule_fixture", found, ids=[f.id for f in found])
    if "rule_id" in metafunc.fixturenames:
        metafunc.parametrize("rule_id", sorted(RULES))


@pytest.fixture
def lint() -> Callable[..., list[Reported]]:
    """``lint(text, distribution=None)``: every rule's hits on a manifest stream."""
    return lint_text
