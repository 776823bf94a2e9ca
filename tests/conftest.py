"""Shared fixtures: paths to the repository's data and to ../shared (skipped when absent)."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


@pytest.fixture(autouse=True)
def lint_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test's lint runs cache into a folder of its own: never into the repository's
    fixture folders, never an entry of another test's (monkeypatched) rules."""
    folder = tmp_path_factory.mktemp("lint-cache") / "cache"
    monkeypatch.setenv("GPUSTACK_CACHE_DIR", str(folder))
    return folder


@pytest.fixture
def repo() -> Path:
    return REPO


def shared_path(*parts: str) -> Path:
    """A path under ../shared, skipping the test when it is not there."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} not present")
    return path
