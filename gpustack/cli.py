"""The ``gpustack`` command line: parse, call one command function, map errors to exit codes.

Commands live in ``gpustack.commands``; this module only wires them and owns the single
error handler: a ``GpustackError`` prints its problems to stderr and exits 2, and nothing
else reaches the user as a traceback.
"""

from __future__ import annotations

import os
import sys

import typer

from gpustack import __version__
from gpustack.commands import lint as lint_commands
from gpustack.commands import node as node_commands
from gpustack.commands import render as render_command
from gpustack.commands import spec_commands
from gpustack.errors import GpustackError

app = typer.Typer(
    name="gpustack",
    help="Render a Kubernetes GPU stack from a typed spec, and lint manifests for GPU pitfalls.",
    no_args_is_help=True,
    add_completion=False,
    # Plain click help: paragraphs rewrapped to the terminal, no rich panels.
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"gpustack {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
) -> None:
    """gpustack: render GPU stacks, lint GPU manifests."""


app.command("render")(render_command.render)
app.command("validate")(spec_commands.validate)
app.command("lint")(lint_commands.lint)
app.command("rules")(lint_commands.rules)
app.command("explain")(lint_commands.explain)
app.command("schema")(spec_commands.schema)
app.command("doctor")(node_commands.doctor)
app.command("discover")(node_commands.discover)


def main(argv: list[str] | None = None) -> None:
    """Entry point of the console script: usage errors exit 2 (click), gpustack errors too."""
    try:
        app(args=argv)
    except GpustackError as exc:
        for problem in exc.problems:
            print(f"error: {problem}", file=sys.stderr)
        sys.exit(exc.exit_code)
    except BrokenPipeError:
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as exc:  # noqa: BLE001 - the last line of defence: never a traceback
        print(
            f"error: internal error: {type(exc).__name__}: {exc}\n"
            "This is a bug in gpustack; set GPUSTACK_DEBUG=1 to see the traceback.",
            file=sys.stderr,
        )
        if os.environ.get("GPUSTACK_DEBUG"):
            raise
        sys.exit(2)
