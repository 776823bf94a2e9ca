"""Fixtures of the linter tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from lint_support import TEST_CATALOGUE, TEST_RULES, FixedDate


@pytest.fixture
def test_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the CLI use the test rules and catalogue."""
    monkeypatch.setattr("gpustack.lint.rules.RULES", TEST_RULES)
    monkeypatch.setattr("gpustack.lint.catalogue.load_catalogue", lambda: TEST_CATALOGUE)
    monkeypatch.setattr("gpustack.lint.engine.date", FixedDate)


@pytest.fixture
def shared(repo: Path) -> Path:
    """../shared beside the repository; tests that need it skip when it is absent."""
    path = repo.parent / "shared"
    if not path.is_dir():
        pytest.skip(f"{path} not present")
    return path
