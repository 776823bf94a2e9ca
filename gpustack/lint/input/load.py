"""Read manifests into Resources: files, folders, standard input, multi-document streams.

Speed and memory decide the shape (issue 6: 10,000 documents in well under two seconds).
One pass of libyaml's C parser turns each document into plain data with Kubernetes' YAML
semantics (``yaml11.plain``) without building a node tree, which would cost three times the
memory of the data. The same pass records where each key and item starts (``_Positions``: a
small table per mapping and list, from the marks libyaml gives every event anyway), so
``Resource.locate`` never parses again; only a path that goes on into a string holding YAML
(Helm values in ``valuesContent``) takes the precise path, ``_Source.locate``, which
composes the file's node trees (tests prove both give the same positions).

Nothing raises: an unreadable path, a binary or non-UTF-8 file, invalid YAML, an alias bomb,
a document that is not a mapping all become ``InputError``s with file and line, and every
other file and document is still read.
"""

from __future__ import annotations

import marshal
import os
import re
import stat
import sys
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache, partial
from typing import Any, BinaryIO, Protocol

import yaml
from yaml import events
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from gpustack.errors import GpustackError, Problem
from gpustack.lint.input.yaml11 import MERGE, key_text, plain
from gpustack.lint.model import InputError, Path, Resource, computed_once, copied
from gpustack.userinput import MAX_FILE_BYTES, Unreadable, decode

STDIN = "-"
STDIN_NAME = "<stdin>"
SUFFIXES = (".yaml", ".yml", ".json")
MAX_DEPTH = 200  # libyaml stops at 1000; no manifest nests deeper than a few dozen levels
MAX_ALIAS_NODES = 100_000  # nodes that aliases may add to one document (billion laughs)

_SOURCE_COMMENT = re.compile(r"^#\s*Source:\s*(\S.*?)\s*$", re.MULTILINE)
_SCALAR_TAGS = frozenset(f"tag:yaml.org,2002:{name}" for name in ("bool", "int", "float", "null"))


@dataclass(frozen=True)
class LoadResult:
    """What the input held: resources, per-file errors, and each readable file's text."""

    resources: tuple[Resource, ...] = ()
    errors: tuple[InputError, ...] = ()
    texts: Mapping[str, str] = field(default_factory=dict)  # file -> text, for inline comments
    # file -> (what ``FileWork.file_unit`` made of it, that as plain data or None)
    units: Mapping[str, tuple[Any, Any]] = field(default_factory=dict)

    @property
    def files(self) -> int:
        return len(self.texts)

    @staticmethod
    def merge(parts: Iterable[LoadResult]) -> LoadResult:
        parts = list(parts)
        return LoadResult(
            tuple(resource for part in parts for resource in part.resources),
            tuple(error for part in parts for error in part.errors),
            {file: text for part in parts for file, text in part.texts.items()},
            {file: unit for part in parts for file, unit in part.units.items()},
        )


def load_paths(
    paths: Iterable[str],
    *,
    excluded: Callable[[str], bool] = lambda path: False,
    stdin: BinaryIO | None = None,
    jobs: int | None = None,
    cache: DocumentCache | None = None,
) -> LoadResult:
    """Read every path (``-`` is standard input); folders are searched recursively.

    ``excluded`` filters files and folders by path (config ``exclude``); a file named
    explicitly is read whatever its suffix. ``jobs``: processes to parse many files with
    (default: ``GPUSTACK_JOBS``, else every idle CPU for large inputs, see ``load_inputs``).
    """
    return load_inputs(read_inputs(paths, excluded=excluded, stdin=stdin), jobs=jobs, cache=cache)


Input = tuple[str, bytes]  # a file's name and content
Inputs = list[LoadResult | Input]  # in input order: what could not be read, or a file's bytes


def read_inputs(
    paths: Iterable[str], *, excluded: Callable[[str], bool] = lambda path: False, stdin: BinaryIO | None = None
) -> Inputs:
    """The bytes of every file the paths name, in order (parsed by ``load_inputs``): the
    cache key of a file is its content, read once."""
    parts: Inputs = []
    for path in paths:
        if path == STDIN:
            parts.append(_read(STDIN_NAME, stdin or sys.stdin.buffer))
            continue
        files, errors = _expand(path, excluded)
        if errors:
            parts.append(LoadResult(errors=tuple(errors)))
        for file in files:
            try:
                with open(file, "rb") as stream:
                    parts.append(_read(file, stream))
            except OSError as exc:
                parts.append(_unreadable(file, exc))
    return parts


def _read(name: str, stream: BinaryIO) -> LoadResult | Input:
    try:
        return name, stream.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        return _unreadable(name, exc)


def _unreadable(name: str, exc: OSError) -> LoadResult:
    return LoadResult(errors=(InputError(name, f"cannot read: {exc.strerror or exc}"),))


class DocumentCache(Protocol):
    """Where ``load_inputs`` keeps what it parsed (``gpustack.lint.input.cache``): each file's
    entry, encoded (``_encoded``), under a key of its content."""

    def documents_key(self, data: bytes) -> str: ...

    def get_documents(self, key: str) -> bytes | None: ...

    def prefetch_documents(self, keys: Iterable[str]) -> None: ...

    def put_documents(self, key: str, payload: bytes) -> None: ...


class FileWork(Protocol):
    """What the engine makes of a file right after it is parsed, in the process that parsed
    it (``engine.Run``): a unit (None: nothing), sent from a worker as plain data
    (``units.stored_unit``)."""

    def file_unit(self, name: str, text: str, resources: Sequence[Resource]) -> Any | None: ...


def load_inputs(
    inputs: Inputs, *, jobs: int | None = None, cache: DocumentCache | None = None, work: FileWork | None = None
) -> LoadResult:
    """Parse what ``read_inputs`` read, in order: each file's entry from ``cache`` when it
    holds one for that content, else parsed (over processes when many) and stored there;
    ``work`` makes each parsed file's unit (``LoadResult.units``), as plain data too where a
    worker sent it or the cache will keep it."""
    results: list[LoadResult | None] = []
    pending: list[tuple[int, Input, str | None]] = []  # (index in results, input, cache key)
    keys = [None if cache is None or isinstance(part, LoadResult) else cache.documents_key(part[1]) for part in inputs]
    if cache is not None:
        cache.prefetch_documents(key for key in keys if key is not None)
    for part, key in zip(inputs, keys, strict=True):
        if isinstance(part, LoadResult):
            results.append(part)
            continue
        payload = cache.get_documents(key) if cache is not None and key is not None else None
        if payload is not None:
            try:
                results.append(restore(part[0], part[1], _decoded(payload)))
                continue
            except Exception:  # an entry of another shape: parse the file again
                pass
        results.append(None)
        pending.append((len(results) - 1, part, key))
    store = cache.put_documents if cache is not None else None
    parsed = _parse_all([item for _, item, _ in pending], [key for _, _, key in pending], jobs, store, work)
    for (index, _, _), result in zip(pending, parsed, strict=True):
        results[index] = result
    return LoadResult.merge(result for result in results if result is not None)


def _parse_all(
    files: list[Input],
    keys: list[str | None],
    jobs: int | None,
    store: Callable[[str, bytes], None] | None,
    work: FileWork | None,
) -> list[LoadResult]:
    """Each file parsed (``_parse``) and its unit made (``work``), in order; spread over
    processes when there are many (``workers``): a worker sends each file's entry encoded
    (``_encoded``), positions included, with its unit as plain data, and the main process
    stores and restores them. The results are the same either way (tests/lint/test_fast_path.py)."""
    from gpustack.lint.input import workers
    from gpustack.lint.input.units import restored_unit, stored_unit

    sizes = [len(data) for _, data in files]
    items = [(name, data, key) for (name, data), key in zip(files, keys, strict=True)]

    def parsed(name: str, data: bytes) -> tuple[LoadResult, Entry, Any | None]:
        """The file read, its entry, and its unit (None: no ``work``, nothing to make one of)."""
        result, entry = _parse(name, data)
        unit = work.file_unit(name, result.texts.get(name, ""), result.resources) if work and result.resources else None
        return result, entry, unit

    def here(chunk: Sequence[tuple[str, bytes, str | None]]) -> list[LoadResult]:
        results = []
        for name, data, key in chunk:
            result, entry, unit = parsed(name, data)
            if store is not None and key is not None:
                store(key, _encoded(entry))
            if unit is not None:
                # Made plain here, beside the worker, where the cache keeps it: not after, alone.
                stored = stored_unit(result.resources, unit) if work and store is not None else None
                result = replace(result, units={name: (unit, stored)})
            results.append(result)
        return results

    def there(chunk: Sequence[tuple[str, bytes, str | None]]) -> list[tuple[bytes, Any]]:
        if work is None:  # the entries alone: no objects to build
            return [(_encoded(_parse_entry(data)[0]), None) for _, data, _ in chunk]
        sent = []
        for name, data, _ in chunk:
            result, entry, unit = parsed(name, data)
            sent.append((_encoded(entry), None if unit is None else stored_unit(result.resources, unit)))
        return sent

    def back(item: tuple[str, bytes, str | None], value: tuple[bytes, Any]) -> LoadResult:
        (name, data, key), (payload, stored) = item, value
        if store is not None and key is not None:
            store(key, payload)
        result = restore(name, data, _decoded(payload))
        if stored is None or work is None:
            return result
        return replace(result, units={name: (restored_unit(result.resources, stored), stored)})

    jobs = workers.jobs_for(len(files), sum(sizes), jobs)
    return workers.spread(items, sizes, jobs, here, there, back)


def _expand(path: str, excluded: Callable[[str], bool]) -> tuple[list[str], list[InputError]]:
    if not os.path.isdir(path):
        if not os.path.lexists(path):
            return [], [InputError(path, "no such file or folder")]
        return ([] if excluded(path) else [path]), []
    found: list[str] = []
    errors: list[InputError] = []

    def unreadable(exc: OSError) -> None:
        errors.append(InputError(exc.filename or path, f"cannot read folder: {exc.strerror}"))

    for folder, subfolders, names in os.walk(path, onerror=unreadable):
        # Hidden files and folders (.git, .github, .pre-commit-config.yaml, …) are tools'
        # settings, not manifests; a hidden file named on the command line is still read.
        subfolders[:] = [
            name for name in subfolders if not name.startswith(".") and not excluded(os.path.join(folder, name))
        ]
        for name in names:
            file = os.path.normpath(os.path.join(folder, name))  # "./a.yaml" -> "a.yaml"
            if name.endswith(SUFFIXES) and not name.startswith(".") and not excluded(file):
                if _special(file):  # reading a named pipe nobody writes to waits forever
                    errors.append(InputError(file, "not a regular file (a named pipe, socket or device): not read"))
                else:
                    found.append(file)
    return sorted(found), sorted(errors, key=lambda error: error.file)


def _special(file: str) -> bool:
    try:
        return not stat.S_ISREG(os.stat(file).st_mode)
    except OSError:  # a dangling link: opening it says why
        return False


def load_settings(file: str, error: type[GpustackError], what: str) -> tuple[Resource, ...]:
    """The documents of a file gpustack reads for itself (config, policy): an unreadable or
    unparsable file raises ``error`` with the located problems, rather than an InputError."""
    try:
        with open(file, "rb") as handle:
            loaded = load_bytes(file, handle.read())
    except OSError as exc:
        raise error(Problem(f"cannot read {what}: {exc.strerror}", file)) from None
    if loaded.errors:
        raise error([Problem(e.message, e.file, e.line, e.column) for e in loaded.errors])
    return tuple(loaded.resources)


def load_bytes(name: str, data: bytes) -> LoadResult:
    """Decode and parse one file's content."""
    return _parse(name, data)[0]


def load_text(name: str, text: str) -> LoadResult:
    """Parse one YAML (or JSON) stream: one Resource per object, ``kind: List`` items included."""
    return _result(name, text, _text_entry(text))


# What parsing one file's content gives, whatever the file is called: ("errors", ((message,
# line, column), ...)) when it cannot be read as YAML, else ("documents", (document, ...)),
# each document a tuple of plain data and positions (``_Document.entry``). This is what the
# lint cache keeps and what worker processes send back, encoded (``_encoded``).
Entry = tuple[str, tuple[Any, ...]]


def _parse(name: str, data: bytes) -> tuple[LoadResult, Entry]:
    entry, text = _parse_entry(data)
    return _result(name, text, entry), entry


def _parse_entry(data: bytes) -> tuple[Entry, str]:
    try:
        text = decode(data)
    except Unreadable as exc:
        return ("errors", ((exc.message, exc.line, None),)), ""
    return _text_entry(text), text


# Said of a file that does not parse and holds template actions: a chart's templates/.
TEMPLATE_HINT = "; it holds {{ }}: a Helm template? lint what it renders to: `helm template CHART | gpustack lint -`"


def _text_entry(text: str) -> Entry:
    try:
        return "documents", tuple(document.entry() for document in _documents(text))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (None, None)
        message = ": ".join(part for part in (exc.context, exc.problem) if part)
        return "errors", ((f"invalid YAML: {message}{_hint(text)}", line, column),)
    except _Invalid as exc:
        return "errors", ((f"{exc.message}{_hint(text)}", exc.line, exc.column),)
    except yaml.YAMLError as exc:
        return "errors", ((f"invalid YAML: {exc}{_hint(text)}", None, None),)


def _hint(text: str) -> str:
    return TEMPLATE_HINT if "{{" in text and "}}" in text else ""


def restore(name: str, data: bytes, entry: Entry) -> LoadResult:
    """What ``load_bytes(name, data)`` gives, from the entry parsing ``data`` gave."""
    kind = entry[0]
    if kind == "errors":
        return _result(name, "", entry)
    return _result(name, data.decode("utf-8-sig"), entry)


def _result(name: str, text: str, entry: Entry) -> LoadResult:
    kind, items = entry
    if kind == "errors":
        return LoadResult(errors=tuple(InputError(name, message, line, column) for message, line, column in items))
    source = _Source(name, text)
    resources: list[Resource] = []
    errors: list[InputError] = []
    for item in items:
        _resources_of(source, item, resources, errors)
    return LoadResult(tuple(resources), tuple(errors), {name: text})


@dataclass(frozen=True)
class _Document:
    index: int
    data: Any
    line: int  # 1-based line of the document's root node
    column: int
    source_comment: str | None
    position: int = 0  # the root node's start, packed as ``_pack`` does
    containers: list[Any] = field(default_factory=list)  # every mapping and list of ``data`` (_Builder.containers)
    # The positions of their keys or items, in the same order; encoded (bytes) as the cache
    # keeps them, until a position is asked for.
    wheres: list[Any] | bytes = field(default_factory=list)
    problems: tuple[tuple[str, int, int], ...] = ()  # (message, line, column) of what is read but wrong

    def entry(self) -> tuple[Any, ...]:
        return (
            self.index, self.data, self.line, self.column, self.source_comment, self.position, self.containers,
            self.wheres, self.problems,
        )


def _compact(wheres: list[Any] | bytes) -> list[list[int]] | bytes:
    """Positions as lists only (a mapping's in its keys' order): the encoding is then fast both ways."""
    if wheres.__class__ is bytes:
        return wheres
    return [list(where.values()) if where.__class__ is dict else where for where in wheres]


def _encoded(entry: Entry) -> bytes:
    """An entry as the cache keeps it and workers send it: plain tuples and lists, the
    containers as references to the data's own mappings and lists. ``marshal`` keeps such
    references (any object referred to twice) and reads plain data back twice as fast as
    pickle, which is most of a run over cached files; its format may change with Python's
    version, which the cache's keys hold (``cache.code_fingerprint``). The positions of each
    document are encoded apart and read on the first ``locate``: they are most of an entry,
    and a run over cached files locates few objects (its findings are cached)."""
    kind, items = entry
    if kind == "documents":
        items = tuple((*item[:7], _encoded_positions(item[7]), *item[8:]) for item in items)
    return marshal.dumps((kind, items))


def _encoded_positions(wheres: list[Any] | bytes) -> bytes:
    return wheres if wheres.__class__ is bytes else marshal.dumps(_compact(wheres))


def _decoded_positions(payload: bytes) -> list[Any] | None:
    try:
        wheres = marshal.loads(payload)
    except (ValueError, EOFError, TypeError):
        return None
    return wheres if isinstance(wheres, list) and all(isinstance(where, list) for where in wheres) else None


def _decoded(payload: bytes) -> Entry:
    entry: Entry = marshal.loads(payload)
    return entry


def _pack(mark: Any) -> int:
    """A libyaml mark's 0-based line and column in one int (columns of a 32 MiB line fit)."""
    return mark.line << 32 | mark.column


@dataclass(frozen=True, eq=False)
class _Positions:
    """Where the keys and items of one document start, recorded while it was read.

    ``containers`` are the document's mappings and lists, ``wheres`` the packed positions of
    each one's keys (a dict, or a list in the mapping's key order) or items (a list), as the
    precise path would find them: a duplicate key's last occurrence, a merged key where its
    source mapping has it, an alias where its anchor's node starts. The lookup table by
    ``id()`` is built on the first ``locate``: most documents are never asked.
    """

    source: _Source
    document: int
    data: Any
    root: int
    containers: list[Any]
    wheres: list[Any] | bytes  # encoded until the first ``locate`` (``_encoded``)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled with the objects themselves (ids change in another process)."""
        return _Positions, (self.source, self.document, self.data, self.root, self.containers, _compact(self.wheres))

    @computed_once
    def table(self) -> dict[int, Any] | None:
        """None when encoded positions do not fit the document (a damaged cache entry)."""
        wheres = self.wheres
        if wheres.__class__ is bytes:
            wheres = _decoded_positions(wheres)
            if wheres is None or len(wheres) != len(self.containers):
                return None
            if any(len(where) != len(container) for container, where in zip(self.containers, wheres)):
                return None
        return {
            id(container): dict(zip(container, where)) if where.__class__ is list and container.__class__ is dict else where
            for container, where in zip(self.containers, wheres)
        }

    def locate(self, prefix: Path, path: Path = ()) -> tuple[int, int]:
        node, position, table = self.data, self.root, self.table
        if table is None:
            return self.source.locate(self.document, prefix, path)
        for step in (*prefix, *path) if prefix else path:
            kind = node.__class__
            if kind is dict:
                found = table[id(node)].get(step) if step.__class__ is str else None
                if found is None:
                    break
                position, node = found, node[step]
            elif kind is list:
                if not isinstance(step, int) or not 0 <= step < len(node):
                    break
                position, node = table[id(node)][step], node[step]
            elif kind is str:  # the path goes on into YAML held in a string
                return self.source.locate(self.document, prefix, path)
            else:
                break
        return (position >> 32) + 1, (position & 0xFFFFFFFF) + 1


def _resources_of(source: _Source, entry: tuple[Any, ...], resources: list[Resource], errors: list[InputError]) -> None:
    """The objects of one document, from its entry (``_Document.entry``: read as a tuple, as
    building a ``_Document`` for each of ten thousand cached documents would cost)."""
    index, data, line, column, comment, root, containers, wheres, problems = entry
    positions = copied(
        _Positions,
        {"source": source, "document": index, "data": data, "root": root, "containers": containers, "wheres": wheres},
    )
    errors.extend(InputError(source.name, message, line, column) for message, line, column in problems)
    if data is None or _is_json_patch(data):  # empty, only comments, or a kustomize patch file
        return
    if not isinstance(data, dict):
        what = "a list" if isinstance(data, list) else "a scalar"
        errors.append(InputError(source.name, f"document is {what}, not a Kubernetes object", line, column))
        return
    items = data.get("items")
    if _is_list_kind(data) and isinstance(items, list):
        for number, item in enumerate(items):
            if isinstance(item, dict):
                resources.append(source.resource(index, comment, item, ("items", number), positions))
            else:
                at_line, at_column = positions.locate(("items", number))
                errors.append(InputError(source.name, f"items[{number}] is not a Kubernetes object", at_line, at_column))
        return
    resources.append(source.resource(index, comment, data, (), positions))


def _is_json_patch(data: Any) -> bool:
    """A JSON 6902 patch (``- op: replace``, ``path: /spec/x``), which kustomize's ``patches``
    name by file: operations on an object, not an object."""
    return (
        isinstance(data, list)
        and bool(data)
        and all(isinstance(item, dict) and isinstance(item.get("op"), str) and "path" in item for item in data)
    )


def _is_list_kind(data: dict[str, Any]) -> bool:
    """``kind: List`` (kubectl get -o yaml) and typed lists such as ``PodList``."""
    kind = data.get("kind")
    return isinstance(kind, str) and kind.endswith("List") and "apiVersion" in data


@dataclass(frozen=True, eq=False)
class _Source:
    """One file's text; positions are computed from it on demand."""

    name: str
    text: str

    def resource(
        self, document: int, comment: str | None, data: dict[str, Any], prefix: Path, positions: _Positions
    ) -> Resource:
        """The object ``data`` of document ``document`` (``copied``: a run over a cached set
        builds ten thousand of them)."""
        return copied(
            Resource,
            {
                "file": self.name,
                "data": data,
                "locator": partial(positions.locate, prefix),
                "document": document,
                "source_comment": comment,
                "document_path": prefix,
                "origin": None,
            },
        )

    def locate(self, document: int, prefix: Path, path: Path = ()) -> tuple[int, int]:
        """1-based (line, column) of the deepest key or item of ``prefix + path`` that exists.

        The precise path: it composes the file's node trees (``_Positions.locate`` gives the
        same answer from the positions recorded while reading, and comes here only for paths
        into embedded YAML).

        A path may go on into a string that holds YAML (Helm values in a HelmChart's
        ``valuesContent``): in a literal block scalar (``|``) the position is the file's.
        """
        node = _node_trees(self)[document]
        mark = node.start_mark
        steps = (*prefix, *path)
        for index, step in enumerate(steps):
            child = _child(node, step)
            if child is None:
                if isinstance(node, ScalarNode):
                    return self._locate_embedded(node, steps[index:]) or (mark.line + 1, mark.column + 1)
                break
            mark, node = child
        return mark.line + 1, mark.column + 1

    def _locate_embedded(self, scalar: ScalarNode, steps: Path) -> tuple[int, int] | None:
        """The file position of ``steps`` inside the YAML that ``scalar`` holds, or None."""
        try:
            node: Node | None = yaml.compose(scalar.value, Loader=_PositionLoader)
        except yaml.YAMLError:
            return None
        mark = None
        for step in steps:
            child = _child(node, step) if node is not None else None
            if child is None:
                break
            mark, node = child
        if mark is None:
            return None
        if scalar.style != "|":  # folded or flow: lines do not map; the string's start
            return scalar.start_mark.line + 1, scalar.start_mark.column + 1
        # Content starts on the line after the `|` header, indented as its first non-blank line.
        lines = _lines(self)
        first = scalar.start_mark.line + 1
        content = next((line for line in lines[first:] if line.strip()), "")
        indent = len(content) - len(content.lstrip(" "))
        return first + mark.line + 1, indent + mark.column + 1


@lru_cache(maxsize=16)
def _lines(source: _Source) -> list[str]:
    return source.text.splitlines()


@lru_cache(maxsize=16)
def _node_trees(source: _Source) -> list[Node]:
    return list(yaml.compose_all(source.text, Loader=_PositionLoader))


class _PositionLoader(yaml.CSafeLoader):  # type: ignore[misc]
    """Composes node trees for their positions only. Tags are never read (keys are matched
    by ``yaml11.plain``), so nothing is resolved: PyYAML's resolver, called from C for
    every node, would be 40 % of the time."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        return ""

    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        pass

    def ascend_resolver(self) -> None:
        pass


def _child(node: Node, step: str | int) -> tuple[Any, Node] | None:
    """The mark of ``step`` inside ``node`` (a key's mark, or an item's) and the child node."""
    if isinstance(node, SequenceNode) and isinstance(step, int) and 0 <= step < len(node.value):
        item = node.value[step]
        return item.start_mark, item
    if not isinstance(node, MappingNode):
        return None
    merged: list[Node] = []
    for key, value in reversed(node.value):  # the last of duplicate keys wins, as in the data
        if not isinstance(key, ScalarNode):
            continue
        if key.style == "" and key.value == "<<":
            merged[:0] = value.value if isinstance(value, SequenceNode) else [value]
        elif _same_key(key, step):
            return key.start_mark, value
    for source in merged:  # explicit keys win over merged ones; earlier merges over later
        found = _child(source, step)
        if found is not None:
            return found
    return None


def _same_key(key: ScalarNode, step: str | int) -> bool:
    return step == (key_text(plain(key.value)) if key.style == "" else key.value)


class _Invalid(Exception):
    """Input that parses as YAML but cannot be taken as data (alias bomb, deep nesting, …)."""

    def __init__(self, message: str, mark: Any) -> None:
        super().__init__(message)
        self.message = message
        self.line = mark.line + 1
        self.column = mark.column + 1


def _documents(text: str) -> Iterator[_Document]:
    sources = _source_comments(text) if "# Source:" in text else None
    parser = yaml.CSafeLoader(text)
    try:
        parser.get_event()  # StreamStart
        previous_end = 0
        index = 0
        while isinstance(parser.peek_event(), events.DocumentStartEvent):
            parser.get_event()
            root = parser.peek_event()
            builder = _Builder(parser.get_event)
            data = builder.value(parser.get_event(), 0)
            end = parser.get_event()  # DocumentEnd
            mark = root.start_mark
            comment = _source_comment(sources, previous_end, mark.line) if sources else None
            yield _Document(
                index,
                data,
                mark.line + 1,
                mark.column + 1,
                comment,
                builder.position(root),
                builder.containers,
                builder.wheres,
                tuple(builder.duplicates),
            )
            previous_end = end.start_mark.line
            index += 1
    finally:
        parser.dispose()


def _source_comments(text: str) -> tuple[list[int], list[str]]:
    """0-based lines and values of the ``# Source:`` comments that ``helm template`` writes."""
    lines: list[int] = []
    values: list[str] = []
    line, offset = 0, 0
    for match in _SOURCE_COMMENT.finditer(text):
        line += text.count("\n", offset, match.start())
        offset = match.start()
        lines.append(line)
        values.append(match.group(1))
    return lines, values


def _source_comment(sources: tuple[list[int], list[str]], after: int, before: int) -> str | None:
    """The last ``# Source:`` between the previous document's end and this document's root."""
    lines, values = sources
    index = bisect_left(lines, before) - 1
    return values[index] if index >= 0 and lines[index] >= after else None


_SCALAR = events.ScalarEvent
_ALIAS = events.AliasEvent
_MAPPING_START, _MAPPING_END = events.MappingStartEvent, events.MappingEndEvent
_SEQUENCE_START, _SEQUENCE_END = events.SequenceStartEvent, events.SequenceEndEvent
_plain = lru_cache(maxsize=8192)(plain)  # keys and common values repeat across documents


@lru_cache(maxsize=8192)
def _plain_key(text: str) -> str:
    value = plain(text)
    return "<<" if value is MERGE else key_text(value)


def _scalar(event: events.ScalarEvent) -> Any:
    if event.implicit[0] or event.tag in _SCALAR_TAGS:
        value = _plain(event.value)
        return "<<" if value is MERGE else value
    return event.value


class _Builder:
    """Events of one document to plain data: aliases shared (and counted), merges applied;
    the positions of keys and items recorded on the side (``_Positions``).

    Written for speed (it runs once per node of the input): plain scalars without anchors,
    nearly every node, take a short path, inlined in the loops over mappings and lists.
    """

    def __init__(self, next_event: Callable[[], Any]) -> None:
        self.next = next_event
        self.anchors: dict[str, tuple[Any, int, int]] = {}  # anchor -> (value, nodes it expands to, position)
        self.nodes = 0
        self.alias_nodes = 0
        self.containers: list[Any] = []  # every mapping and list, as completed
        self.wheres: list[Any] = []  # the positions of their keys (a dict) or items (a list)
        self.indexed: dict[int, int] = {}  # id(container) -> index, filled for merges only
        self.duplicates: list[tuple[str, int, int]] = []  # keys given twice: (message, line, column)

    def value(self, event: Any, depth: int) -> Any:
        kind = event.__class__
        if kind is _SCALAR and event.anchor is None:
            self.nodes += 1
            return _scalar(event)
        if kind is _ALIAS:
            return self.alias(event)
        start = self.nodes
        self.nodes += 1
        if kind is _MAPPING_START:
            value = self.mapping(event, depth + 1)
        elif kind is _SEQUENCE_START:
            value = self.sequence(event, depth + 1)
        else:
            value = _scalar(event)
        # Anchors are registered once complete: an alias inside its own anchor (a recursive
        # structure) is undefined here, as it is for the API server.
        if event.anchor is not None:
            self.anchors[event.anchor] = (value, self.nodes - start, _pack(event.start_mark))
        return value

    def position(self, event: Any) -> int:
        """Where the node of ``event`` starts: an alias stands for its anchor's node."""
        if event.__class__ is _ALIAS and event.anchor in self.anchors:
            return self.anchors[event.anchor][2]
        return _pack(event.start_mark)

    def mapping(self, start: Any, depth: int) -> dict[str, Any]:
        _check_depth(start, depth)
        next_event, value = self.next, self.value
        result: dict[str, Any] = {}
        where: dict[str, int] = {}
        merges: list[Any] = []
        scalars = 0  # plain scalars read here, added to self.nodes before returning
        event = next_event()
        while event.__class__ is not _MAPPING_END:
            if event.__class__ is _SCALAR and event.anchor is None and event.implicit[0]:
                scalars += 1
                key = _plain_key(event.value)
                if key == "<<":
                    merged = value(next_event(), depth)
                    merges.extend(merged if isinstance(merged, list) else [merged])
                    event = next_event()
                    continue
                mark = event.start_mark
                if key in where and event.value == key:  # not `y` after `on` (both "true" to JSON)
                    self.duplicates.append(_duplicate(key, where[key], mark))
                where[key] = mark.line << 32 | mark.column
            else:
                key = value(event, depth)
                if isinstance(key, (dict, list)):
                    raise _Invalid("a mapping key must be a plain value, not a mapping or list", event.start_mark)
                key = key_text(key)
                if key in where:
                    self.duplicates.append(_duplicate(key, where[key], event.start_mark))
                where[key] = self.position(event)
            event = next_event()
            if event.__class__ is _SCALAR and event.anchor is None:
                scalars += 1
                result[key] = _scalar(event)
            else:
                result[key] = value(event, depth)
            event = next_event()
        self.nodes += scalars
        for source in merges:  # explicit keys win; earlier merges win over later ones
            if not isinstance(source, dict):
                raise _Invalid("a merge key (<<) must hold a mapping or a list of mappings", start.start_mark)
            source_where = self.where(source)
            for key, item in source.items():
                if key not in result:
                    result[key] = item
                    where[key] = source_where[key]
        self.containers.append(result)
        self.wheres.append(where)
        return result

    def sequence(self, start: Any, depth: int) -> list[Any]:
        _check_depth(start, depth)
        next_event, value = self.next, self.value
        items = []
        where = []
        scalars = 0
        event = next_event()
        while event.__class__ is not _SEQUENCE_END:
            if event.__class__ is _SCALAR and event.anchor is None:
                scalars += 1
                items.append(_scalar(event))
                mark = event.start_mark
                where.append(mark.line << 32 | mark.column)
            else:
                items.append(value(event, depth))
                where.append(self.position(event))
            event = next_event()
        self.nodes += scalars
        self.containers.append(items)
        self.wheres.append(where)
        return items

    def where(self, container: dict[str, Any]) -> dict[str, int]:
        """The key positions of a mapping read before (a merge's source; merges are rare)."""
        if id(container) not in self.indexed:
            self.indexed = {id(item): index for index, item in enumerate(self.containers)}
        return self.wheres[self.indexed[id(container)]]

    def alias(self, event: events.AliasEvent) -> Any:
        if event.anchor not in self.anchors:
            raise _Invalid(f"alias *{event.anchor} refers to no anchor defined before it", event.start_mark)
        value, nodes, _ = self.anchors[event.anchor]
        self.nodes += nodes
        self.alias_nodes += nodes
        if self.alias_nodes > MAX_ALIAS_NODES:
            raise _Invalid(
                f"aliases expand to more than {MAX_ALIAS_NODES} nodes (a YAML alias bomb?): not read",
                event.start_mark,
            )
        return value


def _duplicate(key: str, first: int, mark: Any) -> tuple[str, int, int]:
    """A key given twice in one mapping: current kubectl and Helm refuse the document, older
    readers keep the last value and drop the first unseen. Linted as the latter, reported."""
    message = f"duplicate key {key!r} (first at line {(first >> 32) + 1}): kubectl and Helm refuse the document"
    return message, mark.line + 1, mark.column + 1


def _check_depth(event: Any, depth: int) -> None:
    if depth > MAX_DEPTH:
        raise _Invalid(f"nested deeper than {MAX_DEPTH} levels: not read", event.start_mark)


def with_precise_positions(loaded: LoadResult) -> LoadResult:
    """The same resources located by the precise path (``_Source.locate``, which composes each
    file again) instead of the positions recorded while reading: the reference that tests
    hold the fast path to."""
    sources = {name: _Source(name, text) for name, text in loaded.texts.items()}
    resources = tuple(
        replace(resource, locator=partial(sources[resource.file].locate, resource.document, resource.document_path))
        for resource in loaded.resources
    )
    return LoadResult(resources, loaded.errors, loaded.texts)
