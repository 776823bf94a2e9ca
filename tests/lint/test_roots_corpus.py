"""Linting two repositories in one run gives the same findings as linting each alone, on
../shared/corpus-gitops (52 real GitOps repositories; skipped when absent).

Its top-level folders are repositories, each with its distribution in SOURCES.tsv; pairs are
of one distribution (the run's ``--distribution``), every repository in at least one pair.
"""

from __future__ import annotations

import csv
from pathlib import Path

from gpustack.lint.engine import lint
from gpustack.lint.policy.config import Config
from gpustack.lint.report.model import Report

from lint_support import load_paths

Key = tuple[str, int, str, str]


def repositories(corpus: Path) -> dict[str | None, list[Path]]:
    """The corpus's repository folders by distribution (None: not known)."""
    found: dict[str | None, set[Path]] = {}
    with open(corpus / "SOURCES.tsv", encoding="utf-8", newline="") as stream:
        for row in csv.DictReader(stream, delimiter="\t"):
            distribution = None if row["distribution"] == "unknown" else row["distribution"]
            found.setdefault(distribution, set()).add(corpus / "corpus" / row["file"].split("/", 1)[0])
    return {distribution: sorted(folders) for distribution, folders in found.items()}


def pairs(folders: list[Path]) -> list[tuple[Path, Path]]:
    """Neighbours two by two; an odd one out goes with the first."""
    found = [(folders[i], folders[i + 1]) for i in range(0, len(folders) - 1, 2)]
    if len(folders) % 2 and len(folders) > 1:
        found.append((folders[-1], folders[0]))
    return found


def findings(*folders: Path, distribution: str | None, roots: bool) -> set[Key]:
    config = Config(distribution=distribution, roots=folders if roots else ())
    report: Report = lint(load_paths([str(folder) for folder in folders]), config)
    return {(finding.file, finding.line, finding.rule, finding.message) for finding in report.findings}


def test_two_repositories_in_one_run_give_the_findings_of_each_alone(shared: Path) -> None:
    corpus = shared / "corpus-gitops"
    checked, found, mixed = 0, 0, 0
    for distribution, folders in repositories(corpus).items():
        for a, b in pairs(folders):
            alone = findings(a, distribution=distribution, roots=False)
            alone |= findings(b, distribution=distribution, roots=False)
            assert findings(a, b, distribution=distribution, roots=True) == alone, (a.name, b.name)
            mixed += findings(a, b, distribution=distribution, roots=False) != alone
            checked, found = checked + 1, found + len(alone)
    assert checked >= 25 and found > 0
    assert mixed > 0  # without roots, some pairs of real repositories change each other's findings
