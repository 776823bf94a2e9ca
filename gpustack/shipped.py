"""Where the shipped data lives: the top-level ``specs/`` and ``policies/`` folders, and the
linter's tables in ``gpustack/lint/data``.

In a wheel ``specs/`` and ``policies/`` are packaged as ``gpustack/_data/<name>``; in a source
checkout (editable install, tests) they are read from the repository root.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

_PACKAGE = Path(__file__).resolve().parent


@cache
def data_dir(name: str) -> Path:
    """Return the folder of shipped data called ``name`` (``specs`` or ``policies``)."""
    packaged = _PACKAGE / "_data" / name
    if packaged.is_dir():
        return packaged
    return _PACKAGE.parent / name


def lint_data(name: str) -> Any:
    """The YAML file ``gpustack/lint/data/<name>`` as plain data.

    Read with libyaml (PyYAML's C loader), which every lint loads anyway: ruamel.yaml would add
    its import to each run. The files are written so that YAML 1.1 and 1.2 read them alike (a
    test checks), and the callers cache what they build from them.
    """
    import yaml

    text = (_PACKAGE / "lint" / "data" / name).read_text(encoding="utf-8")
    return yaml.load(text, Loader=yaml.CSafeLoader)


@cache
def default_critical_xids() -> tuple[int, ...]:
    """The XIDs that alert by default (lint's GS015 and the rendered alerts): xid-catalogue.yaml."""
    return tuple(lint_data("xid-catalogue.yaml")["defaultCritical"])
