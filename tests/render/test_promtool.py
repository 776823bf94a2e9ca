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
import subprocess
from pathlib import Path

import pytest
from alert_cases import Builder, gpu_cases, modes, target_cases
from promtool_support import alerts_of, rule_objects, run_promtool, scrape_of
from render_helpers import EXAMPLES

IDS = [path.stem for path in EXAMPLES]


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
def test_every_gpu_alert_fires_and_stays_silent_per_sharing_mode(promtool: str, examples, example: Path, tmp_path):
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
