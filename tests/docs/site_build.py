"""Building the documentation site (``mkdocs build --strict``) for the docs tier, and what the
tier does where it cannot run: skip for a developer, fail in CI (CI=true), where .ci/run
installs what it needs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def unavailable(reason: str) -> None:
    """Skip for a developer; fail in CI, where the tier must run."""
    if in_ci():
        pytest.fail(f"docs tier cannot run in CI: {reason}", pytrace=False)
    pytest.skip(reason)


def build(config_dir: Path, site: Path) -> subprocess.CompletedProcess[str]:
    """``mkdocs build --strict`` of ``config_dir/mkdocs.yml`` into ``site``."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)]
    return subprocess.run(command, cwd=config_dir, env=env, capture_output=True, text=True)


def copy_of_the_site_sources(folder: Path) -> Path:
    """mkdocs.yml, docs/, the README its pages include and the hooks in ``folder``, to build a
    changed copy."""
    folder.mkdir(parents=True)
    shutil.copy(REPO / "mkdocs.yml", folder)
    shutil.copy(REPO / "README.md", folder)
    shutil.copytree(REPO / "docs", folder / "docs")
    shutil.copytree(REPO / "sitebuild", folder / "sitebuild", ignore=shutil.ignore_patterns("__pycache__"))
    return folder
