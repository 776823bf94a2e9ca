"""Load a spec file: YAML with positions → ``GpuStack``, every error as ``file:line:col: path: message``."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError
from ruamel.yaml.comments import CommentedMap

from gpustack.errors import GpustackError, Problem, SpecError
from gpustack.spec.models import GpuStack
from gpustack.spec.models.base import PATTERN_MEANINGS
from gpustack import userinput
from gpustack.userinput import Unreadable, decode
from gpustack.yamlio import load_positioned, position

Loc = Sequence[str | int]
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class LoadedSpec:
    """A validated spec with the parsed YAML kept for locating later (cross-field) errors."""

    stack: GpuStack
    file: str
    source: Any

    def problem(self, loc: Loc, message: str) -> Problem:
        return locate(self.source, self.file, loc, message)


def format_loc(loc: Loc) -> str:
    """``("spec", "nodePools", 0, "gpu")`` → ``spec.nodePools[0].gpu``."""
    text = ""
    for step in loc:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else str(step))
    return text


def _source_loc(source: Any, loc: Loc) -> tuple[list[str | int], tuple[int, int] | None]:
    """The steps of ``loc`` that exist in the YAML (pydantic adds union tags that do not)."""
    steps: list[str | int] = []
    node = source
    for index, step in enumerate(loc):
        is_map = isinstance(node, dict)
        if is_map and isinstance(step, str) and step in node:
            node = node[step]
        elif isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node):
            node = node[step]
        elif is_map and index + 1 < len(loc):
            continue  # a discriminated-union tag such as "timeSlicing": not in the document
        else:
            steps.append(step)  # a missing key: report it at its parent
            break
        steps.append(step)
    return steps, position(source, [s for s in steps])


def locate(source: Any, file: str, loc: Loc, message: str) -> Problem:
    # pydantic ends the location of a mapping key's error with "[key]": the key itself is enough.
    steps, where = _source_loc(source, [step for step in loc if step != "[key]"])
    line, column = where if where else (None, None)
    return Problem(message, file, line, column, format_loc(steps))


def _message(error: dict[str, Any]) -> str:
    kind = error["type"]
    if kind == "extra_forbidden":
        return _unknown_key(error["loc"])
    if kind == "missing":
        return "required key is missing"
    if kind == "string_pattern_mismatch" and error["ctx"]["pattern"] in PATTERN_MEANINGS:
        return f"{error['input']!r} {PATTERN_MEANINGS[error['ctx']['pattern']]}"
    message: str = error["msg"]
    return message.removeprefix("Value error, ")


def _unknown_key(loc: Loc) -> str:
    from gpustack.spec.keys import allowed_keys
    from gpustack.suggest import close_matches, did_you_mean

    hint = did_you_mean(close_matches(str(loc[-1]), allowed_keys(loc[:-1])))
    if hint:
        return f"unknown key; {hint} (`gpustack schema` lists the keys)"
    return "unknown key (not part of the GpuStack schema; see `gpustack schema`)"


def read_text(path: str) -> str:
    """A spec file's text (``-``: standard input) within the limits of ``gpustack.userinput``:
    size (``MAX_SPEC_BYTES``) and encoding; ``SpecError`` naming the file otherwise."""
    import sys

    limit = userinput.MAX_SPEC_BYTES
    try:
        if path == "-":
            data = sys.stdin.buffer.read(limit + 1)
        else:
            with open(path, "rb") as stream:
                data = stream.read(limit + 1)
        return decode(data, limit)
    except OSError as exc:
        raise SpecError(Problem(f"cannot read the spec: {exc.strerror or exc}", path)) from None
    except Unreadable as exc:
        raise SpecError(Problem(f"cannot read the spec: {exc.message}", path, exc.line)) from None


def read_source(path: str) -> tuple[str, Any]:
    """Read and parse a spec file; ``-`` reads standard input."""
    text = read_text(path)
    try:
        source = load_positioned(text, path)
    except GpustackError as exc:
        raise SpecError(exc.problems) from None
    if not isinstance(source, CommentedMap):
        raise SpecError(
            Problem("a spec is a YAML mapping with apiVersion: gpustack.io/v1alpha1, kind: GpuStack", path, 1, 1)
        )
    surrogate = _surrogate(source, ())
    if surrogate is not None:
        message = "holds half of a UTF-16 surrogate pair (a \\uD800-\\uDFFF escape): write the character itself"
        raise SpecError(locate(source, path, surrogate, message))
    return path, source


def _surrogate(node: Any, loc: tuple[str | int, ...]) -> Loc | None:
    """Where a key or string holds a lone surrogate (YAML's ``"\\ud83d"``), which no file can
    be written with; ``None`` when nothing does."""
    if isinstance(node, str):
        return loc if _SURROGATE.search(node) else None
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in items:
        if isinstance(key, str) and _SURROGATE.search(key):
            return (*loc, key)
        found = _surrogate(value, (*loc, key))
        if found is not None:
            return found
    return None


def load_spec(path: str, *, render: bool = True) -> LoadedSpec:
    """Parse, validate against the models, resolve GPU models and run the cross-field checks
    (``render=False``: not those of what only a rendered stack needs, for lint's context)."""
    from gpustack.spec.checks import check

    file, source = read_source(path)
    try:
        stack = GpuStack.model_validate(source)
    except ValidationError as exc:
        problems = [locate(source, file, e["loc"], _message(e)) for e in exc.errors()]
        raise SpecError(sorted(set(problems), key=_order)) from None
    loaded = LoadedSpec(stack, file, source)
    problems = [loaded.problem(loc, message) for loc, message in check(stack, render=render)]
    if problems:
        raise SpecError(problems)
    return loaded


def _order(problem: Problem) -> tuple[int, int, str]:
    return (problem.line or 0, problem.column or 0, problem.message)
