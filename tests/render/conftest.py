"""Render fixtures: each example rendered once per session, and small specs rendered per test."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from promtool_support import find_promtool
from render_helpers import EXAMPLES, Result, render_file, spec_document

from gpustack.yamlio import dump


@pytest.fixture(scope="session")
def examples() -> dict[str, Result]:
    """``{example file stem: (rendered, tree)}`` for every examples/*.yaml."""
    return {path.stem: render_file(path) for path in EXAMPLES}


@pytest.fixture
def render_spec(tmp_path: Path) -> Callable[..., Result]:
    """Render the minimal spec (K3s 1.36, one L4 pool) with ``spec`` sections merged over it."""

    def run(**spec: Any) -> Result:
        file = tmp_path / "spec.yaml"
        file.write_text(dump(spec_document(**spec)), encoding="utf-8")
        return render_file(file)

    return run


@pytest.fixture(scope="session")
def promtool() -> str:
    """Prometheus's promtool (Debian's prometheus package; .ci/run installs it)."""
    return find_promtool()
