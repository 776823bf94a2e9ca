"""Fixtures of the linter tests."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from lint_support import TEST_CATALOGUE, TEST_RULES, FixedDate


@pytest.fixture
def test_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the CLI use the test rules and catalogue."""
    monkeypatch.setattr("gpustack.lint.rules.listed", lambda: TEST_RULES)
    monkeypatch.setattr("gpustack.lint.catalogue.load_catalogue", lambda: TEST_CATALOGUE)
    monkeypatch.setattr("gpustack.lint.engine.date", FixedDate)


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run in an empty folder, colour rules unset (CLI tests)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NO_COLOR", raising=False)
    return tmp_path


@pytest.fixture
def shared(repo: Path) -> Path:
    """../shared beside the repository; tests that need it skip when it is absent."""
    path = repo.parent / "shared"
    if not path.is_dir():
        pytest.skip(f"{path} not present")
    return path


@pytest.fixture(scope="session")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A corpus from the benchmark's seeded generator (benchmarks/corpus.py): 400 documents in
    50 files, GPU workloads with common pitfalls. Tests that edit it restore it."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import corpus

    root = tmp_path_factory.mktemp("corpus")
    corpus.write(corpus.generate(7, 400, 50), root)
    return root
