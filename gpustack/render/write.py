"""Write a rendered tree atomically, and compare one with a folder (``render --check``).

The tree is written into a temporary folder next to the target, then swapped in with two
renames, so a failed render leaves the previous output untouched and no partial files. Paths
are checked before anything is written: relative, no ``..``, so nothing lands outside the
target. An existing target is replaced only when it is empty or earlier gpustack output (its
README.md carries the marker), never, say, a repository given by mistake as ``-o .``.
"""

from __future__ import annotations

import difflib
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from gpustack.errors import GpustackError
from gpustack.render import readme


def safe_path(path: str) -> PurePosixPath:
    """A relative path inside the output folder, or ``GpustackError``."""
    pure = PurePosixPath(path)
    if not path or pure.is_absolute() or "\\" in path or any(part in ("..", ".", "") for part in path.split("/")):
        raise GpustackError(f"refusing to write {path!r}: not a plain relative path inside the output folder")
    return pure


def _check_replaceable(target: Path) -> None:
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        raise GpustackError(f"{target} exists and is not a folder")
    if not target.is_dir() or not any(target.iterdir()):
        return
    marker = target / readme.PATH
    try:
        generated = marker.is_file() and marker.read_text(encoding="utf-8").startswith(readme.MARKER)
    except (OSError, UnicodeDecodeError):
        generated = False
    if not generated:
        raise GpustackError(
            f"{target} is not empty and holds no gpustack output (no generated {readme.PATH}); "
            "choose a new or empty folder"
        )


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_tree(files: Mapping[str, str], target: Path) -> None:
    """Replace ``target`` with exactly ``files`` ({relative path: text})."""
    paths = {path: safe_path(path) for path in files}
    _check_replaceable(target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    except OSError as exc:
        raise GpustackError(f"cannot write {target}: {exc.strerror or exc}") from None
    old = staging.with_suffix(".old")
    try:
        staging.chmod(0o777 & ~_umask())  # mkdtemp makes it 0700
        for path, text in files.items():
            file = staging.joinpath(*paths[path].parts)
            file.parent.mkdir(parents=True, exist_ok=True)
            file.write_text(text, encoding="utf-8", newline="\n")
        if target.exists():
            target.rename(old)
        try:
            staging.rename(target)
        except OSError:
            if old.exists():
                old.rename(target)
            raise
    except OSError as exc:
        raise GpustackError(f"cannot write {target}: {exc.strerror or exc}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        shutil.rmtree(old, ignore_errors=True)


def read_tree(folder: Path) -> dict[str, str | None]:
    """Files under ``folder`` as {relative path: text}; ``None`` for files that are not UTF-8 text."""
    result: dict[str, str | None] = {}
    if not folder.is_dir():
        return result
    for file in sorted(p for p in folder.rglob("*") if p.is_file()):
        try:
            result[file.relative_to(folder).as_posix()] = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            result[file.relative_to(folder).as_posix()] = None
    return result


def diff_tree(files: Mapping[str, str], folder: Path) -> str:
    """A unified diff from ``folder`` (on disk) to ``files`` (fresh render); empty when equal."""
    current = read_tree(folder)
    chunks = []
    for path in sorted(set(files) | set(current)):
        old, new = current.get(path), files.get(path)
        if old == new:
            continue
        label = f"{folder.as_posix()}/{path}".lstrip("/")
        if old is None and path in current:
            chunks.append(f"Binary or unreadable file {label} differs\n")
            continue
        chunks.extend(
            difflib.unified_diff(
                (old or "").splitlines(keepends=True),
                (new or "").splitlines(keepends=True),
                fromfile=f"a/{label}" if path in current else "/dev/null",
                tofile=f"b/{label}" if path in files else "/dev/null",
            )
        )
    return "".join(chunks)
