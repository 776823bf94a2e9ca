"""``gpustack validate`` and ``gpustack schema``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from gpustack.commands.options import ColorOption
from gpustack.errors import GpustackError, SpecError


def validate(
    specs: Annotated[
        list[str], typer.Argument(help="Spec files to check (- for standard input).", metavar="SPEC...")
    ],
    color: ColorOption = None,
) -> None:
    """Check spec files: schema, GPU models and cross-field rules.

    Prints every problem as file:line:col: path: message and exits 2 when any spec is
    invalid; prints "<file>: ok" per valid spec otherwise.
    """
    from gpustack.spec.load import load_spec
    from gpustack.terminal import BOLD, GREEN, RED, painter, use_color

    paint = painter(use_color(sys.stdout, color))
    problems = []
    for spec in specs:
        try:
            load_spec(spec)
        except GpustackError as exc:
            problems.extend(exc.problems)
        else:
            typer.echo(f"{paint(BOLD, spec + ':')} {paint(GREEN, 'ok')}", color=True)
    if problems:
        paint = painter(use_color(sys.stderr, color))
        for problem in problems:
            where = f"{paint(BOLD, problem.where + ':')} " if problem.where else ""
            sys.stderr.write(f"{paint(RED, 'error')}: {where}{problem.what}\n")
        raise typer.Exit(SpecError.exit_code)


def schema(
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the schema to this file instead of stdout.")
    ] = None,
) -> None:
    """Print the JSON Schema of the spec file (for editors: yaml-language-server $schema)."""
    from gpustack.spec.schema import spec_schema_text

    text = spec_schema_text()
    if output is None:
        typer.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")
