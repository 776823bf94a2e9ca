"""SARIF 2.1.0 for code scanning: the catalogue as ``tool.driver.rules`` (help text from the
policies), one result per finding with its region, input errors and notes as tool
notifications. Suppressed findings appear (with ``suppressions``) only with
``--show-suppressed``."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import quote

from gpustack import __version__
from gpustack.lint.catalogue import RuleInfo
from gpustack.lint.engine import Report
from gpustack.lint.model import Finding, InputError, Note, Severity
from gpustack.lint.report import ReportOptions

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def render(report: Report, options: ReportOptions) -> str:
    rule_ids = list(report.catalogue)
    results = [_result(finding, rule_ids) for finding in report.findings]
    if options.show_suppressed:
        for item in report.suppressed:
            suppression = {"kind": "inSource", "status": "accepted"}
            if item.suppression.reason:
                suppression["justification"] = item.suppression.reason
            results.append({**_result(item.finding, rule_ids), "suppressions": [suppression]})
    notifications = [_error(error) for error in report.errors] + [_note(note) for note in report.notes]
    run = {
        "tool": {
            "driver": {
                "name": "gpustack",
                "version": __version__,
                "rules": [_rule(info) for info in report.catalogue.values()],
            }
        },
        "invocations": [{"executionSuccessful": True, "toolExecutionNotifications": notifications}],
        "results": results,
    }
    document = {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _rule(info: RuleInfo) -> dict[str, Any]:
    return {
        "id": info.id,
        "name": info.name,
        "shortDescription": {"text": info.summary},
        "fullDescription": {"text": info.rationale},
        "help": {"text": info.remediation, "markdown": info.remediation},
        "defaultConfiguration": {"level": _LEVELS[info.severity]},
        "properties": {"tags": ["kubernetes", "gpu", *(["security"] if info.security else [])]},
    }


def _result(finding: Finding, rule_ids: list[str]) -> dict[str, Any]:
    location: dict[str, Any] = {
        "physicalLocation": {
            "artifactLocation": {"uri": _uri(finding.file)},
            "region": {"startLine": finding.line, "startColumn": finding.column},
        }
    }
    if finding.object and finding.object.kind:
        location["logicalLocations"] = [
            {"name": finding.object.name or "", "fullyQualifiedName": str(finding.object), "kind": "resource"}
        ]
    result: dict[str, Any] = {
        "ruleId": finding.rule,
        "level": _LEVELS[finding.severity],
        "message": {"text": finding.message},
        "locations": [location],
    }
    if finding.rule in rule_ids:
        result["ruleIndex"] = rule_ids.index(finding.rule)
    if finding.fix:
        result["properties"] = {"fix": finding.fix}
    return result


def _error(error: InputError) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": {"uri": _uri(error.file)}}
    if error.line:
        physical["region"] = {"startLine": error.line, **({"startColumn": error.column} if error.column else {})}
    return {"level": "error", "message": {"text": error.message}, "locations": [{"physicalLocation": physical}]}


def _note(note: Note) -> dict[str, Any]:
    notification: dict[str, Any] = {"level": "note", "message": {"text": note.message}}
    if note.file:
        physical: dict[str, Any] = {"artifactLocation": {"uri": _uri(note.file)}}
        if note.line:
            physical["region"] = {"startLine": note.line}
        notification["locations"] = [{"physicalLocation": physical}]
    return notification


def _uri(file: str) -> str:
    """A relative path stays relative (code scanning resolves it against the checkout)."""
    if os.path.isabs(file):
        return Path(file).as_uri()
    return quote(file.replace(os.sep, "/"))
