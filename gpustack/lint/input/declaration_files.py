"""The files under a linted tree that may declare chart releases outside the manifests: shell
scripts, Markdown and Makefiles (``helm install`` commands) and Terraform (``helm_release``).

``releases/outside.py`` reads them; a run's cache keys its settings by their content too
(``pipeline``), which needs the list only: kept apart from the reading, so that a run whose
report is cached imports none of it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from functools import cache

from gpustack.lint.input.filekinds import SCRIPT_SUFFIXES  # the same scripts and notes, read as nodes' files

SCRIPT_NAMES = frozenset({"Makefile", "makefile", "GNUmakefile"})
TERRAFORM_SUFFIX = ".tf"
MAX_BYTES = 1_000_000  # a declaration file larger than this is not read
MAX_FILES = 2_000  # files read per tree, at most
SKIPPED_FOLDERS = frozenset({".git", "node_modules", ".terraform", "vendor"})


def declaration_files(root: str | os.PathLike[str] | None) -> tuple[str, ...]:
    """The scripts, Markdown files, Makefiles and Terraform files under ``root``."""
    return _declaration_files(os.fspath(root)) if root is not None and os.path.isdir(root) else ()


@cache
def _declaration_files(root: str) -> tuple[str, ...]:
    return tuple(_walk(root))


def _walk(root: str) -> Iterator[str]:
    count = 0
    for folder, folders, files in os.walk(root):
        folders[:] = sorted(f for f in folders if f not in SKIPPED_FOLDERS and not f.startswith("."))
        for name in sorted(files):
            if name.endswith(SCRIPT_SUFFIXES) or name in SCRIPT_NAMES:  # .tf among them
                path = os.path.join(folder, name)
                try:
                    if os.path.getsize(path) > MAX_BYTES:
                        continue
                except OSError:
                    continue
                yield path
                count += 1
                if count >= MAX_FILES:
                    return
