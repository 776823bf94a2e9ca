"""GitHub Actions workflow commands: one annotation per finding on the file and line, input
errors as error annotations, notes as notices, then the summary line. Info findings only
with ``--show-info`` (a notice on every GPU workload drowns the warnings in a pull request)."""

from __future__ import annotations

from gpustack.lint.model import Finding, Severity
from gpustack.lint.report import ReportOptions, shown_findings, summary
from gpustack.lint.report.model import Report

_LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def render(report: Report, options: ReportOptions) -> str:
    shown = shown_findings(report, options)
    lines = [_finding(finding, options.where(finding)) for finding in shown]
    lines += [
        _command("error", {"file": e.file, "line": e.line, "col": e.column, "title": "unreadable input"}, e.message)
        for e in report.errors
    ]
    if options.show_suppressed:
        lines += [
            _finding(item.finding, options.where(item.finding), suppressed_by=item.suppression.source)
            for item in report.suppressed
        ]
    lines += [_command("notice", {"file": n.file, "line": n.line}, n.message) for n in report.notes]
    lines.append(summary(report, shown, live=options.live))
    return "".join(line + "\n" for line in lines)


def _finding(finding: Finding, where: str | None, *, suppressed_by: str | None = None) -> str:
    """An annotation on the finding's file and line; one on a live cluster's object
    (``where``) has no file and names the object in its title."""
    title = f"{finding.rule} {finding.name}" + (f" ({where})" if where else "")
    message = finding.message + (f"\nFix: {finding.fix}" if finding.fix else "")
    level = _LEVELS[finding.severity]
    if suppressed_by:
        level, title = "notice", f"{title} (suppressed by {suppressed_by})"
    properties: dict[str, object] = {"title": title}
    if not where:
        properties = {"file": finding.file, "line": finding.line, "col": finding.column, **properties}
    return _command(level, properties, message)


def _command(level: str, properties: dict[str, object], message: str) -> str:
    given = ",".join(f"{key}={_escape(str(value), property=True)}" for key, value in properties.items() if value)
    return f"::{level}{' ' + given if given else ''}::{_escape(message.strip())}"


def _escape(text: str, *, property: bool = False) -> str:
    # https://github.com/actions/toolkit/blob/main/packages/core/src/command.ts
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if property else text
