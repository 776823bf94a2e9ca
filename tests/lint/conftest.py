"""Fixtures of the linter tests."""

from __future__ import annotations

import pytest

from lint_support import TEST_CATALOGUE, TEST_RULES, FixedDate


@pytest.fixture
def test_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the CLI use the test rules and catalogue."""
    monkeypatch.setattr("gpustack.lint.rules.RULES", TEST_RULES)
    monkeypatch.setattr("gpustack.lint.catalogue.load_catalogue", lambda: TEST_CATALOGUE)
    monkeypatch.setattr("gpustack.lint.engine.date", FixedDate)
