"""Parse one file's text: one pass of libyaml's C parser turns each document into plain data
with Kubernetes' YAML semantics (``yaml11.plain``) without building a node tree, which would
cost three times the memory of the data, and records on the side where each key and item
starts (from the marks libyaml gives every event anyway). The result is an ``Entry``: plain
data and positions, or the errors that kept the text from being read (invalid YAML, an
alias bomb, nesting too deep, a file that is not UTF-8); the lint cache keeps it.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import yaml
from yaml import events

from gpustack.lint.input.yaml11 import MERGE, key_text, plain
from gpustack.userinput import ALIAS_BOMB, MAX_ALIAS_NODES, Unreadable, decode

MAX_DEPTH = 200  # libyaml stops at 1000; no manifest nests deeper than a few dozen levels

_SOURCE_COMMENT = re.compile(r"^#\s*Source:\s*(\S.*?)\s*$", re.MULTILINE)
_SCALAR_TAGS = frozenset(f"tag:yaml.org,2002:{name}" for name in ("bool", "int", "float", "null"))


# What parsing one file's content gives, whatever the file is called: ("errors", ((message,
# line, column), ...)) when it cannot be read as YAML, else ("documents", (document, ...)),
# each document a tuple of plain data and positions (``Document.entry``). This is what the
# lint cache keeps and what worker processes send back, encoded (``encode.encoded``).
Entry = tuple[str, tuple[Any, ...]]


def parse_entry(data: bytes) -> tuple[Entry, str]:
    try:
        text = decode(data)
    except Unreadable as exc:
        return ("errors", ((exc.message, exc.line, None),)), ""
    return text_entry(text), text


# Said of a file that does not parse and holds template actions: a chart's templates/.
TEMPLATE_HINT = "; it holds {{ }}: a Helm template? lint what it renders to: `helm template CHART | gpustack lint -`"


def text_entry(text: str) -> Entry:
    try:
        return "documents", tuple(document.entry() for document in documents(text))
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


@dataclass(frozen=True)
class Document:
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


def _pack(mark: Any) -> int:
    """A libyaml mark's 0-based line and column in one int (columns of a 32 MiB line fit)."""
    return mark.line << 32 | mark.column


class _Invalid(Exception):
    """Input that parses as YAML but cannot be taken as data (alias bomb, deep nesting, …)."""

    def __init__(self, message: str, mark: Any) -> None:
        super().__init__(message)
        self.message = message
        self.line = mark.line + 1
        self.column = mark.column + 1


def documents(text: str) -> Iterator[Document]:
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
            yield Document(
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
    the positions of keys and items recorded on the side (``positions.Positions``).

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
            raise _Invalid(ALIAS_BOMB, event.start_mark)
        return value


def _duplicate(key: str, first: int, mark: Any) -> tuple[str, int, int]:
    """A key given twice in one mapping: current kubectl and Helm refuse the document, older
    readers keep the last value and drop the first unseen. Linted as the latter, reported."""
    message = f"duplicate key {key!r} (first at line {(first >> 32) + 1}): kubectl and Helm refuse the document"
    return message, mark.line + 1, mark.column + 1


def _check_depth(event: Any, depth: int) -> None:
    if depth > MAX_DEPTH:
        raise _Invalid(f"nested deeper than {MAX_DEPTH} levels: not read", event.start_mark)
