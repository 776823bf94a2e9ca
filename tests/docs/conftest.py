"""The documentation site, built once per session for the build and browser tests."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
from site_build import REPO, build, unavailable


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built from the repository as it is."""
    try:
        import material  # noqa: F401
        import mkdocs  # noqa: F401
    except ImportError:
        unavailable("mkdocs or mkdocs-material not installed (pip install '.[docs]')")
    folder = tmp_path_factory.mktemp("site")
    started = time.monotonic()
    result = build(REPO, folder)
    print(f"\nmkdocs build --strict: {time.monotonic() - started:.1f} s", file=sys.stderr)
    assert result.returncode == 0, result.stderr
    return folder
