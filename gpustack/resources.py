"""Where the shipped data lives: the top-level ``specs/`` and ``policies/`` folders.

In a wheel they are packaged as ``gpustack/_data/<name>``; in a source checkout (editable
install, tests) they are read from the repository root.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


@cache
def data_dir(name: str) -> Path:
    """Return the folder of shipped data called ``name`` (``specs`` or ``policies``)."""
    packaged = _PACKAGE / "_data" / name
    if packaged.is_dir():
        return packaged
    return _PACKAGE.parent / name
