"""Reporters: one module per output format, each a ``render`` function, chosen by name.

Modules are imported only when their format is asked for, so ``--format text`` never pays
for SARIF. A new format is one module and one line in ``FORMATS``; no rule changes.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # a run that prints its stored output never loads the engine
    from gpustack.lint.model import Finding
    from gpustack.lint.report.model import Report

FORMATS: dict[str, str] = {
    "text": "gpustack.lint.report.text",
    "json": "gpustack.lint.report.json",
    "sarif": "gpustack.lint.report.sarif",
    "github": "gpustack.lint.report.github",
}


@dataclass(frozen=True)
class ReportOptions:
    color: bool = False  # ANSI colour (text; only when printing to a terminal)
    show_suppressed: bool = False  # list suppressed findings too
    docs_url: str | None = None  # SARIF: base URL of the rule docs (None: GPUSTACK_DOCS_URL, else no helpUri)
    show_info: bool = False  # text and GitHub: list info findings too (JSON and SARIF always do)
    live: bool = False  # --cluster: findings are at Kind/namespace/name of a live cluster, in no file

    def where(self, finding: Finding) -> str | None:
        """``Kind/namespace/name`` of a live cluster's finding; None for a file's."""
        if not self.live:
            return None
        return finding.object.slashed() if finding.object else finding.file


class Reporter(Protocol):
    def render(self, report: Report, options: ReportOptions) -> str: ...


def reporter(name: str) -> Reporter:
    """The reporter module of format ``name`` (one of ``FORMATS``)."""
    module: Reporter = importlib.import_module(FORMATS[name])  # type: ignore[assignment]
    return module


def shown_findings(report: Report, options: ReportOptions) -> tuple[Finding, ...]:
    """The findings a reader of text or annotations sees: info ones only when asked for.
    Advice that nobody acts on buries the findings people do act on (a pre-commit hook is read
    line by line); scripts and code scanning (JSON, SARIF) get every finding."""
    from gpustack.lint.model import Severity

    if options.show_info:
        return report.findings
    return tuple(finding for finding in report.findings if finding.severity > Severity.INFO)


def summary(report: Report, shown: tuple[Finding, ...] | None = None, *, live: bool = False) -> str:
    """One line: what was read, what was found, what was hidden, what could not be read.
    ``shown``: the findings listed (``shown_findings``), when not all of them; ``live``: the
    objects are a cluster's running workloads, in no file."""
    shown = report.findings if shown is None else shown
    counts = {str(severity): 0 for severity in sorted({f.severity for f in shown}, reverse=True)}
    for finding in shown:
        counts[str(finding.severity)] += 1
    found = (
        f"{plural(len(shown), 'finding')} ({', '.join(_severity_count(n, s) for s, n in counts.items())})"
        if shown
        else "no findings"
    )
    parts = [found]
    if len(report.findings) > len(shown):
        parts.append(f"{len(report.findings) - len(shown)} info hidden (--show-info lists them)")
    baselined = baseline_count(report)
    if len(report.suppressed) > baselined:
        parts.append(f"{len(report.suppressed) - baselined} suppressed")
    if report.baseline is not None:
        parts.append(f"{baselined} in the baseline")
    if report.errors:
        parts.append(f"{plural(len(report.errors), 'input error')}")
    read = (
        f"{plural(report.objects, 'running workload')} in the cluster"
        if live
        else f"{plural(report.files, 'file')}, {plural(report.objects, 'object')}"
    )
    return f"{read}: {', '.join(parts)}"


def baseline_count(report: Report) -> int:
    """How many findings the baseline hid (the rest of ``report.suppressed`` are suppressions)."""
    return sum(1 for item in report.suppressed if item.suppression.source == "baseline")


def _severity_count(count: int, severity: str) -> str:
    return f"{count} info" if severity == "info" else plural(count, severity)


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
