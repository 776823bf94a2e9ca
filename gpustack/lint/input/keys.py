"""Cache keys: digests of everything a cached value depends on. ``digest`` hashes parts,
``code_fingerprint`` stands for the code and data that read and lint (an edit to either is a
new key), ``canonical`` makes settings a value whose ``repr`` is the same in every process,
``contents`` digests the files the settings name.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Mapping
from dataclasses import fields, is_dataclass
from pathlib import Path, PurePath
from typing import Any


def digest(*parts: bytes | str) -> str:
    """A short hex digest of ``parts`` (blake2b: as fast as reading the bytes)."""
    hasher = hashlib.blake2b(digest_size=20)
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        hasher.update(len(data).to_bytes(8, "little"))
        hasher.update(data)
    return hasher.hexdigest()


_fingerprint: str | None = None


def code_fingerprint() -> str:
    """What decides how gpustack reads and lints, besides the input: its version, the code and
    data files of the installed package and its shipped data (the policies, whose names,
    severities and remediations the reports carry; outside the package in a checkout), by
    sizes and modification times (an edited checkout never reads an entry its old code
    wrote), Python's and PyYAML's versions."""
    global _fingerprint
    if _fingerprint is None:
        import yaml

        import gpustack
        from gpustack.shipped import data_dir

        root = os.path.dirname(gpustack.__file__)
        parts = [gpustack.__version__, sys.version, yaml.__version__, str(getattr(yaml, "__with_libyaml__", False))]
        for top in (root, *(str(data_dir(name)) for name in ("policies", "specs"))):
            if top != root and top.startswith(root + os.sep):
                continue  # packaged data: walked with the package
            for folder, subfolders, names in os.walk(top):
                subfolders[:] = sorted(name for name in subfolders if name != "__pycache__")
                for name in sorted(names):
                    if not name.endswith((".pyc", ".pyo")):
                        path = os.path.join(folder, name)
                        stat = os.stat(path)
                        parts.append(f"{os.path.relpath(path, root)}:{stat.st_size}:{stat.st_mtime_ns}")
        _fingerprint = digest(*parts)
    return _fingerprint


def canonical(value: Any) -> Any:
    """``value`` as nested tuples whose ``repr`` is the same in every process (sets sorted,
    mappings by key, dataclasses by field): a key must not change with hash randomisation."""
    if is_dataclass(value) and not isinstance(value, type):
        return (type(value).__name__, *((item.name, canonical(getattr(value, item.name))) for item in fields(value)))
    if isinstance(value, Mapping):
        return ("{", *sorted(((canonical(key), canonical(item)) for key, item in value.items()), key=repr))
    if isinstance(value, (set, frozenset)):
        return ("set", *sorted((canonical(item) for item in value), key=repr))
    if isinstance(value, (list, tuple)):
        return tuple(canonical(item) for item in value)
    if isinstance(value, PurePath):
        return str(value)
    return value


def contents(path: Path) -> list[str]:
    """Digests of a named file, or of every file under a named folder; what cannot be read
    counts as its error (the run reports it)."""
    if not os.path.isdir(path):
        try:
            return [digest(path.read_bytes())]
        except OSError as exc:
            return [f"unreadable: {exc}"]
    found = []
    for folder, subfolders, names in os.walk(path):
        subfolders.sort()
        for name in sorted(names):
            file = Path(folder, name)
            found += [str(file.relative_to(path)), *contents(file)]
    return found
