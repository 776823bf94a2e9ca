"""The ``gpustack`` command line: parse, call one command function, map errors to exit codes.

Commands live in ``gpustack.commands``; this module only wires them and owns the single
error handler: a ``GpustackError`` prints its problems to stderr and exits 2, and nothing
else reaches the user as a traceback.
"""

from __future__ import annotations

import inspect
import os
import sys
from collections.abc import Callable
from typing import Annotated, Any

import typer
from typer.core import TyperArgument, TyperCommand

from gpustack.commands import gpus as gpus_command
from gpustack.commands import init as init_command
from gpustack.commands import lint as lint_commands
from gpustack.commands import node as node_commands
from gpustack.commands import render as render_command
from gpustack.commands import spec_commands
from gpustack.errors import GpustackError

DISTRIBUTION = "kube-gpustack"  # the name gpustack is installed under

app = typer.Typer(
    name="gpustack",
    help="Render a Kubernetes GPU stack from a typed spec, and lint manifests for GPU pitfalls.",
    no_args_is_help=True,
    # --install-completion and --show-completion (bash, zsh, fish, PowerShell).
    add_completion=True,
    # Plain click help: paragraphs rewrapped to the terminal, no rich panels.
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"{DISTRIBUTION} {version()}")
        raise typer.Exit()


def version() -> str:
    """The installed distribution's version (package metadata), else the source tree's."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed(DISTRIBUTION)
    except PackageNotFoundError:
        from gpustack import __version__

        return __version__


@app.callback()
def _root(
    show_version: Annotated[
        bool,
        typer.Option("--version", "-V", callback=_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    """gpustack: render GPU stacks, lint GPU manifests."""


class _Command(TyperCommand):
    """Usage lines that name arguments by their metavar, bracketed only when optional:
    ``validate [OPTIONS] SPEC...`` and ``lint [OPTIONS] [PATH...]`` (typer writes ``{SPEC}``)."""

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if isinstance(param, TyperArgument):
                metavar = param.make_metavar(ctx)  # outside usage: the metavar as written
                pieces.append(metavar if param.required else f"[{metavar}]")
        return pieces


def _command(name: str, function: Callable[..., Any]) -> None:
    """Register ``function`` as ``gpustack name``; the command list shows its docstring's whole
    first paragraph (click would cut it at 45 characters)."""
    summary = inspect.cleandoc(function.__doc__ or "").split("\n\n", 1)[0].replace("\n", " ")
    app.command(name, cls=_Command, short_help=summary)(function)


_command("init", init_command.init)
_command("validate", spec_commands.validate)
_command("render", render_command.render)
_command("lint", lint_commands.lint)
_command("rules", lint_commands.rules)
_command("explain", lint_commands.explain)
_command("gpus", gpus_command.gpus)
_command("schema", spec_commands.schema)
_command("doctor", node_commands.doctor)
_command("discover", node_commands.discover)


def main(argv: list[str] | None = None) -> None:
    """Entry point of the console script: usage errors exit 2 (click), gpustack errors too."""
    try:
        app(args=argv, prog_name="gpustack")
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
