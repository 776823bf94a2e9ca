"""Positions: where a path into a document starts in its file, as 1-based line and column.

The fast path (``Positions``) looks the path up in the positions recorded while the document
was read (``parse``), so ``Resource.locate`` never parses again; only a path that goes on
into a string holding YAML (Helm values in ``valuesContent``) takes the precise path,
``Source.locate``, which composes the file's node trees (tests prove both give the same
positions).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache, partial
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from gpustack.lint.input.encode import compact, decoded_positions
from gpustack.lint.input.yaml11 import key_text, plain
from gpustack.lint.model import Path, Resource, computed_once, copied


@dataclass(frozen=True, eq=False)
class Positions:
    """Where the keys and items of one document start, recorded while it was read.

    ``containers`` are the document's mappings and lists, ``wheres`` the packed positions of
    each one's keys (a dict, or a list in the mapping's key order) or items (a list), as the
    precise path would find them: a duplicate key's last occurrence, a merged key where its
    source mapping has it, an alias where its anchor's node starts. The lookup table by
    ``id()`` is built on the first ``locate``: most documents are never asked.
    """

    source: Source
    document: int
    data: Any
    root: int
    containers: list[Any]
    wheres: list[Any] | bytes  # encoded until the first ``locate`` (``encode.encoded``)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled with the objects themselves (ids change in another process)."""
        return Positions, (self.source, self.document, self.data, self.root, self.containers, compact(self.wheres))

    @computed_once
    def table(self) -> dict[int, Any] | None:
        """None when encoded positions do not fit the document (a damaged cache entry)."""
        wheres = self.wheres
        if wheres.__class__ is bytes:
            wheres = decoded_positions(wheres)
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


@dataclass(frozen=True, eq=False)
class Source:
    """One file's text; positions are computed from it on demand."""

    name: str
    text: str

    def resource(
        self, document: int, comment: str | None, data: dict[str, Any], prefix: Path, positions: Positions
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
                "written": None,
            },
        )

    def locate(self, document: int, prefix: Path, path: Path = ()) -> tuple[int, int]:
        """1-based (line, column) of the deepest key or item of ``prefix + path`` that exists.

        The precise path: it composes the file's node trees (``Positions.locate`` gives the
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
def _lines(source: Source) -> list[str]:
    return source.text.splitlines()


@lru_cache(maxsize=16)
def _node_trees(source: Source) -> list[Node]:
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
