"""Entries as bytes: how the lint cache keeps a parsed file and how a worker process sends
one back (``encoded``, ``decoded``), and a document's positions encoded apart, read back on
the first ``locate`` (``decoded_positions``).
"""

from __future__ import annotations

import marshal
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpustack.lint.input.parse import Entry


def compact(wheres: list[Any] | bytes) -> list[list[int]] | bytes:
    """Positions as lists only (a mapping's in its keys' order): the encoding is then fast both ways."""
    if wheres.__class__ is bytes:
        return wheres
    return [list(where.values()) if where.__class__ is dict else where for where in wheres]


def encoded(entry: Entry) -> bytes:
    """An entry as the cache keeps it and workers send it: plain tuples and lists, the
    containers as references to the data's own mappings and lists. ``marshal`` keeps such
    references (any object referred to twice) and reads plain data back twice as fast as
    pickle, which is most of a run over cached files; its format may change with Python's
    version, which the cache's keys hold (``keys.code_fingerprint``). The positions of each
    document are encoded apart and read on the first ``locate``: they are most of an entry,
    and a run over cached files locates few objects (its findings are cached)."""
    kind, items = entry
    if kind == "documents":
        items = tuple((*item[:7], encoded_positions(item[7]), *item[8:]) for item in items)
    return marshal.dumps((kind, items))


def encoded_positions(wheres: list[Any] | bytes) -> bytes:
    return wheres if wheres.__class__ is bytes else marshal.dumps(compact(wheres))


def decoded_positions(payload: bytes) -> list[Any] | None:
    try:
        wheres = marshal.loads(payload)
    except (ValueError, EOFError, TypeError):
        return None
    return wheres if isinstance(wheres, list) and all(isinstance(where, list) for where in wheres) else None


def decoded(payload: bytes) -> Entry:
    entry: Entry = marshal.loads(payload)
    return entry
