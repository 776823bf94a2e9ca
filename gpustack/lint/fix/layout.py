"""Where things are in a YAML text: its node trees, read the way the loader reads them, and
the spans, indentation and style that splicing needs.

Keys match as in ``gpustack.lint.input.load`` (Kubernetes' YAML semantics, the last of duplicate
keys wins). Anything reached more than once (an anchor and its aliases) or through a merge
key (``<<``) is shared with another place, and editing it would change that place too: such
paths raise ``Unsafe``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from gpustack.lint.fix.emit import Style
from gpustack.lint.input.yaml11 import key_text, plain
from gpustack.lint.model import Path


class Unsafe(Exception):
    """An edit that cannot be spliced without changing something else."""


@dataclass(frozen=True, eq=False)
class Entry:
    """One ``key: value`` of a mapping node."""

    mapping: MappingNode
    key: ScalarNode
    value: Node
    index: int  # position among the mapping's entries


@dataclass(frozen=True)
class Reached:
    """How far a path goes in a document: the deepest node, the entry that holds it as its
    value (None for the root or a list item), and the steps that do not exist."""

    node: Node
    entry: Entry | None
    rest: Path


class Layout:
    """One file's text and node trees (composed once; positions are character offsets)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.documents: list[Node] = list(yaml.compose_all(text, Loader=yaml.CSafeLoader))

    # --- navigation ------------------------------------------------------------------------

    def reach(self, document: int, path: Path) -> Reached:
        """Follow ``path`` from the root of ``document`` as far as it exists."""
        node = self.documents[document]
        holder: Entry | None = None
        for index, step in enumerate(path):
            self.check_private(node, deep=False)
            if isinstance(node, MappingNode) and isinstance(step, str):
                found = self.entry(node, step)
                if found is None:
                    return Reached(node, holder, path[index:])
                holder, node = found, found.value
            elif isinstance(node, SequenceNode) and isinstance(step, int) and 0 <= step < len(node.value):
                holder, node = None, node.value[step]
            else:
                return Reached(node, holder, path[index:])
        self.check_private(node, deep=False)
        return Reached(node, holder, ())

    def entry(self, mapping: MappingNode, name: str) -> Entry | None:
        """The entry of key ``name`` (the last of duplicates); Unsafe when only a merge has it."""
        merges = False
        for index in reversed(range(len(mapping.value))):
            key, value = mapping.value[index]
            if not isinstance(key, ScalarNode):
                continue
            text = key_text(plain(key.value)) if not key.style else key.value
            if text == name:
                return Entry(mapping, key, value, index)
            merges = merges or (not key.style and key.value == "<<")
        if merges:
            raise Unsafe(f"{name} may come from a merge key (<<): editing it here would override the merge")
        return None

    def check_private(self, node: Node, *, deep: bool = True) -> None:
        """Raise Unsafe when ``node`` (or, ``deep``, anything inside it) is shared by an alias."""
        nodes = _nodes(node) if deep else (node,)
        if any(id(inner) in self._shared for inner in nodes):
            raise Unsafe("it is shared with other places through a YAML anchor and alias")

    @cached_property
    def _shared(self) -> frozenset[int]:
        seen: Counter[int] = Counter()
        stack = list(self.documents)
        while stack:
            node = stack.pop()
            seen[id(node)] += 1
            if seen[id(node)] == 1:
                stack.extend(_children(node))
        return frozenset(node for node, count in seen.items() if count > 1)

    # --- spans ------------------------------------------------------------------------------

    def end(self, node: Node) -> int:
        """Where the node's content ends: after its last character that is not a comment,
        a trailing blank line or (block collections) a following token."""
        if isinstance(node, ScalarNode):
            start, end = node.start_mark.index, node.end_mark.index
            if node.style in ("|", ">") and "+" not in self._header(start):
                return start + len(self.text[start:end].rstrip())
            return end
        if node.flow_style or not node.value:
            return node.end_mark.index
        return self.child_end(node, len(node.value) - 1)

    def child_end(self, parent: MappingNode | SequenceNode, index: int) -> int:
        """Where the content of ``parent``'s item or value ``index`` ends. Unsafe for an alias
        (``*name``): its node, and so its positions, are those of its anchor elsewhere."""
        if isinstance(parent, MappingNode):
            key, child = parent.value[index]
            before = key.end_mark.index
        else:
            child = parent.value[index]
            before = parent.value[index - 1].end_mark.index if index else parent.start_mark.index
        if child.start_mark.index < before:
            raise Unsafe("an alias (*name) stands where the change would go")
        return self.end(child)

    def _header(self, start: int) -> str:
        """A block scalar's header (``|``, ``>-``, ``|2+``), without a comment."""
        return self.text[start : self.line_end(start)].split("#", 1)[0]

    def line_start(self, index: int) -> int:
        return self.text.rfind("\n", 0, index) + 1

    def line_end(self, index: int) -> int:
        """The index of the line break that ends the line of ``index`` (or the text's end)."""
        found = self.text.find("\n", index)
        end = len(self.text) if found < 0 else found
        return end - 1 if end > 0 and self.text[end - 1] == "\r" else end

    def next_line(self, index: int) -> int:
        """The start of the line after ``index``'s (the text's end on the last line)."""
        if index > 0 and self.text[index - 1] == "\n":
            return index  # already at a line start (a block scalar that keeps its blank lines)
        found = self.text.find("\n", index)
        return len(self.text) if found < 0 else found + 1

    def insertion_line(self, index: int, column: int) -> int:
        """The start of the line after ``index``'s, past the comment lines indented deeper than
        ``column``: commented-out entries of the block that ends there stay with it."""
        at = self.next_line(index)
        while at < len(self.text):
            line = self.text[at : self.line_end(at)]
            content = line.lstrip(" ")
            if not content.startswith("#") or len(line) - len(content) <= column:
                break
            at = self.next_line(at + len(line))
        return at

    def after_colon(self, entry: Entry) -> int:
        """The index right after the ``:`` that follows a key."""
        return self.text.index(":", entry.key.end_mark.index) + 1

    @staticmethod
    def quote(node: ScalarNode) -> str:
        return node.style if node.style in ("'", '"') else ""

    @staticmethod
    def is_null(node: Node) -> bool:
        """An empty value, ``~`` or ``null`` (plain): a missing collection may go there."""
        return isinstance(node, ScalarNode) and not node.style and plain(node.value) is None

    # --- the file's style -------------------------------------------------------------------

    @cached_property
    def newline(self) -> str:
        return "\r\n" if "\r\n" in self.text else "\n"

    @cached_property
    def style(self) -> Style:
        """The indentation that most nested collections of the file use (defaults: 2, 2)."""
        indents: Counter[int] = Counter()
        sequence_indents: Counter[int] = Counter()
        item_indents: Counter[int] = Counter()
        padding: bool | None = None
        for node in self._all_nodes():
            if isinstance(node, ScalarNode):
                continue
            if node.flow_style and node.value and padding is None:
                padding = self.text[node.start_mark.index + 1 : node.start_mark.index + 2] == " "
            first = node.value[0] if isinstance(node, SequenceNode) and node.value else None
            if first is not None and not node.flow_style and first.start_mark.line == node.start_mark.line:
                item_indents[first.start_mark.column - node.start_mark.column] += 1  # `- ` up to the item
            if not isinstance(node, MappingNode) or node.flow_style:
                continue
            for key, value in node.value:
                if isinstance(value, MappingNode) and not value.flow_style and value.value:
                    indents[value.value[0][0].start_mark.column - key.start_mark.column] += 1
                elif isinstance(value, SequenceNode) and not value.flow_style and value.value:
                    sequence_indents[value.start_mark.column - key.start_mark.column] += 1
        return Style(
            indent=_most_common(indents, 2),
            sequence_indent=_most_common(sequence_indents, 2),
            item_indent=_most_common(item_indents, 2),
            flow_padding=bool(padding),
        )

    def _all_nodes(self) -> Iterator[Node]:
        for document in self.documents:
            yield from _nodes(document)


def _children(node: Node) -> list[Node]:
    if isinstance(node, MappingNode):
        return [inner for pair in node.value for inner in pair]
    if isinstance(node, SequenceNode):
        return list(node.value)
    return []


def _nodes(node: Node) -> Iterator[Node]:
    """``node`` and everything inside it, each once."""
    seen: set[int] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        stack.extend(_children(current))


def _most_common(counts: Counter[int], default: int) -> int:
    positive = [(value, count) for value, count in counts.most_common() if value >= 0]
    return positive[0][0] if positive else default
