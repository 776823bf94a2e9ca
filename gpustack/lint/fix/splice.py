"""Edits into text: every edit becomes a change of one span of the original text.

Autofix splices the changed spans into the original text rather than dumping
documents again (a dump re-wraps long strings and changes quoting). So each edit is resolved
against the file's node trees to an operation on one node (insert a key, append items,
replace a value, remove a key, rename a key), operations on the same node are merged (two
findings may add the same missing ``limits``), each is written as text in the style of the
place it goes into, and the spans are joined with the untouched text between them.

The edits of one finding go in together or not at all: one that is unsafe (it would change a
YAML anchor that other places alias) or that collides with another finding's is left out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from gpustack.lint.fix import emit
from gpustack.lint.fix.layout import Entry, Layout, Unsafe
from gpustack.lint.model import AppendItem, DeleteKey, Edit, Path, RenameKey, SetValue


@dataclass(frozen=True)
class Fix:
    """The edits of one finding, in one document of the file."""

    document: int
    edits: tuple[Edit, ...]


@dataclass(frozen=True)
class Spliced:
    text: str
    applied: frozenset[int]  # indexes of the fixes whose edits are in ``text``
    refused: Mapping[int, str]  # index of a fix -> why it was left out


def splice(text: str, fixes: Sequence[Fix]) -> Spliced:
    """Apply the fixes that can be applied safely and together."""
    layout = Layout(text)
    ops: dict[int, list[_Op]] = {}
    refused: dict[int, str] = {}
    for index, fix in enumerate(fixes):
        try:
            ops[index] = [op for edit in fix.edits for op in _resolve(layout, fix.document, edit)]
        except Unsafe as exc:
            refused[index] = f"not fixed: {exc}"
    while True:
        try:
            changes = _changes(layout, ops)
            break
        except _Conflict as exc:
            latest = max(exc.fixes)
            refused[latest] = f"not fixed: {exc.reason}"
            del ops[latest]
    return Spliced(_joined(text, changes), frozenset(ops), refused)


# --- operations on nodes ---------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class _Insert:
    mapping: MappingNode
    name: str
    value: Any


@dataclass(frozen=True, eq=False)
class _Append:
    sequence: SequenceNode
    items: tuple[Any, ...]


@dataclass(frozen=True, eq=False)
class _Replace:
    entry: Entry
    value: Any


@dataclass(frozen=True, eq=False)
class _Remove:
    entry: Entry


@dataclass(frozen=True, eq=False)
class _Rename:
    entry: Entry
    name: str


_Op = _Insert | _Append | _Replace | _Remove | _Rename


def _resolve(layout: Layout, document: int, edit: Edit) -> list[_Op]:
    if isinstance(edit, SetValue):
        return [_set(layout, document, edit.path, edit.value)]
    reached = layout.reach(document, edit.path)
    if isinstance(edit, AppendItem):
        if not reached.rest and isinstance(reached.node, SequenceNode):
            return [_Append(reached.node, (edit.item,))]
        return [_set(layout, document, edit.path, [edit.item])]
    if reached.rest:
        if isinstance(edit, DeleteKey):
            return []  # nothing to delete
        raise Unsafe(f"{_dotted(edit.path)} does not exist")
    if reached.entry is None:
        raise Unsafe(f"{_dotted(edit.path)} is not a mapping key")
    if isinstance(edit, RenameKey):
        if layout.entry(reached.entry.mapping, edit.key) is not None:
            raise Unsafe(f"{_dotted(edit.path)}: the mapping already has {edit.key}")
        return [_Rename(reached.entry, edit.key)]
    layout.check_private(reached.node)
    key = reached.entry.key.start_mark.index
    if not reached.entry.mapping.flow_style and layout.text[layout.line_start(key) : key].strip():
        raise Unsafe(f"{_dotted(edit.path)} shares its line with a list item's dash")
    return [_Remove(reached.entry)]


def _set(layout: Layout, document: int, path: Path, value: Any) -> _Op:
    reached = layout.reach(document, path)
    if not reached.rest:
        if reached.entry is None:
            raise Unsafe(f"{_dotted(path)} is not a mapping key")
        layout.check_private(reached.node)  # what it replaces holds no anchor used elsewhere
        return _Replace(reached.entry, value)
    first, *more = reached.rest
    if not isinstance(first, str) or not all(isinstance(step, str) for step in more):
        raise Unsafe(f"{_dotted(path)}: no such list item")
    for step in reversed(more):
        value = {step: value}
    if isinstance(reached.node, MappingNode):
        return _Insert(reached.node, first, value)
    if layout.is_null(reached.node) and reached.entry is not None:
        return _Replace(reached.entry, {first: value})
    raise Unsafe(f"{_dotted(path[: len(path) - len(reached.rest)])} is not a mapping")


def _dotted(path: Path) -> str:
    return ".".join(f"[{step}]" if isinstance(step, int) else step for step in path).replace(".[", "[")


# --- merging ---------------------------------------------------------------------------------


class _Conflict(Exception):
    """Fixes whose operations cannot all be written: the latest is left out, and we retry."""

    def __init__(self, fixes: set[int], reason: str = "its edits collide with another fix; run --fix again") -> None:
        super().__init__(fixes, reason)
        self.fixes = fixes
        self.reason = reason


@dataclass(frozen=True)
class _Change:
    start: int
    end: int
    text: str
    depth: int  # insertions at one point: the deeper (more indented) one comes first
    fixes: frozenset[int]


def _changes(layout: Layout, ops: Mapping[int, list[_Op]]) -> list[_Change]:
    """Merged operations as changes in text order; _Conflict when two overlap."""
    merged: dict[tuple[str, int, str], tuple[_Op, set[int]]] = {}
    for index, fix_ops in ops.items():
        for op in fix_ops:
            target = _target(op)
            if target not in merged:
                merged[target] = (op, {index})
                continue
            previous, owners = merged[target]
            combined = _merge(previous, op)
            if combined is None:
                raise _Conflict(owners | {index})
            merged[target] = (combined, owners | {index})
    changes = sorted(
        (_change(layout, op, frozenset(owners)) for op, owners in merged.values()),
        key=lambda change: (change.start, change.end, -change.depth),
    )
    for before, after in pairwise(changes):
        if after.start < before.end:
            raise _Conflict(set(before.fixes | after.fixes))
    return changes


def _target(op: _Op) -> tuple[str, int, str]:
    """What an operation changes; a key and its value are apart (rename one, replace the other)."""
    if isinstance(op, _Insert):
        return ("insert", id(op.mapping), op.name)
    if isinstance(op, _Append):
        return ("append", id(op.sequence), "")
    return (type(op).__name__, id(op.entry.key), "")


def _merge(first: _Op, second: _Op) -> _Op | None:
    """Two operations on one target as one, or None when they disagree."""
    if isinstance(first, _Insert) and isinstance(second, _Insert):
        value = _merged_value(first.value, second.value)
        return None if value is _DISAGREE else _Insert(first.mapping, first.name, value)
    if isinstance(first, _Append) and isinstance(second, _Append):
        return _Append(first.sequence, first.items + tuple(i for i in second.items if i not in first.items))
    if type(first) is type(second) and _same(first, second):
        return first
    return None


_DISAGREE = object()


def _merged_value(first: Any, second: Any) -> Any:
    if isinstance(first, Mapping) and isinstance(second, Mapping):
        result = dict(first)
        for key, value in second.items():
            result[key] = _merged_value(result[key], value) if key in result else value
            if result[key] is _DISAGREE:
                return _DISAGREE
        return result
    if emit.is_collection(first) and emit.is_collection(second) and not isinstance(first, Mapping):
        return [*first, *(item for item in second if item not in first)]
    return first if first == second else _DISAGREE


def _same(first: _Op, second: _Op) -> bool:
    if isinstance(first, _Replace) and isinstance(second, _Replace):
        return first.value == second.value
    if isinstance(first, _Rename) and isinstance(second, _Rename):
        return first.name == second.name
    return isinstance(first, _Remove)


# --- text ------------------------------------------------------------------------------------


def _change(layout: Layout, op: _Op, fixes: frozenset[int]) -> _Change:
    try:
        return _written(layout, op, fixes)
    except Unsafe as exc:
        raise _Conflict(set(fixes), str(exc)) from None


def _written(layout: Layout, op: _Op, fixes: frozenset[int]) -> _Change:
    if isinstance(op, _Insert):
        start, text, depth = _insert(layout, op)
        return _Change(start, start, text, depth, fixes)
    if isinstance(op, _Append):
        start, text, depth = _append(layout, op)
        return _Change(start, start, text, depth, fixes)
    if isinstance(op, _Replace):
        start, end, text = _replace(layout, op.entry, op.value)
    elif isinstance(op, _Remove):
        start, end, text = _remove(layout, op.entry)
    else:
        key = op.entry.key
        start, end, text = key.start_mark.index, key.end_mark.index, emit.key(op.name, quote=layout.quote(key))
    return _Change(start, end, text, 0, fixes)


def _insert(layout: Layout, op: _Insert) -> tuple[int, str, int]:
    mapping, style = op.mapping, layout.style
    if mapping.flow_style:
        entry = f"{emit.key(op.name)}: {emit.flow(op.value, style)}"
        if mapping.value:
            return layout.child_end(mapping, len(mapping.value) - 1), ", " + entry, 0
        return layout.text.rindex("}", 0, mapping.end_mark.index), entry, 0
    column = mapping.value[0][0].start_mark.column
    values = [value for _, value in mapping.value if isinstance(value, (MappingNode, SequenceNode))]
    flow_values = bool(values) and all(value.flow_style for value in values)  # as its siblings are
    lines = emit.block_entry(op.name, op.value, column, style, flow_values=flow_values)
    return (*_lines_after(layout, layout.insertion_line(layout.end(mapping), column), lines), column)


def _append(layout: Layout, op: _Append) -> tuple[int, str, int]:
    sequence, style = op.sequence, layout.style
    if sequence.flow_style:
        items = ", ".join(emit.flow(item, style) for item in op.items)
        if sequence.value:
            return layout.child_end(sequence, len(sequence.value) - 1), ", " + items, 0
        return layout.text.rindex("]", 0, sequence.end_mark.index), items, 0
    dash = sequence.start_mark.column
    content = sequence.value[0].start_mark.column
    last = sequence.value[-1]
    flow_values = isinstance(last, MappingNode) and bool(last.flow_style)  # as the last item is
    lines = [line for item in op.items for line in emit.block_item(item, dash, content, style, flow_values=flow_values)]
    return (*_lines_after(layout, layout.insertion_line(layout.end(sequence), dash), lines), dash)


def _lines_after(layout: Layout, at: int, lines: list[str]) -> tuple[int, str]:
    """Whole lines to insert at the line start ``at``, with the file's line breaks."""
    text = layout.newline.join(lines)
    if at == len(layout.text) and not layout.text.endswith("\n"):
        return at, layout.newline + text  # the file ends without a line break: so does the fix
    return at, text + layout.newline


def _replace(layout: Layout, entry: Entry, value: Any) -> tuple[int, int, str]:
    node, style = entry.value, layout.style
    block_node = isinstance(node, (MappingNode, SequenceNode)) and not node.flow_style
    empty = isinstance(node, ScalarNode) and node.start_mark.index == node.end_mark.index
    if emit.is_collection(value) and value and not entry.mapping.flow_style and not _is_flow(node):
        # A block collection under the key; a comment on the key's line stays there.
        colon = layout.after_colon(entry)
        start = layout.line_end(colon) if block_node or empty else colon
        lines = emit.block_value(value, entry.key.start_mark.column, style)
        return start, max(start, layout.end(node)), layout.newline + layout.newline.join(lines)
    text = emit.flow(value, style) if emit.is_collection(value) else emit.scalar(value, quote=_quote(layout, node))
    if block_node:
        return layout.after_colon(entry), layout.end(node), " " + text
    if empty:
        space = "" if layout.text[node.start_mark.index - 1] in " \t" else " "
        return node.start_mark.index, node.start_mark.index, space + text
    return node.start_mark.index, layout.end(node), text


def _is_flow(node: Node) -> bool:
    return isinstance(node, (MappingNode, SequenceNode)) and bool(node.flow_style)


def _quote(layout: Layout, node: Node) -> str:
    return layout.quote(node) if isinstance(node, ScalarNode) else ""


def _remove(layout: Layout, entry: Entry) -> tuple[int, int, str]:
    mapping, key = entry.mapping, entry.key
    if mapping.flow_style:
        if entry.index > 0:
            return layout.child_end(mapping, entry.index - 1), layout.end(entry.value), ""
        if len(mapping.value) > 1:
            return key.start_mark.index, mapping.value[1][0].start_mark.index, ""
        return key.start_mark.index, layout.end(entry.value), ""
    return layout.line_start(key.start_mark.index), layout.next_line(layout.end(entry.value)), ""


def _joined(text: str, changes: list[_Change]) -> str:
    parts: list[str] = []
    position = 0
    for change in changes:
        parts += (text[position : change.start], change.text)
        position = change.end
    parts.append(text[position:])
    return "".join(parts)
