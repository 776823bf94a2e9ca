"""Autofix: ``gpustack lint --fix`` and ``--diff``.

Rules attach structured edits to their hits (``gpustack.lint.model.Edit``); here they become
text. ``layout`` finds nodes and spans in a file, ``emit`` writes values in the file's style,
``splice`` turns edits into changed spans, ``apply`` runs rounds of splicing and linting and
checks the result, ``output`` writes files or a diff. Imported only for --fix and --diff.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from gpustack.lint.fix.apply import FixOutcome, Relint, fix
from gpustack.lint.fix.output import unified_diff, write_file
from gpustack.lint.input.discover import STDIN_NAME
from gpustack.lint.input.load import LoadResult
from gpustack.lint.model import InputError
from gpustack.lint.report.model import Report


@dataclass(frozen=True)
class Autofixed:
    report: Report  # what to report: after --fix, what remains; for --diff, the input as it is
    output: str | None  # printed instead of the report: the diff, or the fixed standard input
    summary: str  # one line for standard error


def autofix(loaded: LoadResult, report: Report, relint: Relint, *, write: bool) -> Autofixed:
    """Fix the fixable findings of ``report`` (the lint of ``loaded``): write the files
    (``write``; standard input goes to ``output``), or only show the diff."""
    outcome = fix(loaded, report, relint)
    if not write:
        diff = unified_diff(outcome.originals, outcome.fixed)
        return Autofixed(_with(report, outcome), diff, f"--fix would fix {_summary(outcome, outcome.fixed)}\n")
    unwritten = {
        file: error
        for file, text in outcome.fixed.items()
        if file != STDIN_NAME and (error := write_file(file, outcome.originals[file], text)) is not None
    }
    written = [file for file in outcome.fixed if file not in unwritten]
    stdin = outcome.fixed.get(STDIN_NAME, outcome.originals.get(STDIN_NAME))
    report = _with(outcome.report, outcome, tuple(unwritten.values()))
    return Autofixed(report, stdin, f"fixed {_summary(outcome, written)}\n")


def _summary(outcome: FixOutcome, files: Iterable[str]) -> str:
    """``N findings in M files``, of ``files`` only (those written, or that would be)."""
    files = list(files)
    return f"{_count(sum(outcome.counts.get(file, 0) for file in files), 'finding')} in {_count(len(files), 'file')}"


def _with(report: Report, outcome: FixOutcome, unwritten: tuple[InputError, ...] = ()) -> Report:
    """``report`` with the files fixing left alone (errors) and the fixes left out (notes)."""
    return replace(
        report, errors=report.errors + outcome.failures + unwritten, notes=report.notes + outcome.notes
    )


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"
