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

import os
import re
import sys
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache, partial
from typing import Any, BinaryIO

import yaml
from yaml import events
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from gpustack.errors import GpustackError, Problem
from gpustack.lint.model import InputError, Path, Resource
from gpustack.lint.yaml11 import MERGE, key_text, plain

STDIN = "-"
STDIN_NAME = "<stdin>"
SUFFIXES = (".yaml", ".yml", ".json")
MAX_FILE_BYTES = 32 * 1024 * 1024
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
        )


def load_paths(
    paths: Iterable[str],
    *,
    excluded: Callable[[str], bool] = lambda path: False,
    stdin: BinaryIO | None = None,
    jobs: int | None = None,
) -> LoadResult:
    """Read every path (``-`` is standard input); folders are searched recursively.

    ``excluded`` filters files and folders by path (config ``exclude``); a file named
    explicitly is read whatever its suffix. ``jobs``: processes to read many files with
    (default: ``GPUSTACK_JOBS``, else every CPU for large inputs, see ``load_files``).
    """
    parts: list[LoadResult | str] = []  # read, or a file still to read
    for path in paths:
        if path == STDIN:
            parts.append(_load_stream(stdin or sys.stdin.buffer))
            continue
        files, errors = _expand(path, excluded)
        parts.append(LoadResult(errors=tuple(errors)))
        parts.extend(files)
    pending = [index for index, part in enumerate(parts) if isinstance(part, str)]
    for index, result in zip(pending, load_files([parts[index] for index in pending], jobs=jobs), strict=True):
        parts[index] = result
    return LoadResult.merge(part for part in parts if isinstance(part, LoadResult))


# Many files are read by worker processes, one chunk each (the main process reads the
# first): parsing is most of a large run. Below these sizes starting a worker costs more
# than it saves, and only idle CPUs get one. GPUSTACK_JOBS sets the number of processes
# (1: none).
PARALLEL_FILES = 200
PARALLEL_BYTES = 2_000_000
JOBS_VARIABLE = "GPUSTACK_JOBS"


def load_files(files: list[str], *, jobs: int | None = None) -> list[LoadResult]:
    """``load_file`` of each file, in order; spread over processes when there are many.

    The results are the same either way (tests/lint/test_fast_path.py): a worker sends its
    resources back pickled, positions included (``_Positions.__reduce__``).
    """
    sizes = [_size(file) for file in files]
    jobs = _jobs(len(files), sum(sizes), jobs)
    if jobs <= 1:
        return [load_file(file) for file in files]
    chunks = _chunks(files, sizes, jobs)
    import multiprocessing
    import pickle

    context = multiprocessing.get_context("fork")
    sys.stdout.flush()  # a worker flushes on exit what the buffers held when it forked
    sys.stderr.flush()
    workers = []
    for chunk in chunks[1:]:
        receiver, sender = context.Pipe(duplex=False)
        worker = context.Process(target=_send_chunk, args=(sender, chunk), daemon=True)
        try:
            worker.start()
        except OSError:  # no process to be had: read it here
            receiver.close()
            worker = None
        sender.close()
        workers.append((chunk, receiver, worker))
    results = _load_chunk(chunks[0])
    for chunk, receiver, worker in workers:
        try:
            results.extend(pickle.loads(receiver.recv_bytes()) if worker else _load_chunk(chunk))
        except (EOFError, OSError, pickle.UnpicklingError):  # the worker died: read it here
            results.extend(_load_chunk(chunk))
        finally:
            receiver.close()
            if worker:
                worker.join()
    return results


def _load_chunk(files: list[str]) -> list[LoadResult]:
    return [load_file(file) for file in files]


def _send_chunk(sender: Any, files: list[str]) -> None:
    """In a worker process: read the files, send their results pickled."""
    import pickle

    sender.send_bytes(pickle.dumps(_load_chunk(files), protocol=pickle.HIGHEST_PROTOCOL))
    sender.close()


def _size(file: str) -> int:
    try:
        return os.stat(file).st_size
    except OSError:
        return 0


def _jobs(files: int, size: int, jobs: int | None) -> int:
    if jobs is None:
        setting = os.environ.get(JOBS_VARIABLE, "").strip()
        if setting.isdigit() and int(setting) > 0:
            jobs = int(setting)
        elif files < PARALLEL_FILES and size < PARALLEL_BYTES:
            return 1
        else:
            jobs = _idle_cpus()
    # fork: the workers start with everything imported; Linux only (macOS forks badly).
    return min(jobs, files) if sys.platform.startswith("linux") else 1


def _idle_cpus() -> int:
    """CPUs that other work leaves free (one-minute load average), at least one: on a busy
    machine a worker only adds the cost of sending its results (measured on two cores with
    one taken: 10,000 documents 2.7 s alone, 3.0 s with a worker)."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except OSError:
        return 1
    return max(1, min(cpus, round(cpus - load)))


def _chunks(files: list[str], sizes: list[int], jobs: int) -> list[list[str]]:
    """Consecutive runs of files of about equal size; the first, read by the main process
    while it also takes the others' results in, a little smaller."""
    total = sum(sizes) or 1
    shares = [0.85] + [1.0] * (jobs - 1)
    bounds = [total * sum(shares[: index + 1]) / sum(shares) for index in range(jobs)]
    chunks: list[list[str]] = [[] for _ in range(jobs)]
    done, chunk = 0, 0
    for file, size in zip(files, sizes, strict=True):
        while chunk < jobs - 1 and done >= bounds[chunk]:
            chunk += 1
        chunks[chunk].append(file)
        done += size
    return [chunk for chunk in chunks if chunk]


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
                found.append(file)
    return sorted(found), errors


def load_file(path: str) -> LoadResult:
    try:
        with open(path, "rb") as stream:
            data = stream.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        return LoadResult(errors=(InputError(path, f"cannot read: {exc.strerror or exc}"),))
    return load_bytes(path, data)


def _load_stream(stream: BinaryIO) -> LoadResult:
    try:
        data = stream.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        return LoadResult(errors=(InputError(STDIN_NAME, f"cannot read: {exc.strerror or exc}"),))
    return load_bytes(STDIN_NAME, data)


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
    if len(data) > MAX_FILE_BYTES:
        return LoadResult(errors=(InputError(name, f"larger than {MAX_FILE_BYTES >> 20} MiB: not read"),))
    if b"\0" in data[:8192]:
        return LoadResult(errors=(InputError(name, "binary file (holds NUL bytes): not read"),))
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        return LoadResult(errors=(InputError(name, f"not UTF-8 (byte 0x{data[exc.start]:02x})", line),))
    return load_text(name, text)


def load_text(name: str, text: str) -> LoadResult:
    """Parse one YAML (or JSON) stream: one Resource per object, ``kind: List`` items included."""
    source = _Source(name, text)
    resources: list[Resource] = []
    errors: list[InputError] = []
    try:
        for document in _documents(text):
            _resources_of(source, document, resources, errors)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (None, None)
        message = ": ".join(part for part in (exc.context, exc.problem) if part)
        return LoadResult(errors=(InputError(name, f"invalid YAML: {message}", line, column),))
    except _Invalid as exc:
        return LoadResult(errors=(InputError(name, exc.message, exc.line, exc.column),))
    except yaml.YAMLError as exc:
        return LoadResult(errors=(InputError(name, f"invalid YAML: {exc}"),))
    return LoadResult(tuple(resources), tuple(errors), {name: text})


@dataclass(frozen=True)
class _Document:
    index: int
    data: Any
    line: int  # 1-based line of the document's root node
    column: int
    source_comment: str | None
    position: int = 0  # the root node's start, packed as ``_pack`` does
    table: Mapping[int, Any] = field(default_factory=dict)  # _Builder.positions
    containers: list[Any] = field(default_factory=list)  # _Builder.containers


def _restore_positions(source: _Source, document: int, data: Any, root: int, pairs: list[Any]) -> _Positions:
    table = {id(container): where for container, where in pairs}
    return _Positions(source, document, data, root, table, [container for container, _ in pairs])


def _pack(mark: Any) -> int:
    """A libyaml mark's 0-based line and column in one int (columns of a 32 MiB line fit)."""
    return mark.line << 32 | mark.column


@dataclass(frozen=True, eq=False)
class _Positions:
    """Where the keys and items of one document start, recorded while it was read.

    ``table`` maps ``id()`` of each mapping and list of the document's data to the packed
    positions of its keys (a dict) or items (a list), as the precise path would find them:
    a duplicate key's last occurrence, a merged key where its source mapping has it, an
    alias where its anchor's node starts.
    """

    source: _Source
    document: int
    data: Any
    root: int
    table: Mapping[int, Any]
    containers: list[Any]  # the mappings and lists whose ids ``table`` holds

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled with the objects themselves (a worker process sends them; ids change)."""
        pairs = [(container, self.table[id(container)]) for container in self.containers]
        return _restore_positions, (self.source, self.document, self.data, self.root, pairs)

    def locate(self, prefix: Path, path: Path = ()) -> tuple[int, int]:
        node, position, table = self.data, self.root, self.table
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


def _resources_of(source: _Source, doc: _Document, resources: list[Resource], errors: list[InputError]) -> None:
    positions = _Positions(source, doc.index, doc.data, doc.position, doc.table, doc.containers)
    if doc.data is None:  # an empty document, or only comments
        return
    if not isinstance(doc.data, dict):
        what = "a list" if isinstance(doc.data, list) else "a scalar"
        errors.append(InputError(source.name, f"document is {what}, not a Kubernetes object", doc.line, doc.column))
        return
    items = doc.data.get("items")
    if _is_list_kind(doc.data) and isinstance(items, list):
        for index, item in enumerate(items):
            if isinstance(item, dict):
                resources.append(source.resource(doc, item, ("items", index), positions))
            else:
                line, column = positions.locate(("items", index))
                errors.append(InputError(source.name, f"items[{index}] is not a Kubernetes object", line, column))
        return
    resources.append(source.resource(doc, doc.data, (), positions))


def _is_list_kind(data: dict[str, Any]) -> bool:
    """``kind: List`` (kubectl get -o yaml) and typed lists such as ``PodList``."""
    kind = data.get("kind")
    return isinstance(kind, str) and kind.endswith("List") and "apiVersion" in data


@dataclass(frozen=True, eq=False)
class _Source:
    """One file's text; positions are computed from it on demand."""

    name: str
    text: str

    def resource(self, doc: _Document, data: dict[str, Any], prefix: Path, positions: _Positions) -> Resource:
        return Resource(
            file=self.name,
            data=data,
            locator=partial(positions.locate, prefix),
            document=doc.index,
            source_comment=doc.source_comment,
            document_path=prefix,
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
                builder.positions,
                builder.containers,
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
        self.positions: dict[int, Any] = {}  # id(mapping or list) -> key or item positions
        self.containers: list[Any] = []  # every mapping and list: alive as long as their ids key positions

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
                where[key] = mark.line << 32 | mark.column
            else:
                key = value(event, depth)
                if isinstance(key, (dict, list)):
                    raise _Invalid("a mapping key must be a plain value, not a mapping or list", event.start_mark)
                key = key_text(key)
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
            source_where = self.positions[id(source)]
            for key, item in source.items():
                if key not in result:
                    result[key] = item
                    where[key] = source_where[key]
        self.positions[id(result)] = where
        self.containers.append(result)
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
        self.positions[id(items)] = where
        self.containers.append(items)
        return items

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
