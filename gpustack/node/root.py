"""The filesystem a node is read from: ``/`` on the node itself, a fixture tree in tests."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpustack.errors import GpustackError

LIVE = Path("/")


class Unreadable(Exception):
    """A file or folder exists but this user may not read it (the runner reports "n/a")."""

    def __init__(self, path: Path) -> None:
        super().__init__(f"cannot read {path} as this user: run as root to check this layer")


class Malformed(Exception):
    """A config file exists but does not parse; the message names the file and the reason."""


@contextmanager
def _readable(path: Path) -> Iterator[None]:
    """pathlib's exists() and is_dir() raise PermissionError below a folder this user cannot enter."""
    try:
        yield
    except PermissionError:
        raise Unreadable(path) from None


@dataclass(frozen=True)
class NodeRoot:
    """Absolute node paths resolved under ``base``."""

    base: Path = LIVE

    @classmethod
    def open(cls, path: str | Path) -> NodeRoot:
        """Check that ``path`` is a folder; a bad ``--root`` is a usage error, not a traceback."""
        base = Path(path)
        if not base.is_dir():
            raise GpustackError(f"--root {path}: not a folder (give / or the root of a node's filesystem)")
        return cls(base.resolve())

    @property
    def is_live(self) -> bool:
        """Whether this is the running system (only then can NVML be asked)."""
        return self.base == LIVE

    def path(self, absolute: str) -> Path:
        return self.base / absolute.lstrip("/")

    def exists(self, absolute: str) -> bool:
        path = self.path(absolute)
        with _readable(path):
            return path.exists()

    def is_dir(self, absolute: str) -> bool:
        path = self.path(absolute)
        with _readable(path):
            return path.is_dir()

    def is_file(self, absolute: str) -> bool:
        path = self.path(absolute)
        with _readable(path):
            return path.is_file()

    def read_text(self, absolute: str) -> str | None:
        """The file's text, ``None`` when it is absent."""
        data = self.read_bytes(absolute)
        return None if data is None else data.decode("utf-8", errors="replace")

    def read_bytes(self, absolute: str) -> bytes | None:
        path = self.path(absolute)
        try:
            return path.read_bytes()
        except PermissionError:
            raise Unreadable(path) from None
        except OSError:
            return None  # absent, a folder, or a sysfs attribute that refuses reads

    def read_toml(self, absolute: str) -> dict[str, Any] | None:
        """Parsed TOML, ``None`` when absent; ``Malformed`` names the file and the syntax error."""
        text = self.read_text(absolute)
        if text is None:
            return None
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise Malformed(f"{absolute}: {exc}") from None

    def entries(self, absolute: str, pattern: str = "*") -> list[str]:
        """Absolute node paths of the entries of a folder matching ``pattern``, sorted."""
        if not self.is_dir(absolute):
            return []
        folder = self.path(absolute)
        if not os.access(folder, os.R_OK | os.X_OK):
            raise Unreadable(folder)  # glob would quietly find nothing
        return ["/" + str(match.relative_to(self.base)) for match in sorted(folder.glob(pattern))]
