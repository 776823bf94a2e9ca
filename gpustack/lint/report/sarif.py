"""SARIF 2.1.0 for code scanning: the catalogue as ``tool.driver.rules`` (help text from the
policies, ``helpUri`` to the rule's page docs/rules/GSNNN.md, and for security rules the
``security-severity`` GitHub ranks alerts by), one result per finding with its region and a
``partialFingerprints`` entry from the finding's baseline identity (rule, object, path inside
it), so code scanning follows an alert when lines move. Input errors and notes are tool
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
from gpustack.lint.model import Finding, InputError, Note, Severity
from gpustack.lint.policy.baseline import FINGERPRINT, identity
from gpustack.lint.report import ReportOptions
from gpustack.lint.report.model import Report
from gpustack.site_pages import page_url

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
# Where the rule docs live is the repository gpustack was installed from, which only the caller
# knows: ``--docs-url`` (the GitHub Action passes the action's own repository and ref) or
# GPUSTACK_DOCS_URL, for forks and mirrors. Without either, rules carry no ``helpUri``.
DOCS_URL_VARIABLE = "GPUSTACK_DOCS_URL"
# GitHub's bands: critical ≥ 9.0, high 7.0–8.9, medium 4.0–6.9, low 0.1–3.9.
SECURITY_SEVERITY = {Severity.ERROR: "8.0", Severity.WARNING: "5.5", Severity.INFO: "2.0"}
# Annotations and comments sit in the file; exemptions and the baseline outside it.
_SUPPRESSION_KINDS = {"annotation": "inSource", "comment": "inSource"}


def render(report: Report, options: ReportOptions) -> str:
    rule_ids = list(report.catalogue)
    base = options.docs_url or os.environ.get(DOCS_URL_VARIABLE)
    results = [_result(finding, rule_ids, options.where(finding)) for finding in report.findings]
    if options.show_suppressed:
        for item in report.suppressed:
            suppression = {"kind": _SUPPRESSION_KINDS.get(item.suppression.source, "external"), "status": "accepted"}
            if item.suppression.reason:
                suppression["justification"] = item.suppression.reason
            results.append({**_result(item.finding, rule_ids, options.where(item.finding)), "suppressions": [suppression]})
    notifications = [_error(error) for error in report.errors] + [_note(note) for note in report.notes]
    run = {
        "tool": {
            "driver": {
                "name": "gpustack",
                "version": __version__,
                "rules": [_rule(info, base) for info in report.catalogue.values()],
            }
        },
        "invocations": [{"executionSuccessful": True, "toolExecutionNotifications": notifications}],
        "results": results,
    }
    document = {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _rule(info: RuleInfo, base: str | None) -> dict[str, Any]:
    properties: dict[str, Any] = {"tags": ["kubernetes", "gpu", *(["security"] if info.security else [])]}
    if info.security:
        properties["security-severity"] = SECURITY_SEVERITY[info.severity]
    rule: dict[str, Any] = {
        "id": info.id,
        "name": info.name,
        "shortDescription": {"text": info.summary},
        "fullDescription": {"text": info.rationale},
        "help": {"text": info.remediation, "markdown": info.remediation},
        "defaultConfiguration": {"level": _LEVELS[info.severity]},
        "properties": properties,
    }
    if base:
        rule["helpUri"] = page_url(info, base)
    return rule


def _result(finding: Finding, rule_ids: list[str], where: str | None) -> dict[str, Any]:
    """The result at its file's region, with the object as a logical location; a live
    cluster's (``where``: ``Kind/namespace/name``) at the logical location only."""
    location: dict[str, Any] = {}
    if not where:
        location["physicalLocation"] = {
            "artifactLocation": {"uri": _uri(finding.file)},
            "region": {"startLine": finding.line, "startColumn": finding.column},
        }
    if finding.object and finding.object.kind:
        location["logicalLocations"] = [
            {"name": finding.object.name or "", "fullyQualifiedName": where or str(finding.object), "kind": "resource"}
        ]
    result: dict[str, Any] = {
        "ruleId": finding.rule,
        "level": _LEVELS[finding.severity],
        "message": {"text": finding.message},
        "locations": [location],
        "partialFingerprints": {FINGERPRINT: identity(finding).fingerprint()},
    }
    if finding.rule in rule_ids:
        result["ruleIndex"] = rule_ids.index(finding.rule)
    properties = {"fix": finding.fix, "root": finding.root}
    if any(properties.values()):
        result["properties"] = {key: value for key, value in properties.items() if value}
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
