"""Text for people: grouped per file, ``file:line:col: severity RULE name: message``, a fix
hint below, notes and a one-line summary at the end. Info findings only when asked for
(``--show-info``; the summary counts those hidden). Colour only when asked (a terminal)."""

from __future__ import annotations

from functools import lru_cache
from itertools import groupby

from gpustack.lint.model import Finding, InputError, Severity
from gpustack.lint.policy.suppress import Suppressed
from gpustack.lint.report import ReportOptions, shown_findings, summary
from gpustack.lint.report.model import Report
from gpustack.terminal import CYAN, RED, YELLOW, Painter, painter

_COLOURS = {Severity.ERROR: RED, Severity.WARNING: YELLOW, Severity.INFO: CYAN}


def render(report: Report, options: ReportOptions) -> str:
    paint = painter(options.color)
    shown = shown_findings(report, options)
    entries: list[tuple[str, int, str]] = [(f.file, 1, _finding(f, paint, options.where(f))) for f in shown]
    entries += [(e.file, 0, _error(e, paint)) for e in report.errors]
    entries.sort(key=lambda entry: (entry[0], entry[1]))  # stable: findings stay in their order
    blocks = ["".join(entry[2] for entry in group) for _, group in groupby(entries, key=lambda e: e[0])]
    if options.show_suppressed and report.suppressed:
        blocks.append(
            paint("1", "suppressed:") + "\n"
            + "".join(_suppressed(item, paint, options.where(item.finding)) for item in report.suppressed)
        )
    tail = [f"{paint('1', 'note:')} {_where(note.file, note.line)}{note.message}\n" for note in report.notes]
    tail.append(summary(report, shown, live=options.live) + "\n")
    return "\n".join(blocks + ["".join(tail)])


def _head(finding: Finding, paint: Painter, where: str | None) -> str:
    """The finding's first line, at ``where`` (a live cluster's object) or its file:line:col."""
    where = where or f"{finding.file}:{finding.line}:{finding.column}"
    return (
        f"{paint('1', where + ':')} "
        f"{_severity(finding.severity, paint)} "
        f"{paint('1', finding.rule)} {finding.name}: {_indent(finding.message)}\n"
    )


@lru_cache(maxsize=8)
def _severity(severity: Severity, paint: Painter) -> str:
    """The severity as printed (one of six strings, for thousands of findings)."""
    return paint(_COLOURS[severity], str(severity))


def _finding(finding: Finding, paint: Painter, where: str | None) -> str:
    return _head(finding, paint, where) + (f"    {paint('2', 'fix:')} {_indent(finding.fix)}\n" if finding.fix else "")


def _error(error: InputError, paint: Painter) -> str:
    where = ":".join(str(part) for part in (error.file, error.line, error.column) if part is not None)
    return f"{paint('1', where + ':')} {paint(_COLOURS[Severity.ERROR], 'error')}: {_indent(error.message)}\n"


def _suppressed(item: Suppressed, paint: Painter, where: str | None) -> str:
    suppression = item.suppression
    until = suppression.until and f"until {suppression.until.isoformat()}"
    why = "; ".join(part for part in (suppression.reason, until) if part)
    return _head(item.finding, paint, where) + f"    {paint('2', 'suppressed by ' + suppression.source)}" + (
        f": {why}\n" if why else "\n"
    )


def _where(file: str | None, line: int | None) -> str:
    return f"{file}:{line}: " if file and line else f"{file}: " if file else ""


def _indent(text: str) -> str:
    return text.strip().replace("\n", "\n    ")

