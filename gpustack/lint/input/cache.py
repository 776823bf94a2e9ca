"""The lint cache: what a run computed, kept for the next run on the same input.

Where gpustack runs (a pre-commit hook on every commit, CI on every push, an editor on save)
nearly every file is the same as last time. Four kinds of entry, each under a key that is a
digest of everything its value depends on:

- ``documents``: one file's documents as read (plain data with the positions of every key
  and item, ``encode.encoded``), keyed by the file's bytes and the code that reads them
  (``code_fingerprint``). Content-addressed, so a file renamed or copied hits too.
- ``unit`` and ``facts`` (``units.FileUnits``): one file's unit (its pod specs as facts,
  what the file-local rules found in it), keyed by the file's name and content, the set's
  DRA claims where its pods claim devices and the settings (``settings_key``); what the few
  file-local rules that read a set fact found, keyed by those and the set facts, where those
  are not the facts of an empty set (the unit holds that case). When one file changed, the run parses that
  file and runs the file-local rules on it alone; set rules and rules that read the set run
  over the whole set again (its other files' documents and pod specs come from the cache).
- ``output``: what a run printed and its exit status, keyed by the run's report key (every
  file's name and digest, the settings, the day: suppressions expire) and how it printed it
  (format, options). A run on unchanged files prints it again: no parsing, no rules.

Every value is plain data written with ``marshal`` (``Cache.get``). The store is one SQLite
database (``entries.sqlite``: what the standard library offers for many small values in one
file, written in one transaction) in a folder outside the linted tree (``cache_folder``:
the user's cache folder, or ``--cache-dir``, ``GPUSTACK_CACHE_DIR``, the config's
``cacheDir``), holding a ``.gitignore`` so that git leaves it out where a user puts it in a
repository, and by which the project's other commands know it (``is_cache_folder``). A run
reads entries as it goes and writes what it computed in one transaction at the end
(``close``): concurrent runs each see a whole
store, and thousands of entries cost one write instead of a file each. It never gets in the
way: an unwritable or read-only place, a symlink where the folder or the database should be,
a store that is busy for long, a corrupt database or entry all mean no cache (for that entry),
silently; a corrupt database is replaced on the next write. It is bounded: when the entries
outgrow ``MAX_BYTES``, the least recently used go.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import time
from collections.abc import Iterable, Mapping
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpustack.lint.input.keys import canonical, code_fingerprint, contents, digest

if TYPE_CHECKING:
    import sqlite3

DIRNAME = ".gpustack_cache"  # where the cache went before it moved out of the linted tree
ENVIRONMENT = "GPUSTACK_CACHE_DIR"
USER_CACHE = ("gpustack", "lint")  # under $XDG_CACHE_HOME, else ~/.cache
MAX_BYTES = 256 * 1024 * 1024  # the 10,000-document corpus takes 10 MB
DATABASE = "entries.sqlite"
BUSY_SECONDS = 5.0  # how long a run waits for another run's write before it gives up writing
# A read marks an entry used only when its mark is older than this: runs in a row (a hook, an
# editor) read thousands of entries, and rewriting their marks each time cost a write
# transaction even when nothing else changed. Eviction is by the hour, which is plenty.
USE_MARK_NS = 3600 * 10**9
_PREFETCH_BATCH = 500  # keys a query: under SQLite's oldest limit on query parameters (999)
_SCHEMA = "CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, value BLOB NOT NULL, size INTEGER NOT NULL, used INTEGER NOT NULL)"
_GITIGNORE = "# gpustack's lint cache: safe to delete, never to commit\n*\n"


class Cache:
    """Entries in one folder; every failure to read or write is a miss, never an error."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.usable = not os.path.islink(root)  # never followed: another place may be anyone's
        self.keys: dict[int, str] = {}  # id(content) -> documents key, for the contents of this run
        self.pending: dict[str, bytes] = {}  # entries to write at ``close``, by their row key
        self.hits: list[str] = []  # row keys read whose use mark is stale: marked used at ``close``
        self.fetched: dict[str, tuple[Any, Any] | None] = {}  # row key -> (value, used), None: absent (``prefetch``)
        self.database: sqlite3.Connection | None = None
        self.opened = False

    # The documents of one file (``gpustack.lint.input.load``), by content.

    def documents_key(self, data: bytes) -> str:
        """The key of a file's documents: its content and the code that reads it (computed
        once per content object: the report's key holds it too)."""
        key = self.keys.get(id(data))
        if key is None:
            key = self.keys[id(data)] = digest(code_fingerprint(), data)
        return key

    def get_documents(self, key: str) -> bytes | None:
        """The encoded entry (``encode.decoded`` reads it; a damaged one fails there, a miss)."""
        return self.get_bytes("documents", key)

    def prefetch_documents(self, keys: Iterable[str]) -> None:
        self.prefetch("documents", keys)

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
            parts += [str(file), *contents(file)]
        return digest(*parts)

    # The cluster facts of a spec (``from_spec.load_cluster``).

    @staticmethod
    def cluster_key(spec: str) -> str | None:
        """The key of a spec's facts: its name (the facts carry it), content and the code;
        None for standard input, which cannot be read twice."""
        return None if spec == "-" else digest(code_fingerprint(), spec, *contents(Path(spec)))

    # One file's unit (``units.FileUnits``).

    def units(self, settings_key: str, inputs: Iterable[Any] = ()) -> FileUnitStore:
        """The store of file units for a run on ``settings_key``; ``inputs`` (``read_inputs``)
        name the files' contents by the keys already computed for them."""
        contents = {item[0]: self.documents_key(item[1]) for item in inputs if isinstance(item, tuple)}
        store = FileUnitStore(self, settings_key, contents)
        store.prefetch()
        return store

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

    # What a run printed: the rendered report and the exit status, by the report's key and
    # how it was rendered (format, options).

    def output_key(self, report_key: str, *how: Any) -> str:
        return digest(report_key, repr(canonical(how)))

    def get_output(self, key: str) -> tuple[str, int] | None:
        value = self.get("output", key)
        if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str) and isinstance(value[1], int):
            return value
        return None

    def put_output(self, key: str, text: str, code: int) -> None:
        self.put("output", key, (text, code))

    # Values are plain data (tuples, lists, dicts, strings, numbers), written with ``marshal``:
    # it reads them back twice as fast as pickle, and a run over a cached set reads two
    # entries a file. Its format may change with Python's version, which the keys hold
    # (``code_fingerprint``).

    def get(self, kind: str, key: str) -> Any | None:
        """The value stored under ``kind``/``key``, or None (absent, corrupt, a symlink)."""
        payload = self.get_bytes(kind, key)
        if payload is None:
            return None
        try:
            return marshal.loads(payload)
        except Exception:  # a damaged or foreign entry: a miss; the run writes it again
            return None

    def get_bytes(self, kind: str, key: str) -> bytes | None:
        """What is stored under ``kind``/``key`` as it is stored, or None."""
        row_key = f"{kind}:{key}"
        if row_key in self.fetched:
            row = self.fetched.pop(row_key)
        else:
            database = self._database()
            if database is None:
                return None
            import sqlite3  # imported with the database (a run without a cache needs neither)

            try:
                row = database.execute("SELECT value, used FROM entries WHERE key = ?", (row_key,)).fetchone()
            except sqlite3.Error:  # busy past the timeout, or not our database
                return None
        if row is None or not isinstance(row[0], bytes):
            return None
        if not isinstance(row[1], int) or row[1] < time.time_ns() - USE_MARK_NS:
            self.hits.append(row_key)
        return row[0]

    def prefetch(self, kind: str, keys: Iterable[str]) -> None:
        """Read the entries under ``keys`` a few hundred to a query, for ``get_bytes`` to find:
        a query per entry was a twentieth of a run over a thousand cached files."""
        database = self._database()
        if database is None:
            return
        import sqlite3

        wanted = list(dict.fromkeys(f"{kind}:{key}" for key in keys))
        found: dict[str, tuple[Any, Any] | None] = dict.fromkeys(wanted)
        try:
            for start in range(0, len(wanted), _PREFETCH_BATCH):
                batch = wanted[start : start + _PREFETCH_BATCH]
                query = f"SELECT key, value, used FROM entries WHERE key IN ({', '.join('?' * len(batch))})"
                for row_key, value, used in database.execute(query, batch):
                    found[row_key] = (value, used)
        except sqlite3.Error:  # busy past the timeout, or not our database: read one by one
            return
        self.fetched.update(found)

    def put(self, kind: str, key: str, value: Any) -> None:
        """Store plain data (written at ``close``)."""
        self.put_bytes(kind, key, marshal.dumps(value))

    def put_bytes(self, kind: str, key: str, payload: bytes) -> None:
        """Store an encoded value (written at ``close``)."""
        if self.usable:
            self.pending[f"{kind}:{key}"] = payload

    def close(self, limit: int = MAX_BYTES) -> None:
        """Write the run's entries and mark the ones it read as used (``USE_MARK_NS``), in one transaction; when
        the entries outgrow ``limit``, remove the least recently used down to three quarters.
        Any failure (read-only, no space, busy, corrupt) leaves the store as it was."""
        if self.usable and (self.pending or self.hits):
            import sqlite3

            for attempt in range(2):
                try:
                    self._write(limit)
                    break
                except sqlite3.OperationalError:  # busy past the timeout, read-only, no space
                    break
                except sqlite3.DatabaseError:  # not a database, or damaged: start a new one
                    if attempt or not self._discard():
                        break
                except (sqlite3.Error, OSError):
                    break
        if self.database is not None:
            self.database.close()
            self.database = None
        self.pending.clear()

    def _write(self, limit: int) -> None:
        import sqlite3

        database = self._database(create=True)
        if database is None:
            return
        now = time.time_ns()
        database.execute(_SCHEMA)
        try:
            database.execute("BEGIN IMMEDIATE")
            database.executemany(
                "INSERT OR REPLACE INTO entries (key, value, size, used) VALUES (?, ?, ?, ?)",
                ((key, payload, len(payload), now) for key, payload in self.pending.items()),
            )
            database.executemany("UPDATE entries SET used = ? WHERE key = ?", ((now, key) for key in self.hits))
            if self._may_outgrow(limit):
                self._evict(database, limit)
            database.execute("COMMIT")
        except BaseException:
            if database.in_transaction:
                try:
                    database.execute("ROLLBACK")
                except sqlite3.Error:
                    pass  # the connection is closed next; SQLite rolls back what was not committed
            raise

    def _may_outgrow(self, limit: int) -> bool:
        """Whether the entries may hold more than ``limit`` bytes: not when the database file
        before this run's writes and those writes are smaller. Summing the sizes reads every
        row (a tenth of a run over a thousand cached files), where the file's size is one stat."""
        try:
            before = os.path.getsize(os.path.join(self.root, DATABASE))
        except OSError:
            return True
        return before + sum(map(len, self.pending.values())) > limit

    @staticmethod
    def _evict(database: sqlite3.Connection, limit: int) -> None:
        """Past ``limit`` bytes of entries, the least recently used go, down to three quarters."""
        (total,) = database.execute("SELECT COALESCE(SUM(size), 0) FROM entries").fetchone()
        if total <= limit:
            return
        doomed = []
        for key, size in database.execute("SELECT key, size FROM entries ORDER BY used, key"):
            if total <= limit * 3 // 4:
                break
            doomed.append((key,))
            total -= size
        database.executemany("DELETE FROM entries WHERE key = ?", doomed)

    def _database(self, *, create: bool = False) -> sqlite3.Connection | None:
        """The open database; None where there is none to read (``create``: made, with its
        folder, for writing)."""
        if self.database is not None or not self.usable:
            return self.database
        import sqlite3

        path = os.path.join(self.root, DATABASE)
        if self.opened and not create:
            return None
        self.opened = True
        try:
            if create and not self._ready():
                return None
            if os.path.islink(path) or not (create or os.path.isfile(path)):
                return None
            database = sqlite3.connect(path, timeout=BUSY_SECONDS, isolation_level=None)
        except (sqlite3.Error, OSError):
            return None
        try:
            database.execute("PRAGMA synchronous = OFF")  # a cache: losing the last write on a power cut is fine
        except sqlite3.Error:
            database.close()
            if create:
                raise  # ``close`` replaces a database that is not one
            return None
        self.database = database
        return database

    def _discard(self) -> bool:
        """Remove a database that is not one (or is damaged), so that the next write starts anew."""
        if self.database is not None:
            self.database.close()
            self.database = None
        path = os.path.join(self.root, DATABASE)
        try:
            if os.path.islink(path) or not os.path.isfile(path):
                return False
            os.unlink(path)
        except OSError:
            return False
        self.opened = False
        return True

    def _ready(self) -> bool:
        """The folder exists, is a real folder (not a symlink), and holds its .gitignore."""
        try:
            os.makedirs(self.root.parent, exist_ok=True)
            os.mkdir(self.root)
        except FileExistsError:
            pass
        except OSError:
            return False
        if os.path.islink(self.root) or not os.path.isdir(self.root):
            return False
        ignore = os.path.join(self.root, ".gitignore")
        try:
            if not os.path.lexists(ignore):
                with open(ignore, "w", encoding="utf-8") as stream:
                    stream.write(_GITIGNORE)
        except OSError:
            return False
        return True


class FileUnitStore:
    """``units.FileUnits`` in a cache, for one run's settings."""

    def __init__(self, cache: Cache, settings_key: str, contents: Mapping[str, str]) -> None:
        self.cache = cache
        self.settings_key = settings_key
        self.contents = contents  # file -> the key of its bytes, which decide its text
        self.texts: dict[str, tuple[str, str]] = {}  # file -> (text, its digest), for files not in ``contents``

    def prefetch(self) -> None:
        """Read the units of the files whose contents are known, as units that claim no
        devices (most are) are keyed, in a few queries (``Cache.prefetch``)."""
        self.cache.prefetch("unit", (self._key(file, "", "") for file in self.contents))

    def get_unit(self, file: str, text: str, claims: str) -> Any | None:
        return self.cache.get("unit", self._key(file, text, claims))

    def put_unit(self, file: str, text: str, claims: str, value: Any) -> None:
        self.cache.put("unit", self._key(file, text, claims), value)

    def get_with_facts(self, file: str, text: str, claims: str, facts: str) -> Any | None:
        return self.cache.get("facts", self._key(file, text, claims, facts))

    def put_with_facts(self, file: str, text: str, claims: str, facts: str, value: Any) -> None:
        self.cache.put("facts", self._key(file, text, claims, facts), value)

    def _key(self, file: str, text: str, *context: str) -> str:
        content = self.contents.get(file)
        if content is None:
            known = self.texts.get(file)
            if known is None or known[0] is not text:
                known = self.texts[file] = (text, digest(text))
            content = known[1]
        return digest(self.settings_key, file, content, *context)


def cache_folder(option: Path | None, setting: Path | None, start: Path) -> Path | None:
    """``--cache-dir``, else ``GPUSTACK_CACHE_DIR``, else the config's ``cacheDir`` (``setting``),
    else a folder of the user's cache folder (XDG: ``$XDG_CACHE_HOME``, else ``~/.cache``) for
    the project: ``gpustack/lint/<digest>`` of the git repository that holds ``start`` (the
    linted paths' folder), else of ``start``. Nothing is written into the linted tree, as ruff
    and mypy allow; None where there is no home folder to find one in (no cache)."""
    if option is not None:
        return option
    environment = os.environ.get(ENVIRONMENT, "").strip()
    if environment:
        return Path(environment)
    if setting is not None:
        return setting
    from gpustack.lint.input.roots import repository_of

    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):  # the XDG spec: a relative value is invalid, and ignored
        try:
            base = str(Path.home() / ".cache")
        except RuntimeError:  # no HOME and no user entry
            return None
    project = repository_of(str(start)) or os.path.abspath(start)
    return Path(base, *USER_CACHE, hashlib.sha256(project.encode()).hexdigest()[:16])


def is_cache_folder(folder: Path) -> bool:
    """Whether ``folder`` is a lint cache (``_ready`` marks it with its ``.gitignore``; the
    old default name counts too): what every command that reads a tree leaves out."""
    if folder.name == DIRNAME:
        return True
    try:
        return (folder / ".gitignore").read_text(encoding="utf-8") == _GITIGNORE
    except (OSError, UnicodeDecodeError):
        return False
