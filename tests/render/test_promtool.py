"""The real-Prometheus tier: every example's rules through ``promtool check rules`` and ``promtool test rules``.

The series are shaped as a real cluster shapes them (cluster_series: the exporter's labels, MIG
instances, ServiceMonitor target labels with ``honorLabels: false``); alert_cases holds, for
every rendered alert, a case that must fire (at its ``for``, and for ``keep_firing_for`` after)
and one that must stay silent, per sharing mode the example uses. promtool compares the firing
alerts' labels exactly; annotations are reduced to ``runbook_url`` in the test copy of the rules
(their templates are checked by ``promtool check rules`` on the rendered rules as they are).

Debian's ``prometheus`` package brings promtool (``.ci/run`` installs it). Without it the tier
is skipped for a developer and fails under CI=true.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from alert_cases import Builder, Case, Mode, gpu_cases, modes, target_cases
from cluster_series import Scrape
from render_helpers import EXAMPLES, Result

from gpustack.render.components import dcgm_exporter

IDS = [path.stem for path in EXAMPLES]


@pytest.fixture(scope="session")
def promtool() -> str:
    found = shutil.which("promtool")
    if found:
        return found
    reason = "promtool not found: apt-get install -y prometheus (Debian) brings it"
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"the promtool tier cannot run in CI: {reason}", pytrace=False)
    pytest.skip(reason)


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
    return {r["alert"]: r for rule in rule_objects(result) for g in rule["spec"]["groups"] for r in g["rules"] if "alert" in r}


def scrape_of(result: Result, mode: Mode | None) -> Scrape:
    stack = result[0].ctx.stack
    return Scrape(dcgm_exporter.scrape_job(stack), dcgm_exporter.host_label(stack), attributes=mode is None or mode.attributed)


def run_promtool(promtool: str, folder: Path, result: Result, cases: list[Case]) -> None:
    """Write the rules (annotations reduced to runbook_url) and the cases, run promtool test rules."""
    groups = []
    for rule in rule_objects(result):
        for group in rule["spec"]["groups"]:
            rules = [r | {"annotations": {"runbook_url": r["annotations"]["runbook_url"]}} for r in group["rules"]]
            groups.append(group | {"rules": rules})
    (folder / "rules.json").write_text(json.dumps({"groups": groups}), encoding="utf-8")
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
                            "exp_annotations": {"runbook_url": result_alerts_runbook(result, case.alert)},
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


def result_alerts_runbook(result: Result, alert: str) -> str:
    return alerts_of(result)[alert]["annotations"]["runbook_url"]


@pytest.mark.parametrize("example", EXAMPLES, ids=IDS)
def test_every_rendered_rule_file_passes_promtool_check(promtool: str, examples, example: Path, tmp_path: Path):
    rules = rule_objects(examples[example.stem])
    assert rules, "every example renders gpustack's alert rules"
    for rule in rules:
        path = tmp_path / f"{rule['metadata']['name']}.json"
        path.write_text(json.dumps({"groups": rule["spec"]["groups"]}), encoding="utf-8")
        run = subprocess.run([promtool, "check", "rules", str(path)], capture_output=True, text=True)
        assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.parametrize("example", EXAMPLES, ids=IDS)
def test_every_gpu_alert_fires_and_stays_silent_per_sharing_mode(promtool: str, examples, example: Path, tmp_path: Path):
    result = examples[example.stem]
    rules = alerts_of(result)
    found = modes(result[0].ctx.stack)
    assert found
    for mode in found:
        builder = Builder(mode, scrape_of(result, mode), rules)
        cases = gpu_cases(builder)
        folder = tmp_path / mode.name
        folder.mkdir()
        run_promtool(promtool, folder, result, cases)
        covered = {(case.alert, case.kind) for case in cases}
        target = {case.alert for case in target_cases(builder)}
        for name in set(rules) - target:
            assert (name, "silent") in covered, f"{mode.name}: no silent case for {name}"
            if not (name == "GPUIdleButAllocated" and not mode.attributed):
                assert (name, "fires") in covered, f"{mode.name}: no firing case for {name}"


@pytest.mark.parametrize("example", EXAMPLES, ids=IDS)
def test_exporter_and_allocation_alerts_fire_and_stay_silent(promtool: str, examples, example: Path, tmp_path: Path):
    result = examples[example.stem]
    cases = target_cases(Builder(modes(result[0].ctx.stack)[0], scrape_of(result, None), alerts_of(result)))
    assert {case.kind for case in cases} == {"fires", "silent"}
    run_promtool(promtool, tmp_path, result, cases)
