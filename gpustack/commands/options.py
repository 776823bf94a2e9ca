"""Options that several commands share, spelt the same everywhere."""

from __future__ import annotations

from typing import Annotated

import typer

ColorOption = Annotated[
    bool | None,
    typer.Option(
        "--color/--no-color",
        help="Colour the text output (default: when printing to a terminal and NO_COLOR is not set).",
        show_default=False,
    ),
]
