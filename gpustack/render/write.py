"""Write a rendered tree atomically, and compare one with a folder (``render --check``).

The tree is written into a temporary folder next to the target, then swapped in with two
renames, so a failed render leaves the previous output untouched and no partial files (the
current folder, ``-o .``, keeps its place: its entries are moved out and in, and moved back
on a failure). Paths
are checked before anything is written: relative, no ``..``, so nothing lands outside the
target. An existing target is replaced only when it is empty or holds nothing but earlier
gpustack output: the files its generated README.md lists (and a lint cache), never a file
someone added (an overlay, a nested ``.git``), nor, say, a repository given as ``-o .``.

A render holds a lock on its temporary folder while it runs; the next render of the same
target removes the temporary folders nobody holds (left by a render that was killed).
"""

from __future__ import annotations

import contextlib
import difflib
import fcntl
import os
import re
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path, PurePosixPath

from gpustack.errors import GpustackError
from gpustack.lint.input.cache import is_cache_folder
from gpustack.render.stackfiles import readme

SHOWN_FOREIGN = 10  # files named in the refusal; the rest are counted


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
    try:
        ours = readme.generated_paths((target / readme.PATH).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        ours = None
    if ours is None:
        raise GpustackError(
            f"{target} is not empty and holds no gpustack output (no generated {readme.PATH}); "
            "choose a new or empty folder"
        )
    foreign = _foreign(target, ours)
    if foreign:
        shown = ", ".join(foreign[:SHOWN_FOREIGN])
        more = f" and {len(foreign) - SHOWN_FOREIGN} more" if len(foreign) > SHOWN_FOREIGN else ""
        raise GpustackError(
            f"{target} holds files gpustack did not write: {shown}{more}; render replaces the whole "
            "folder: move them out, or render into another folder"
        )


def _foreign(target: Path, ours: frozenset[str]) -> list[str]:
    """What ``target`` holds besides the files ``ours`` names: other files, links, special
    files, folders (named once, with a trailing slash). A lint cache is not foreign."""
    folders = {parent.as_posix() for path in ours for parent in PurePosixPath(path).parents}
    found: list[str] = []
    for folder, subfolders, names in os.walk(target):
        relative = PurePosixPath(Path(folder).relative_to(target).as_posix())
        kept = []
        for name in subfolders:
            path = (relative / name).as_posix()
            if is_cache_folder(Path(folder, name)):
                continue
            if path in folders and not os.path.islink(os.path.join(folder, name)):
                kept.append(name)
            else:
                found.append(f"{path}/")
        subfolders[:] = kept
        for name in names:
            path, full = (relative / name).as_posix(), os.path.join(folder, name)
            if path not in ours or os.path.islink(full) or not os.path.isfile(full):
                found.append(path)
    return sorted(found)


def _leftovers(target: Path) -> Iterator[Path]:
    """Temporary folders of renders of ``target`` (``mkdtemp``'s names, below)."""
    pattern = re.compile(rf"^\.{re.escape(target.name)}\.[a-z0-9_]{{8}}\.(tmp|old)$")
    with contextlib.suppress(OSError):
        for entry in target.parent.iterdir():
            if pattern.match(entry.name) and entry.is_dir() and not entry.is_symlink():
                yield entry


def _remove_stale(target: Path) -> None:
    """Remove the temporary folders that no running render holds: a ``.tmp`` whose lock is
    free, an ``.old`` whose ``.tmp`` is gone or free."""
    for leftover in list(_leftovers(target)):
        staging = leftover.with_suffix(".tmp")
        try:
            with _lock(staging):
                shutil.rmtree(leftover, ignore_errors=True)
        except FileNotFoundError:  # an .old whose render is over
            shutil.rmtree(leftover, ignore_errors=True)
        except OSError:  # held by a render running now (BlockingIOError), or not ours to open
            continue


@contextlib.contextmanager
def _lock(folder: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``folder`` (``BlockingIOError`` when another process holds it)."""
    descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        yield
    finally:
        os.close(descriptor)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_tree(files: Mapping[str, str], target: Path) -> None:
    """Replace ``target`` with exactly ``files`` ({relative path: text}).

    The current folder (``-o .``, ``-o "$PWD"``) is never swapped away, which would leave the
    shell in a deleted folder (and ``.`` cannot be renamed at all): its contents are replaced
    in place (``_replace_contents``). A folder that holds the current one is refused."""
    paths = {path: safe_path(path) for path in files}
    _check_replaceable(target)
    place, here = Path(os.path.realpath(target)), _current_folder()
    in_place = place == here
    if here is not None and not in_place and here.is_relative_to(place):
        raise GpustackError(
            f"cannot write {target}: the current folder is inside it, and render replaces the whole folder; "
            f"run it from outside {place}, or from {place} itself (-o .)"
        )
    try:
        place.parent.mkdir(parents=True, exist_ok=True)
        _remove_stale(place)
        staging = Path(tempfile.mkdtemp(prefix=f".{place.name}.", suffix=".tmp", dir=place.parent))
    except OSError as exc:
        raise GpustackError(f"cannot write {target}: {exc.strerror or exc}") from None
    old = staging.with_suffix(".old")
    try:
        with _lock(staging):
            staging.chmod(0o777 & ~_umask())  # mkdtemp makes it 0700
            for path, text in files.items():
                file = staging.joinpath(*paths[path].parts)
                file.parent.mkdir(parents=True, exist_ok=True)
                file.write_text(text, encoding="utf-8", newline="\n")
            if in_place:
                _replace_contents(place, staging, old)
            else:
                _swap(place, staging, old)
    except OSError as exc:
        raise GpustackError(f"cannot write {target}: {exc.strerror or exc}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        shutil.rmtree(old, ignore_errors=True)


def _current_folder() -> Path | None:
    try:
        return Path(os.path.realpath(os.getcwd()))
    except OSError:  # the current folder was deleted under the shell
        return None


def _swap(target: Path, staging: Path, old: Path) -> None:
    """``staging`` becomes ``target`` with two renames; the old ``target`` is left at ``old``."""
    if target.exists():
        target.rename(old)
    try:
        staging.rename(target)
    except OSError:
        if old.exists():
            old.rename(target)
        raise


def _replace_contents(target: Path, staging: Path, old: Path) -> None:
    """Move what ``target`` holds into ``old``, then what ``staging`` holds into ``target``:
    one rename per top-level entry, every one undone when one fails, so that a failure leaves
    the old contents in place."""
    old.mkdir()
    moved_out: list[str] = []
    moved_in: list[str] = []
    try:
        for name in sorted(os.listdir(target)):
            os.rename(target / name, old / name)
            moved_out.append(name)
        for name in sorted(os.listdir(staging)):
            os.rename(staging / name, target / name)
            moved_in.append(name)
    except OSError:
        for name in reversed(moved_in):
            os.rename(target / name, staging / name)
        for name in reversed(moved_out):
            os.rename(old / name, target / name)
        raise


def read_tree(folder: Path) -> dict[str, str | None]:
    """Files under ``folder`` as {relative path: text}; ``None`` for files that are not UTF-8
    text. A lint cache (one a user put there with ``--cache-dir``, an old ``.gpustack_cache``)
    is no part of the tree."""
    result: dict[str, str | None] = {}
    if not folder.is_dir():
        return result
    inside = []
    for top, subfolders, names in os.walk(folder):
        subfolders[:] = [name for name in subfolders if not is_cache_folder(Path(top, name))]
        inside += [Path(top, name) for name in names if os.path.isfile(os.path.join(top, name))]
    for file in sorted(inside, key=lambda file: file.relative_to(folder).as_posix()):
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
