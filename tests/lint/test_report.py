"""Reporters: exact text and GitHub output, the JSON contract, SARIF valid against 2.1.0."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpustack.lint.report import FORMATS, ReportOptions, reporter
from gpustack.lint.report.model import Report

from lint_support import run

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: prod
  annotations: {gpustack.io/ignore: "GS901: generated; until 2027-01-01"}
spec:
  template:
    spec:
      containers:
        - name: app
          image: app:latest
---
apiVersion: v1
kind: Service
metadata: {name: a}
"""
OTHER = """\
apiVersion: v1
kind: ConfigMap
metadata: {labels: {a: b}}
---
apiVersion: v1
kind: Service
metadata: {name: b}
"""


@pytest.fixture
def report() -> Report:
    return run(("deploy.yaml", DEPLOYMENT), ("other.yaml", OTHER), ("broken.yaml", "a: ["))


def render(report: Report, name: str, **options: bool) -> str:
    return reporter(name).render(report, ReportOptions(**options))


def test_text_lists_info_findings_when_asked(report: Report) -> None:
    assert render(report, "text", show_info=True) == (
        "broken.yaml:2:1: error: invalid YAML: while parsing a flow node: did not find expected node content\n"
        "\n"
        "deploy.yaml:12:11: warning GS900 latest-image: Deployment prod/web: app runs :latest\n"
        "    fix: Pin the image.\n"
        "\n"
        "other.yaml:3:1: error GS901 unnamed-config: ConfigMap <unnamed> has no name\n"
        "    fix: Name it.\n"
        "other.yaml:6:1: info GS902 two-services: Service b: more than one Service in the set\n"
        "    fix: Merge them.\n"
        "\n"
        "2 files, 4 objects: 3 findings (1 error, 1 warning, 1 info), 1 input error\n"
    )


def test_text_hides_info_findings_by_default_and_says_how_many(report: Report) -> None:
    """Info findings are advice nobody acts on in a hook's output: hidden unless asked for,
    counted in the summary with the option that lists them."""
    text = render(report, "text")
    assert "GS902" not in text
    assert text.endswith(
        "2 files, 4 objects: 2 findings (1 error, 1 warning), 1 info hidden (--show-info lists them), 1 input error\n"
    )


def test_json_and_sarif_carry_info_findings_without_asking(report: Report) -> None:
    assert [f["rule"] for f in json.loads(render(report, "json"))["findings"]] == ["GS900", "GS901", "GS902"]
    assert [r["ruleId"] for r in json.loads(render(report, "sarif"))["runs"][0]["results"]] == ["GS900", "GS901", "GS902"]


def test_text_with_suppressed_notes_and_colour() -> None:
    text = DEPLOYMENT.replace("GS901: generated; until 2027-01-01", "GS900: generated; until 2027-01-01")
    report = run(("deploy.yaml", text), partial=True)
    assert render(report, "text", show_suppressed=True) == (
        "suppressed:\n"
        "deploy.yaml:12:11: warning GS900 latest-image: Deployment prod/web: app runs :latest\n"
        "    suppressed by annotation: generated; until 2027-01-01\n"
        "\n"
        "note: GS902 skipped: --partial input is not the whole set these rules need\n"
        "1 file, 2 objects: no findings, 1 suppressed\n"
    )
    coloured = render(run(("deploy.yaml", DEPLOYMENT)), "text", color=True)
    assert "\x1b[1;33mwarning\x1b[0m \x1b[1mGS900\x1b[0m" in coloured
    assert "\x1b" not in render(report, "text")


def test_json_has_the_contract_shape(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # in no git repository: the files are in the top root
    report = run(("deploy.yaml", DEPLOYMENT), ("other.yaml", OTHER), ("broken.yaml", "a: ["))
    document = json.loads(render(report, "json"))
    assert document["findings"][0] == {
        "rule": "GS900",
        "name": "latest-image",
        "severity": "warning",
        "file": "deploy.yaml",
        "line": 12,
        "column": 11,
        "object": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "prod", "name": "web"},
        "message": "Deployment prod/web: app runs :latest",
        "fix": "Pin the image.",
        "fixable": False,
        "root": None,
    }
    assert document["findings"][1]["object"] == {"apiVersion": "v1", "kind": "ConfigMap"}
    assert document["errors"] == [
        {
            "file": "broken.yaml",
            "line": 2,
            "message": "invalid YAML: while parsing a flow node: did not find expected node content",
        }
    ]
    assert document["summary"] == {
        "files": 2, "objects": 4, "findings": 3, "error": 1, "warning": 1, "info": 1, "input_errors": 1, "errors": 1,
        "suppressed": 0,
    }
    assert document["notes"] == []
    assert "suppressed" not in document
    assert json.loads(render(report, "json", show_suppressed=True))["suppressed"] == []


def test_json_lists_suppressed_findings_with_their_reason() -> None:
    text = DEPLOYMENT.replace("GS901: generated", "GS900: generated")
    [item] = json.loads(render(run(("d.yaml", text)), "json", show_suppressed=True))["suppressed"]
    assert (item["rule"], item["suppression"]) == (
        "GS900",
        {"source": "annotation", "reason": "generated", "until": "2027-01-01"},
    )


def test_sarif_is_valid_and_carries_rules_regions_and_notifications(report: Report, shared: Path) -> None:
    import jsonschema

    schema = json.loads((shared / "reference" / "schemas" / "sarif-schema-2.1.0.json").read_text())
    text = DEPLOYMENT.replace("GS901: generated", "GS900: generated")
    suppressed = run(("d.yaml", text), partial=True)
    for each in (report, suppressed):
        document = json.loads(render(each, "sarif", show_suppressed=True))
        jsonschema.Draft4Validator(schema).validate(document)
    run_ = json.loads(render(report, "sarif"))["runs"][0]
    rules = run_["tool"]["driver"]["rules"]
    assert [rule["id"] for rule in rules] == ["GS900", "GS901", "GS902"]
    assert rules[0]["help"]["text"] == "Pin the image."
    assert rules[2]["properties"]["tags"] == ["kubernetes", "gpu", "security"]
    first = run_["results"][0]
    assert (first["ruleId"], first["ruleIndex"], first["level"]) == ("GS900", 0, "warning")
    assert first["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "deploy.yaml"},
        "region": {"startLine": 12, "startColumn": 11},
    }
    assert first["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == "Deployment prod/web"
    assert run_["results"][2]["level"] == "note"
    [error] = run_["invocations"][0]["toolExecutionNotifications"]
    assert error["level"] == "error"
    suppressed_run = json.loads(render(suppressed, "sarif", show_suppressed=True))["runs"][0]
    assert suppressed_run["results"][0]["suppressions"] == [
        {"kind": "inSource", "status": "accepted", "justification": "generated"}
    ]


def test_github_annotations(report: Report) -> None:
    assert render(report, "github", show_info=True).splitlines() == [
        "::warning file=deploy.yaml,line=12,col=11,title=GS900 latest-image::"
        "Deployment prod/web: app runs :latest%0AFix: Pin the image.",
        "::error file=other.yaml,line=3,col=1,title=GS901 unnamed-config::ConfigMap <unnamed> has no name%0AFix: Name it.",
        "::notice file=other.yaml,line=6,col=1,title=GS902 two-services::"
        "Service b: more than one Service in the set%0AFix: Merge them.",
        "::error file=broken.yaml,line=2,col=1,title=unreadable input::"
        "invalid YAML: while parsing a flow node: did not find expected node content",
        "2 files, 4 objects: 3 findings (1 error, 1 warning, 1 info), 1 input error",
    ]
    hidden = render(report, "github").splitlines()
    assert not any("GS902" in line for line in hidden)
    assert hidden[-1] == "2 files, 4 objects: 2 findings (1 error, 1 warning), 1 info hidden (--show-info lists them), 1 input error"


def test_github_escapes_properties_and_messages() -> None:
    from gpustack.lint.report.github import _command

    assert _command("error", {"file": "a,b:c.yaml", "line": 3}, "50%\nmore") == "::error file=a%2Cb%3Ac.yaml,line=3::50%25%0Amore"


def test_every_format_renders_an_empty_report() -> None:
    empty = run()
    for name in FORMATS:
        assert render(empty, name)
