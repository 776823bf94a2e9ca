"""Plain data as YAML text, in the style of the file it goes into.

A string is written plain when Kubernetes' YAML semantics (``yaml11.plain``) read it back as
the same string, and double-quoted otherwise (``"true"``, ``"1"``, ``"on"``, anything with a
colon or a hash). Collections go in block or flow style, as the place they go into is
written; block text is a list of lines without line breaks, flow text a single line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gpustack.lint.input.yaml11 import key_text, plain

# Conservative on purpose: characters that never start or end a plain scalar's meaning,
# neither in block nor in flow context.
_PLAIN = re.compile(r"[A-Za-z0-9_./][A-Za-z0-9_./@=+-]*")


@dataclass(frozen=True)
class Style:
    """How the file is indented and how its flow collections are spaced."""

    indent: int = 2  # a nested mapping's keys, relative to its parent's keys
    sequence_indent: int = 2  # a block sequence's dashes, relative to its parent's keys (0: indentless)
    item_indent: int = 2  # a block sequence item's content, relative to its dash
    flow_padding: bool = False  # `{ a: b }` rather than `{a: b}`


def scalar(value: Any, *, quote: str = "") -> str:
    """One scalar; ``quote`` (``'`` or ``"``) keeps the quoting of the text it replaces."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    text = str(value)
    if quote == "'":
        return "'" + text.replace("'", "''") + "'"
    if quote != '"' and _PLAIN.fullmatch(text) and plain(text) == text:
        return text
    return json.dumps(text, ensure_ascii=False)


def key(name: str, *, quote: str = "") -> str:
    """A mapping key; a key that would read as something else (``on``, ``1``) is quoted."""
    if not quote and _PLAIN.fullmatch(name) and key_text(plain(name)) == name:
        return name
    return scalar(name, quote=quote or '"')


def is_collection(value: Any) -> bool:
    return isinstance(value, Mapping) or (isinstance(value, Sequence) and not isinstance(value, str))


def flow(value: Any, style: Style) -> str:
    """A value in flow style: ``{name: X, value: "true"}``, ``[ALL]``."""
    if isinstance(value, Mapping):
        items = [f"{key(str(k))}: {flow(v, style)}" for k, v in value.items()]
        return _bracket("{", items, "}", style)
    if is_collection(value):
        return _bracket("[", [flow(item, style) for item in value], "]", style)
    return scalar(value)


def _bracket(opening: str, items: list[str], closing: str, style: Style) -> str:
    if not items:
        return opening + closing
    pad = " " if style.flow_padding else ""
    return f"{opening}{pad}{', '.join(items)}{pad}{closing}"


def block_entry(name: str, value: Any, column: int, style: Style, *, flow_values: bool = False) -> list[str]:
    """``name: value`` as lines of a block mapping whose keys start at ``column``.

    ``flow_values`` writes a collection value in flow style, as its siblings are written.
    """
    head = " " * column + key(name) + ":"
    if not is_collection(value) or not value or flow_values:
        return [f"{head} {flow(value, style)}"]
    return [head, *block_value(value, column, style)]


def block_value(value: Any, column: int, style: Style) -> list[str]:
    """The lines of a non-empty collection that is the value of a key at ``column``."""
    if isinstance(value, Mapping):
        return [line for k, v in value.items() for line in block_entry(str(k), v, column + style.indent, style)]
    dash = column + style.sequence_indent
    return [line for item in value for line in block_item(item, dash, dash + style.item_indent, style)]


def block_item(item: Any, dash: int, content: int, style: Style, *, flow_values: bool = False) -> list[str]:
    """One item of a block sequence: ``- `` at column ``dash``, its content at ``content``."""
    prefix = " " * dash + "-" + " " * (content - dash - 1)
    if not isinstance(item, Mapping) or not item or flow_values:
        return [prefix + flow(item, style)]
    lines = [line for k, v in item.items() for line in block_entry(str(k), v, content, style)]
    return [prefix + lines[0][content:], *lines[1:]]
