"""Autofix: ``gpustack lint --fix`` and ``--diff``.

Rules attach structured edits to their hits (``gpustack.lint.model.Edit``); here they become
text. ``layout`` finds nodes and spans in a file, ``emit`` writes values in the file's style,
``splice`` turns edits into changed spans, ``apply`` runs rounds of splicing and linting and
checks the result, ``output`` writes files or a diff. Imported only for --fix and --diff.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from gpustack.lint.engine import Report
from gpustack.lint.fix.apply import Relint, fix
from gpustack.lint.fix.output import unified_diff, write_file
from gpustack.lint.load import STDIN_NAME, LoadResult


@dataclass(frozen=True)
class Autofixed:
    report: Report  # what to report: after --fix, what remains; for --diff, the input as it is
    output: str | None  # printed instead of the report: the diff, or the fixed standard input
    summary: str  # one line for standard error


def autofix(loaded: LoadResult, report: Report, relint: Relint, *, write: bool) -> Autofixed:
    """Fix the fixable findings of ``report`` (the lint of ``loaded``): write the files
    (``write``; standard input goes to ``output``), or only show the diff."""
    outcome = fix(loaded, report, relint)
    files = f"{len(outcome.fixed)} file{'' if len(outcome.fixed) == 1 else 's'}"
    findings = f"{outcome.count} finding{'' if outcome.count == 1 else 's'}"
    if not write:
        shown = replace(report, errors=report.errors + outcome.failures, notes=report.notes + outcome.notes)
        return Autofixed(shown, unified_diff(outcome.originals, outcome.fixed), f"--fix would fix {findings} in {files}\n")
    unwritten = tuple(
        error
        for file, text in outcome.fixed.items()
        if file != STDIN_NAME and (error := write_file(file, outcome.originals[file], text)) is not None
    )
    remaining = outcome.report
    shown = replace(remaining, errors=remaining.errors + outcome.failures + unwritten, notes=remaining.notes + outcome.notes)
    stdin = outcome.fixed.get(STDIN_NAME, outcome.originals.get(STDIN_NAME))
    return Autofixed(shown, stdin, f"fixed {findings} in {files}\n")
