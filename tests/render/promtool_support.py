"""Running promtool on rendered rules: the rule objects of a render, and ``promtool test rules`` over alert_cases."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from alert_cases import Case, Mode
from cluster_series import Scrape
from render_helpers import Result

from gpustack.render.components import dcgm_exporter


def require(found: str | None, program: str) -> str:
    """``found`` (a path); else skips the test for a developer and fails it under CI=true."""
    if found:
        return found
    reason = f"{program} not found: apt-get install -y prometheus (Debian) brings it"
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"the Prometheus tier cannot run in CI: {reason}", pytrace=False)
    pytest.skip(reason)


def find_promtool() -> str:
    return require(shutil.which("promtool"), "promtool")


def rule_objects(result: Result) -> list[dict[str, Any]]:
    """The PrometheusRules of a rendered stack, from its files."""
    _, tree = result
    return [
        doc
        for path, text in sorted(tree.items())
        if path.endswith(".yaml")
        for doc in yaml.safe_load_all(text)
        if isinstance(doc, dict) and doc.get("kind") == "PrometheusRule"
    ]


def alerts_of(result: Result) -> dict[str, dict[str, Any]]:
    groups = [group for rule in rule_objects(result) for group in rule["spec"]["groups"]]
    return {r["alert"]: r for group in groups for r in group["rules"] if "alert" in r}


def scrape_of(result: Result, mode: Mode | None) -> Scrape:
    stack = result[0].ctx.stack
    attributes = mode is None or mode.attributed
    return Scrape(dcgm_exporter.scrape_job(stack), dcgm_exporter.host_label(stack), attributes=attributes)


def run_promtool(promtool: str, folder: Path, result: Result, cases: list[Case]) -> None:
    """Write the rules (annotations reduced to runbook_url) and the cases, run promtool test rules."""
    groups = []
    for rule in rule_objects(result):
        for group in rule["spec"]["groups"]:
            rules = [r | {"annotations": {"runbook_url": r["annotations"]["runbook_url"]}} for r in group["rules"]]
            groups.append(group | {"rules": rules})
    (folder / "rules.json").write_text(json.dumps({"groups": groups}), encoding="utf-8")
    runbooks = {r["alert"]: r["annotations"]["runbook_url"] for group in groups for r in group["rules"] if "alert" in r}
    tests = [
        {
            "name": f"{case.alert} {case.kind}",
            "interval": "1m",
            "input_series": case.series.input_series(),
            "alert_rule_test": [
                {
                    "eval_time": f"{check.minute}m",
                    "alertname": case.alert,
                    "exp_alerts": [
                        {
                            "exp_labels": {k: v for k, v in labels.items() if k != "alertname"},
                            "exp_annotations": {"runbook_url": runbooks[case.alert]},
                        }
                        for labels in check.alerts
                    ],
                }
                for check in case.checks
            ],
        }
        for case in cases
    ]
    (folder / "tests.json").write_text(
        json.dumps({"rule_files": ["rules.json"], "evaluation_interval": "1m", "tests": tests}), encoding="utf-8"
    )
    run = subprocess.run([promtool, "test", "rules", "tests.json"], cwd=folder, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
