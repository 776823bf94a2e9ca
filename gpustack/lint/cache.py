"""The lint cache: what a run computed, kept for the next run on the same input.

Where gpustack runs (a pre-commit hook on every commit, CI on every push, an editor on save)
nearly every file is the same as last time. Two kinds of entry, each under a key that is a
digest of everything its value depends on:

- ``documents``: one file's documents as read (plain data with the positions of every key
  and item, ``load.cache_entry``), keyed by the file's bytes and the code that reads them
  (``code_fingerprint``). Content-addressed, so a file renamed or copied hits too.
- ``pods`` and ``results`` (``engine.FileUnits``): the facts of one file's pod specs, keyed
  by the file's name and text and the set's DRA claims; what the file-local rules found in
  it, keyed by those, the set facts they read and the settings (``settings_key``). When one
  file changed, the run parses that file and runs the file-local rules on it alone; set
  rules and rules that read the set run over the whole set again (its other files'
  documents and pod specs come from the cache).
- ``report``: a whole run's report, keyed by every file's name and digest, the settings, the
  day (suppressions expire) and the code.

The store is a folder, ``.gpustack_cache`` beside the config (else beside the linted paths),
``--cache-dir`` or ``GPUSTACK_CACHE_DIR``, holding a ``.gitignore`` so that git leaves it
out. It never gets in the way: an unwritable or read-only place, a symlink where the folder
or an entry should be, a corrupt or foreign entry all mean no cache for that entry, silently
(entries are written to a temporary file and renamed into place, so concurrent runs read
either a whole entry or none). It is bounded: when it outgrows ``MAX_BYTES``, the entries
least recently used go. Entries are written by a thread of their own while the run goes on
(creating and renaming a file is mostly the kernel's time, which the other core can spend);
``close`` waits for it.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
import queue
import threading
from collections.abc import Iterable, Mapping
from dataclasses import fields, is_dataclass
from datetime import date
from pathlib import Path, PurePath
from typing import Any

DIRNAME = ".gpustack_cache"
ENVIRONMENT = "GPUSTACK_CACHE_DIR"
MAX_BYTES = 256 * 1024 * 1024  # the 10,000-document corpus takes 10 MB
_MAGIC = b"gpustack-cache 1\n"  # a file without it is not ours: ignored, and replaced on write
_GITIGNORE = "# gpustack's lint cache: safe to delete, never to commit\n*\n"


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
        from gpustack.resources import data_dir

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


class Cache:
    """Entries in one folder; every failure to read or write is a miss, never an error."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.usable = not os.path.islink(root)  # never followed: another place may be anyone's
        self.writable = self.usable
        self.ready = False
        self.wrote = False
        self.keys: dict[int, str] = {}  # id(content) -> documents key, for the contents of this run
        self.pending: queue.SimpleQueue[tuple[str, str, bytes] | None] = queue.SimpleQueue()
        self.writer: threading.Thread | None = None
        self.temporaries = 0  # temporary files this run named: .tmp-<run>-<n>
        self.run = os.urandom(6).hex()

    # The documents of one file (``gpustack.lint.load``), by content.

    def documents_key(self, data: bytes) -> str:
        """The key of a file's documents: its content and the code that reads it (computed
        once per content object: the report's key holds it too)."""
        key = self.keys.get(id(data))
        if key is None:
            key = self.keys[id(data)] = digest(code_fingerprint(), data)
        return key

    def get_documents(self, key: str) -> Any | None:
        return self.get("documents", key)

    def put_documents(self, key: str, payload: bytes) -> None:
        self.put_bytes("documents", key, payload)

    # The settings a run's findings depend on.

    @staticmethod
    def settings_key(settings: Any, files: Iterable[Path]) -> str:
        """The effective ``settings`` (``canonical``: with the roots, configured and the git
        repositories that hold the files), the content of the ``files`` they name (spec,
        baseline, chart values), the working folder, which relative patterns resolve
        against, and the code."""
        parts = [code_fingerprint(), os.getcwd(), repr(canonical(settings))]
        for file in files:
            parts += [str(file), *_contents(file)]
        return digest(*parts)

    # One file's unit (``engine.FileUnits``).

    def units(self, settings_key: str) -> FileUnitStore:
        return FileUnitStore(self, settings_key)

    # A whole run's report.

    def report_key(self, inputs: Iterable[Any], settings_key: str) -> str:
        """The key of a run's report: every input's name and content key (or what made it
        unreadable), in order; the settings (``settings_key``); the day, by which
        suppressions expire."""
        parts = [settings_key, date.today().isoformat()]
        for item in inputs:
            if isinstance(item, tuple):
                parts += [item[0], self.documents_key(item[1])]
            else:
                parts.append(repr(canonical(item)))
        return digest(*parts)

    def get_report(self, key: str) -> Any | None:
        return self.get("report", key)

    def put_report(self, key: str, report: Any) -> None:
        self.put("report", key, report)

    # What a run printed: the rendered report and the exit status, by the report's key and
    # how it was rendered (format, options); a hit skips unpickling and rendering the report.

    def output_key(self, report_key: str, *how: Any) -> str:
        return digest(report_key, repr(canonical(how)))

    def get_output(self, key: str) -> tuple[str, int] | None:
        value = self.get("output", key)
        if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str) and isinstance(value[1], int):
            return value
        return None

    def put_output(self, key: str, text: str, code: int) -> None:
        self.put("output", key, (text, code))

    def get(self, kind: str, key: str) -> Any | None:
        """The value stored under ``kind``/``key``, or None (absent, corrupt, foreign, a symlink).
        A hit is marked used (its modification time), for ``evict``."""
        if not self.usable:
            return None
        try:
            fd = os.open(self._path(kind, key), os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            return None
        try:
            with os.fdopen(fd, "rb") as stream:
                data = stream.read()
                self._mark_used(stream.fileno())
        except OSError:
            return None
        if not data.startswith(_MAGIC):
            return None
        try:
            return pickle.loads(memoryview(data)[len(_MAGIC) :])
        except Exception:  # a truncated or foreign entry: a miss; the run writes it again
            return None

    def _mark_used(self, fd: int) -> None:
        if self.writable:
            try:
                os.utime(fd)
            except OSError:  # read-only: reading is all this run does
                self.writable = False

    def put(self, kind: str, key: str, value: Any) -> None:
        self.put_bytes(kind, key, pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))

    def put_bytes(self, kind: str, key: str, payload: bytes) -> None:
        """Store a pickled value (by the writer thread; ``close`` waits for it)."""
        if not self.writable:
            return
        if self.writer is None:
            self.writer = threading.Thread(target=self._write_pending, name="gpustack-cache", daemon=True)
            self.writer.start()
        self.pending.put((kind, key, payload))

    def close(self) -> None:
        """Wait for the entries still being written, then bound the cache (``evict``)."""
        if self.writer is not None:
            self.pending.put(None)
            self.writer.join()
            self.writer = None
        self.evict()

    def _write_pending(self) -> None:
        while (item := self.pending.get()) is not None:
            if self.writable:
                self._write(*item)

    def _write(self, kind: str, key: str, payload: bytes) -> None:
        """Write one entry; the first failure (read-only, no space) ends writing for the run."""
        try:
            if not self.ready and not self._ready():
                self.writable = False
                return
            self.ready = True
            self.temporaries += 1
            temporary = os.path.join(self.root, f".tmp-{self.run}-{self.temporaries}")
            handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
            try:
                with os.fdopen(handle, "wb") as stream:
                    stream.write(_MAGIC)
                    stream.write(payload)
                os.replace(temporary, self._path(kind, key))  # atomic: readers see all or nothing
            except BaseException:
                os.unlink(temporary)
                raise
            self.wrote = True
        except OSError:
            self.writable = False

    def _path(self, kind: str, key: str) -> str:
        return os.path.join(self.root, f"{key}.{kind}")

    def _ready(self) -> bool:
        """The folder exists, is a real folder (not a symlink), and holds its .gitignore."""
        try:
            os.makedirs(self.root.parent, exist_ok=True)
            os.mkdir(self.root)
        except FileExistsError:
            pass
        if os.path.islink(self.root) or not os.path.isdir(self.root):
            return False
        ignore = os.path.join(self.root, ".gitignore")
        if not os.path.lexists(ignore):
            with open(ignore, "w", encoding="utf-8") as stream:
                stream.write(_GITIGNORE)
        return True

    def evict(self, limit: int = MAX_BYTES) -> None:
        """After a run that wrote: when the entries outgrow ``limit``, remove the least
        recently used (by modification time, which a hit refreshes) down to three quarters."""
        if not self.wrote:
            return
        try:
            entries = [entry for entry in os.scandir(self.root) if entry.is_file(follow_symlinks=False)]
            stats = [(entry.stat(follow_symlinks=False), entry.path) for entry in entries if entry.name != ".gitignore"]
        except OSError:
            return
        total = sum(stat.st_size for stat, _ in stats)
        if total <= limit:
            return
        for stat, path in sorted(stats, key=lambda item: item[0].st_mtime_ns):
            if total <= limit * 3 // 4:
                break
            try:
                os.unlink(path)
            except OSError:
                continue
            total -= stat.st_size


class FileUnitStore:
    """``engine.FileUnits`` in a cache, for one run's settings."""

    def __init__(self, cache: Cache, settings_key: str) -> None:
        self.cache = cache
        self.settings_key = settings_key

    def get_pods(self, file: str, text: str, claims: str) -> Any | None:
        return self.cache.get("pods", digest(code_fingerprint(), file, text, claims))

    def put_pods(self, file: str, text: str, claims: str, value: Any) -> None:
        self.cache.put("pods", digest(code_fingerprint(), file, text, claims), value)

    def get_results(self, file: str, text: str, claims: str, facts: str) -> Any | None:
        return self.cache.get("results", digest(self.settings_key, file, text, claims, facts))

    def put_results(self, file: str, text: str, claims: str, facts: str, value: Any) -> None:
        self.cache.put("results", digest(self.settings_key, file, text, claims, facts), value)


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


def _contents(path: Path) -> list[str]:
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
            found += [str(file.relative_to(path)), *_contents(file)]
    return found


def cache_folder(option: Path | None, config: Path | None, start: Path) -> Path:
    """``--cache-dir``, else ``GPUSTACK_CACHE_DIR``, else ``.gpustack_cache`` beside the config
    (the linted paths' folder without one)."""
    if option is not None:
        return option
    setting = os.environ.get(ENVIRONMENT, "").strip()
    if setting:
        return Path(setting)
    return (config.parent if config is not None else start) / DIRNAME
