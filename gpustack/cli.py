"""The ``gpustack`` command line: parse, call one command function, map errors to exit codes.

Commands live in ``gpustack.commands``; this module only wires them and owns the single
error handler: a ``GpustackError`` prints its problems to stderr and exits 2, and nothing
else reaches the user as a traceback.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path as _PathType
from types import UnionType as _UnionType

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
        call = _plain_lint_call(sys.argv[1:] if argv is None else argv)
        if call is None:
            app(args=argv)
        else:
            _lint_directly(call, argv)
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


# --- `gpustack lint` without typer's coercion ---------------------------------------------
#
# typer (0.2x) coerces every option value through a pydantic TypeAdapter: importing pydantic
# and building the adapters is a third of a one-file lint (70 ms of 220 ms), the cost a
# pre-commit hook pays on every commit. Plain command lines (known options, valid values)
# call the command function directly, with the values typer would pass; anything else
# (--help, a bad value, an unknown option, `--`) goes through typer as before, so errors and
# help read exactly as they always did. tests/test_cli_fast.py holds the two paths equal.


def _plain_lint_call(args: list[str]) -> dict[str, object] | None:
    """The keyword arguments for ``commands.lint.lint``, or None when typer must parse."""
    if not args or args[0] != "lint":
        return None
    options = _lint_options()
    if options is None:
        return None
    call: dict[str, object] = {}
    paths: list[str] = []
    rest = iter(args[1:])
    for arg in rest:
        if arg == "-" or not arg.startswith("-"):
            paths.append(arg)
            continue
        name, eq, inline = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        option = options.get(name)
        if option is None:
            return None
        parameter, kind, choices = option
        if kind == "flag":
            if eq:
                return None
            call[parameter] = True
            continue
        value = inline if eq else next(rest, None)
        if value is None or (not eq and value.startswith("-")) or (choices and value not in choices):
            return None
        converted: object = _PathType(value) if kind in ("path", "paths") else value
        if kind in ("strs", "paths"):
            call.setdefault(parameter, [])
            call[parameter].append(converted)  # type: ignore[attr-defined]
        else:
            call[parameter] = converted
    if paths:
        call["paths"] = paths
    return call


def _lint_directly(call: dict[str, object], argv: list[str] | None) -> None:
    from typer._click.exceptions import ClickException

    try:
        lint_commands.lint(**call)  # type: ignore[arg-type]
    except ClickException:  # a usage error the command itself raises: typer words it
        app(args=argv)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    sys.exit(0)


def _lint_options() -> dict[str, tuple[str, str, tuple[str, ...]]] | None:
    """``--option`` -> (parameter, kind, choices) from the command's own declarations, or
    None when one of them is of a shape this parser does not know (typer then parses)."""
    import inspect
    import typing

    from typer.models import ArgumentInfo, OptionInfo

    options: dict[str, tuple[str, str, tuple[str, ...]]] = {}
    plain = vars(typer.Option("--option"))
    hints = typing.get_type_hints(lint_commands.lint, include_extras=True)
    for name in inspect.signature(lint_commands.lint).parameters:
        annotation, *extras = typing.get_args(hints[name])
        info = extras[0] if extras else None
        if isinstance(info, ArgumentInfo) and name == "paths":
            continue
        if not isinstance(info, OptionInfo) or not _plain(info, plain):
            return None
        decls = ((info.default,) if isinstance(info.default, str) else ()) + tuple(info.param_decls or ())
        kind = _kind(annotation)
        if kind is None or not decls or any("/" in decl or not decl.startswith("-") for decl in decls):
            return None
        choices = _choices(annotation)
        for decl in decls:
            options[decl] = (name, kind, choices)
    return options


_PRESENTATION = frozenset({"default", "param_decls", "help", "metavar", "show_default", "hidden", "rich_help_panel"})


def _plain(info: object, plain: dict[str, object]) -> bool:
    """Nothing but names, help and a default: no envvar, callback, parser, prompt, count,
    bounds, path checks, … (those go through typer)."""
    return all(value == plain.get(key) for key, value in vars(info).items() if key not in _PRESENTATION)


def _kind(annotation: object) -> str | None:
    import typing

    if annotation is bool:
        return "flag"
    args = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
    inner = args[0] if len(args) == 1 and typing.get_origin(annotation) in (typing.Union, _UnionType) else annotation
    if typing.get_origin(inner) is typing.Literal or inner is str:
        return "str"
    if inner is _PathType:
        return "path"
    if typing.get_origin(inner) is list:
        [item] = typing.get_args(inner)
        return {str: "strs", _PathType: "paths"}.get(item)
    return None


def _choices(annotation: object) -> tuple[str, ...]:
    import typing

    for arg in (annotation, *typing.get_args(annotation)):
        if typing.get_origin(arg) is typing.Literal:
            return tuple(str(choice) for choice in typing.get_args(arg))
    return ()
