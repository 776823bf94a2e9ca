"""The keys a chart's ``values.yaml`` declares: set ones, and ones it only shows in a comment.

Charts document optional keys as commented-out YAML (kube-prometheus-stack's
``# configSecret:``): a user who uncomments one writes a key the chart declares. Set keys come
from the YAML itself; commented keys from the lines, placed by their indentation (after the
``#``) among the set and commented keys above them:

    alertmanagerSpec:
      ## Prose about the key.
      # configSecret:            -> alertmanagerSpec.configSecret

Prose is told from keys by shape: a commented key starts with a lower-case letter and is
followed by nothing, a single word (not a link), a quoted string, or ``[``/``{``. Lines inside block
scalars and list items are skipped. Best effort by design: a missed commented key is only a
key the templates must read to count.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

Path = tuple[str, ...]

_SET_KEY = re.compile(r"(?P<indent> *)(?P<key>[A-Za-z0-9_][A-Za-z0-9_.\-/]*|\"[^\"]+\"|'[^']+'):(?: +(?P<value>.*))?$")
_COMMENTED_KEY = re.compile(
    r"(?P<indent> *)#+ ?(?P<inner> *)(?P<key>[a-z][A-Za-z0-9_\-]*):(?: +(?P<value>\S+|\"[^\"]*\"|'[^']*'|[\[{].*))?\s*$"
)
_LIST_ITEM = re.compile(r"(?P<indent> *)(?:#+ ?(?P<inner> *))?- ")
_BLOCK_SCALAR = re.compile(r"[|>][-+0-9]*\s*(?:#.*)?$")


def set_keys(values: Any, prefix: Path = ()) -> Iterator[Path]:
    """Every key path of a values tree (not into lists)."""
    if isinstance(values, Mapping):
        for key, value in values.items():
            yield (*prefix, str(key))
            yield from set_keys(value, (*prefix, str(key)))


def commented_keys(text: str) -> set[Path]:
    """Key paths that ``values.yaml`` shows only in comments (see the module docstring)."""
    found: set[Path] = set()
    stack: list[tuple[int, str | None]] = []  # (indent, key); None: a list item, nothing below counts
    block_indent: int | None = None
    for line in text.splitlines():
        stripped = line.lstrip(" ")
        indent = len(line) - len(stripped)
        if not stripped:
            continue
        if block_indent is not None:
            if indent > block_indent:
                continue
            block_indent = None
        item = _LIST_ITEM.match(line)
        commented = _COMMENTED_KEY.match(line)
        if item:
            depth = len(item.group("indent")) + len(item.group("inner") or "")
            _pop(stack, depth)
            stack.append((depth, None))
        elif stripped.startswith("#"):
            if commented is None or "://" in (commented.group("value") or ""):
                continue  # prose, or a ``# ref: https://…`` link
            depth = len(commented.group("indent")) + len(commented.group("inner"))
            _pop(stack, depth)
            if all(key is not None for _, key in stack):
                path = tuple(key for _, key in stack if key is not None) + (commented.group("key"),)
                found.add(path)
                stack.append((depth, commented.group("key")))
        elif match := _SET_KEY.match(line):
            _pop(stack, indent)
            stack.append((indent, match.group("key").strip("\"'")))
            if _BLOCK_SCALAR.match(match.group("value") or ""):
                block_indent = indent
    return found


def _pop(stack: list[tuple[int, str | None]], depth: int) -> None:
    while stack and stack[-1][0] >= depth:
        stack.pop()
