"""Autofix golden files: ``fixtures/GSNNN/before-*.yaml`` fixed by ``--fix`` is ``after-*.yaml``.

- ``before-NAME.yaml`` must make its rule fire, fixable; ``after-NAME.yaml`` is what the fix
  writes (every fixable rule's fixes, through the real loader, engine and splicer).
- ``unfixed-NAME.yaml`` makes its rule fire where no safe fix exists: --fix leaves it as it is.
- Each case is fixed with its own rule selected, so an opt-in rule (GS023) runs on its files.
- An optional first-line comment sets the cluster context: ``# distribution: k3s``, or
  ``# spec: examples/k3s-l4.yaml`` (a spec, relative to the repository root).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from gpustack.lint.engine import lint
from gpustack.lint.fix.apply import FixOutcome, fix
from gpustack.lint.input.load import load_text
from gpustack.lint.policy.config import Config
from gpustack.lint.policy.selection import Choice, Selection
from gpustack.lint.report.model import Report

REPO = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "fixtures"
_DISTRIBUTION = re.compile(r"^#\s*distribution:\s*(\S+)")
_SPEC = re.compile(r"^#\s*spec:\s*(\S+)")


def context(text: str, turn_on: tuple[str, ...] = ()) -> Config:
    """The cluster context a fixture's first line names, with the opt-in rules ``turn_on``
    selected besides the default ones."""
    distribution, spec = _DISTRIBUTION.match(text), _SPEC.match(text)
    return Config(
        distribution=distribution.group(1) if distribution else None,
        spec=REPO / spec.group(1) if spec else None,
        selection=Selection((Choice(on=frozenset(turn_on)),)) if turn_on else Selection(),
    )


@dataclass(frozen=True)
class Fixed:
    text: str  # after fixing
    before: Report
    outcome: FixOutcome


def fix_text(
    text: str, *, name: str = "fixture.yaml", config: Config | None = None, turn_on: tuple[str, ...] = ()
) -> Fixed:
    """``gpustack lint --fix`` on one manifest stream, without writing anything; ``turn_on``:
    opt-in rules selected besides the default ones."""
    config = config or context(text, turn_on)
    loaded = load_text(name, text)
    report = lint(loaded, config)
    outcome = fix(loaded, report, lambda again: lint(again, config))
    return Fixed(outcome.fixed.get(name, text), report, outcome)


@dataclass(frozen=True)
class Case:
    rule: str
    name: str
    kind: str  # "before" | "unfixed"

    @property
    def path(self) -> Path:
        return FIXTURES / self.rule / f"{self.kind}-{self.name}.yaml"

    @property
    def after(self) -> Path:
        return FIXTURES / self.rule / f"after-{self.name}.yaml"

    def __str__(self) -> str:
        return f"{self.rule}/{self.kind}-{self.name}"


def cases(kind: str) -> list[Case]:
    return [
        Case(path.parent.name, path.stem.split("-", 1)[1], kind)
        for path in sorted(FIXTURES.glob(f"GS[0-9][0-9][0-9]/{kind}-*.yaml"))
    ]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    for argname, kind in (("golden", "before"), ("unfixed", "unfixed")):
        if argname in metafunc.fixturenames:
            metafunc.parametrize(argname, cases(kind), ids=str)


@pytest.fixture(name="fix_text")
def fix_text_() -> Callable[..., Fixed]:
    """``fix_text(text, name=..., config=None, turn_on=())``: --fix on a manifest stream
    (context from its first line when ``config`` is None), nothing written."""
    return fix_text


@pytest.fixture
def corpus() -> Path:
    """../shared/corpus (real GPU manifests); tests that need it skip when it is absent."""
    path = REPO.parent / "shared" / "corpus"
    if not path.is_dir():
        pytest.skip(f"{path} not present")
    return path


@pytest.fixture(name="all_cases")
def all_cases_() -> Callable[[str], list[Case]]:
    return cases
