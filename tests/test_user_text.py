"""What users read cites only what they have (repository files, upstream URLs), installs from
the repository under the distribution's own name, and links nowhere the project does not own."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

# Documents users do not have: design notes, field reports, the project's working files.
PRIVATE_CITATION = re.compile(r"\b[Ss]eed \d{3}\b|\bDESIGN\b|upstream-facts|§\s?\d|\b[Ii]ssue \d+\b")
# `gpustack` on PyPI is another project, `gpustack-*` its family: a requirement naming either.
FOREIGN_INSTALL = re.compile(r"pip install(?:\s+-\S+)*\s+[\"']?gpustack(?:[-\[=<>~!\s\"'`)]|$)")
# Domains the project does not own.
FOREIGN_URL = re.compile(r"https?://(?:[\w-]+\.)*gpustack\.(?:io|dev|ai|com|org)\b")

USER_FACING = (
    "README.md", "docs/**/*.md", "mkdocs.yml", "policies/*.yaml", "examples/**/*.yaml", "specs/*", "output/**/*",
    "action.yml", ".pre-commit-hooks.yaml", "gpustack/render/crd_schemas/*.json", "gpustack/lint/policy.schema.json",
)


# What contributors read: code, tests and their fixtures, benchmarks, CI. This file spells the
# patterns out, so it is the one exception.
CONTRIBUTOR_FACING = (
    "gpustack/**/*.py", "gpustack/**/*.yaml", "tests/**/*.py", "tests/**/*.yaml", "benchmarks/*.py",
    "benchmarks/*.md", ".ci/*", "pyproject.toml", "sitebuild/*.py",
)


def user_facing_files(repo: Path) -> list[Path]:
    return sorted({path for pattern in USER_FACING for path in repo.glob(pattern) if path.is_file()})


def test_code_cites_only_what_its_readers_have(repo: Path) -> None:
    found = [
        f"{path.relative_to(repo)}:{number}: {line.strip()}"
        for pattern in CONTRIBUTOR_FACING
        for path in sorted(repo.glob(pattern))
        if path.is_file() and path.name != Path(__file__).name
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if PRIVATE_CITATION.search(line)
    ]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("pattern", [PRIVATE_CITATION, FOREIGN_INSTALL, FOREIGN_URL], ids=["citation", "install", "url"])
def test_user_facing_text_is_clean(repo: Path, pattern: re.Pattern[str]) -> None:
    found = [
        f"{path.relative_to(repo)}:{number}: {line.strip()}"
        for path in user_facing_files(repo)
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert not found, "\n".join(found)


def test_the_patterns_catch_what_they_are_for() -> None:
    assert PRIVATE_CITATION.search("as seed 123 §11 did") and PRIVATE_CITATION.search("(DESIGN section 10)")
    assert FOREIGN_INSTALL.search("pip install gpustack") and FOREIGN_INSTALL.search("pip install -U gpustack-runtime")
    assert not FOREIGN_INSTALL.search("pip install 'kube-gpustack[render] @ git+https://github.com/o/gpustack@v1'")
    assert not FOREIGN_INSTALL.search("pip install '.[render]'")
    assert FOREIGN_URL.search("https://gpustack.io/docs") and not FOREIGN_URL.search("apiVersion: gpustack.io/v1alpha1")


def test_the_distribution_is_not_the_taken_name(repo: Path) -> None:
    import tomllib

    name = tomllib.loads((repo / "pyproject.toml").read_text(encoding="utf-8"))["project"]["name"]
    assert name == "kube-gpustack"
