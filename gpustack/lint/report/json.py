"""JSON for scripts: one object in the shape of the CLI contract (docs/lint/outputs.md, ``--format json``).

``findings``, ``errors`` and ``summary`` are exactly the contract's; ``notes`` and
``summary.suppressed`` are always present, ``summary.baseline`` (file, findings matched,
recorded findings that no longer occur) with a baseline, ``suppressed`` (baseline matches
included) only with ``--show-suppressed``. A finding's ``root`` names the root whose set it
was judged in (``roots.py``): its GitOps entry (the folder of the Flux Kustomizations or Argo CD
Applications that deploy the rest) where it has one, else its folder (a git repository, a
``--set-root``); null for the files in no root. ``summary.errors`` counts input errors (the ``errors`` list), not findings of severity error:
``summary.error``, ``summary.warning`` and ``summary.info`` count findings by severity,
``summary.input_errors`` says the same as ``summary.errors`` under a name that cannot be misread.
"""

from __future__ import annotations

import json
from typing import Any

from gpustack.lint.model import Finding, Severity
from gpustack.lint.policy.suppress import Suppressed
from gpustack.lint.report import ReportOptions, baseline_count
from gpustack.lint.report.model import Report


def render(report: Report, options: ReportOptions) -> str:
    document: dict[str, Any] = {
        "findings": [finding_json(finding, options.where(finding)) for finding in report.findings],
        "errors": [{"file": e.file, "line": e.line, "message": e.message} for e in report.errors],
        "notes": [{"file": n.file, "line": n.line, "message": n.message} for n in report.notes],
        "summary": {
            "files": report.files,
            "objects": report.objects,
            "findings": len(report.findings),
            **{str(severity): 0 for severity in sorted(Severity, reverse=True)},
            "input_errors": len(report.errors),
            "errors": len(report.errors),
            "suppressed": len(report.suppressed) - baseline_count(report),
        },
    }
    for finding in report.findings:
        document["summary"][str(finding.severity)] += 1
    if report.baseline is not None:
        document["summary"]["baseline"] = {
            "file": report.baseline.file,
            "matched": report.baseline.matched,
            "stale": report.baseline.stale,
        }
    if options.show_suppressed:
        document["suppressed"] = [_suppressed_json(item, options.where(item.finding)) for item in report.suppressed]
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def finding_json(finding: Finding, where: str | None = None) -> dict[str, Any]:
    """The finding; at ``where`` (a live cluster's ``Kind/namespace/name``, in ``file``) it
    has no line or column."""
    return {
        "rule": finding.rule,
        "name": finding.name,
        "severity": str(finding.severity),
        "file": where or finding.file,
        "line": None if where else finding.line,
        "column": None if where else finding.column,
        "object": finding.object.as_json() if finding.object else {},
        "message": finding.message,
        "fix": finding.fix,
        "fixable": finding.fixable,
        "root": finding.root,
    }


def _suppressed_json(item: Suppressed, where: str | None) -> dict[str, Any]:
    suppression = item.suppression
    return {
        **finding_json(item.finding, where),
        "suppression": {
            "source": suppression.source,
            "reason": suppression.reason,
            "until": suppression.until.isoformat() if suppression.until else None,
        },
    }
