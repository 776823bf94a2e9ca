"""Text for a terminal: whether to colour it and how, shared by every command that prints.

Colour follows one convention everywhere: ``--color``/``--no-color`` when given, else on only
when the stream is a terminal and ``NO_COLOR`` is not set (https://no-color.org).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TextIO

Painter = Callable[[str, str], str]  # (ANSI SGR code, text) -> text
BOLD, DIM, RED, GREEN, YELLOW, CYAN = "1", "2", "1;31", "1;32", "1;33", "1;36"

def use_color(stream: TextIO, choice: bool | None) -> bool:
    if choice is not None:
        return choice
    return stream.isatty() and "NO_COLOR" not in os.environ


def painter(color: bool) -> Painter:
    return _paint if color else _plain


def _paint(code: str, text: str) -> str:
    return f"\x1b[{code}m{text}\x1b[0m"


def _plain(code: str, text: str) -> str:
    return text


def aligned(rows: Sequence[Sequence[str]]) -> str:
    """Rows as columns padded to their widest cell; the last column is not padded."""
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]) - 1)]
    return "".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths)) + "  " + row[-1] + "\n" for row in rows
    )
