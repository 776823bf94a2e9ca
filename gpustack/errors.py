"""Errors that reach the user as a message and exit code 2, never as a traceback."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One located problem: ``file:line:col: path: message``."""

    message: str
    file: str | None = None
    line: int | None = None
    column: int | None = None
    path: str | None = None

    @property
    def where(self) -> str:
        """``file:line:col``, as much of it as is known."""
        return ":".join(str(p) for p in (self.file, self.line, self.column) if p is not None)

    @property
    def what(self) -> str:
        """``path: message``."""
        return ": ".join(p for p in (self.path, self.message) if p)

    def __str__(self) -> str:
        return ": ".join(p for p in (self.where, self.what) if p)


class GpustackError(Exception):
    """A usage or input error: the CLI prints every problem and exits with ``exit_code``."""

    exit_code = 2

    def __init__(self, problems: str | Problem | list[Problem]) -> None:
        if isinstance(problems, str):
            problems = [Problem(problems)]
        elif isinstance(problems, Problem):
            problems = [problems]
        self.problems: list[Problem] = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


class SpecError(GpustackError):
    """The spec file cannot be read, does not match the schema, or fails a cross-field check."""
