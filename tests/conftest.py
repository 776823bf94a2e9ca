"""Shared fixtures: paths to the repository's data and to ../shared (skipped when absent)."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


@pytest.fixture
def repo() -> Path:
    return REPO


def shared_path(*parts: str) -> Path:
    """A path under ../shared, skipping the test when it is not there."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} not present")
    return path
