"""Find the input: the paths a run names (files, folders searched recursively, ``-`` for
standard input) to each file's name and bytes, in order, with what could not be read as
``InputError``s. The bytes are read once: the lint cache keys each file by them, and
``load.load_inputs`` parses them.
"""

from __future__ import annotations

import importlib
import os
import stat
import sys
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import BinaryIO

from gpustack.lint.input.filekinds import MANIFEST_SUFFIXES, node_file_reader
from gpustack.lint.input.load import LoadResult
from gpustack.lint.model import InputError
from gpustack.userinput import MAX_FILE_BYTES

STDIN = "-"
STDIN_NAME = "<stdin>"


Input = tuple[str, bytes]  # a file's name and content
Inputs = list[LoadResult | Input]  # in input order: what could not be read, or a file's bytes


def read_inputs(
    paths: Iterable[str], *, excluded: Callable[[str], bool] = lambda path: False, stdin: BinaryIO | None = None
) -> Inputs:
    """The bytes of every file the paths name, in order (parsed by ``load_inputs``): the
    cache key of a file is its content, read once."""
    parts: Inputs = []
    for path in paths:
        if path == STDIN:
            parts.append(read_file(STDIN_NAME, stdin or sys.stdin.buffer))
            continue
        files, errors = _expand(path, excluded)
        if errors:
            parts.append(LoadResult(errors=tuple(errors)))
        for file in files:
            try:
                with open(file, "rb") as stream:
                    part = read_file(file, stream)
            except OSError as exc:
                part = _unreadable(file, exc)
            reader = _node_file_reader(file)
            if isinstance(part, tuple) and reader is not None:
                document = reader.as_document(part[1])
                if document is None and (file != path or not reader.KEEP_NAMED):
                    continue  # nothing a rule reads: not input
                part = (file, document or part[1])
            elif isinstance(part, tuple) and b"{{" in part[1] and (rendered := _chart_template(file, part[1])) is not None:
                part = (file, rendered)
            parts.append(part)
    return parts


def read_file(name: str, stream: BinaryIO) -> LoadResult | Input:
    try:
        return name, stream.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        return _unreadable(name, exc)


def _unreadable(name: str, exc: OSError) -> LoadResult:
    return LoadResult(errors=(InputError(name, f"cannot read: {exc.strerror or exc}"),))


def _expand(path: str, excluded: Callable[[str], bool]) -> tuple[list[str], list[InputError]]:
    if not os.path.isdir(path):
        if not os.path.lexists(path):
            return [], [InputError(path, "no such file or folder")]
        return ([] if excluded(path) else [path]), []
    found: list[str] = []
    errors: list[InputError] = []

    def unreadable(exc: OSError) -> None:
        errors.append(InputError(exc.filename or path, f"cannot read folder: {exc.strerror}"))

    for folder, subfolders, names in os.walk(path, onerror=unreadable):
        # Hidden files and folders (.git, .github, .pre-commit-config.yaml, …) are tools'
        # settings, not manifests; a hidden file named on the command line is still read.
        subfolders[:] = [
            name for name in subfolders if not name.startswith(".") and not excluded(os.path.join(folder, name))
        ]
        for name in names:
            file = os.path.normpath(os.path.join(folder, name))  # "./a.yaml" -> "a.yaml"
            if (name.endswith(MANIFEST_SUFFIXES) or node_file_reader(file)) and not name.startswith(".") and not excluded(file):
                if _special(file):  # reading a named pipe nobody writes to waits forever
                    errors.append(InputError(file, "not a regular file (a named pipe, socket or device): not read"))
                else:
                    found.append(file)
    return sorted(found), sorted(errors, key=lambda error: error.file)


def _node_file_reader(file: str) -> ModuleType | None:
    """The module that reads ``file`` as a node's file, if any (``filekinds``), imported only
    for such a file."""
    name = node_file_reader(file)
    return importlib.import_module(f"gpustack.lint.input.{name}") if name else None


def _chart_template(file: str, data: bytes) -> bytes | None:
    """``charttemplates.render``, imported only for a file with a template action."""
    from gpustack.lint.input import charttemplates

    return charttemplates.render(file, data)


def _special(file: str) -> bool:
    try:
        return not stat.S_ISREG(os.stat(file).st_mode)
    except OSError:  # a dangling link: opening it says why
        return False
