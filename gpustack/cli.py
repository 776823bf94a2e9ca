"""The ``gpustack`` command line: parse, call one command function, map errors to exit codes.

Commands live in ``gpustack.commands``; this module only wires them and owns the single
error handler: a ``GpustackError`` prints its problems to stderr and exits 2, and nothing
else reaches the user as a traceback.
"""

from __future__ import annotations

import gc

# Importing typer and the commands creates some 20,000 objects that live as long as the
# process, and no garbage: the cyclic collector would run some 30 times meanwhile and find
# nothing (about 10 ms of a one-file lint). It stays off until they are imported, and they are
# then left out of every later collection (gc.freeze): re-enabled without that, its next
# collection would walk them all at once.
_collecting = gc.isenabled()
gc.disable()

import errno
import inspect
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from typing import Annotated, Any, NoReturn

import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup
from typer.main import get_command_from_info
from typer.models import CommandInfo

from gpustack.commands import docs as docs_command
from gpustack.commands import gpus as gpus_command
from gpustack.commands import init as init_command
from gpustack.commands import lint as lint_commands
from gpustack.commands import node as node_commands
from gpustack.commands import render as render_command
from gpustack.commands import spec_commands
from gpustack.errors import GpustackError

gc.freeze()
if _collecting:  # as the importer had it
    gc.enable()

DISTRIBUTION = "kube-gpustack"  # the name gpustack is installed under

# Command name -> its function, in the order ``gpustack --help`` lists them.
_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "init": init_command.init,
    "validate": spec_commands.validate,
    "render": render_command.render,
    "lint": lint_commands.lint,
    "rules": lint_commands.rules,
    "explain": lint_commands.explain,
    "gpus": gpus_command.gpus,
    "schema": spec_commands.schema,
    "docs": docs_command.docs,
    "doctor": node_commands.doctor,
    "discover": node_commands.discover,
}


class _Commands(Mapping[str, Any]):
    """The subcommands, each built into a click command the first time it is looked up.

    Typer would build every registered command on each run, reading each function's signature
    and type hints: about 0.03 s, a tenth of a one-file lint. Running one command builds only
    that one; help, completion and "did you mean" build or list them all.
    """

    def __init__(self, group: TyperGroup) -> None:
        self._group = group
        self._built: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        if name not in self._built:
            function = _FUNCTIONS[name]
            # The command list shows the docstring's whole first paragraph (click would cut it
            # at 45 characters).
            summary = inspect.cleandoc(function.__doc__ or "").split("\n\n", 1)[0].replace("\n", " ")
            info = CommandInfo(name, cls=_Command, short_help=summary, callback=function)
            self._built[name] = get_command_from_info(
                info, pretty_exceptions_short=app.pretty_exceptions_short, rich_markup_mode=self._group.rich_markup_mode
            )
        return self._built[name]

    def __iter__(self) -> Iterator[str]:
        return iter(_FUNCTIONS)

    def __len__(self) -> int:
        return len(_FUNCTIONS)


class _Group(TyperGroup):
    """typer's group with the commands of ``_FUNCTIONS``, built when used (``_Commands``)."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.commands = _Commands(self)  # type: ignore[assignment]  # read only: nothing adds commands


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
    cls=_Group,
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
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
            _internal_error(exc)
        print(f"error: cannot write: {exc.strerror}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as exc:  # noqa: BLE001 - the last line of defence: never a traceback
        _internal_error(exc)


def _internal_error(exc: Exception) -> NoReturn:
    print(
        f"error: internal error: {type(exc).__name__}: {exc}\n"
        "This is a bug in gpustack; set GPUSTACK_DEBUG=1 to see the traceback.",
        file=sys.stderr,
    )
    if os.environ.get("GPUSTACK_DEBUG"):
        raise exc
    sys.exit(2)


def run() -> None:
    """The console script and ``python -m gpustack``: ``main``, ended at once after a lint
    (``gpustack.shutdown``)."""
    from gpustack import shutdown

    shutdown.run(main)
