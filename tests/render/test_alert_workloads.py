"""A lost GPU, an idle allocated GPU and a hot GPU: exactly one alert each, naming the workload.

Run through promtool over series shaped as the cluster sends them (cluster_series), for the
examples whose sharing modes make it hard: MIG (seven instances of a GPU, one used by the pod).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from alert_cases import TRAINER, Builder, Case, gpu_cases, modes
from promtool_support import alerts_of, run_promtool, scrape_of

from gpustack.render.components import dcgm_exporter
from gpustack.render.components.alerts import carried_labels

WHOLE_STORY = ("GPULost", "GPUIdleButAllocated", "GPUHighTemperature", "GPUShareIdleButAllocated")


def firing_cases(example: str, examples, mode_name: str) -> list[Case]:
    result = examples[example]
    [mode] = [m for m in modes(result[0].ctx.stack) if m.name == mode_name]
    cases = gpu_cases(Builder(mode, scrape_of(result, mode), alerts_of(result)))
    return [case for case in cases if case.alert in WHOLE_STORY and case.kind == "fires"]


def test_mig_gpu_lost_idle_and_hot_raise_one_alert_each_with_the_pod(promtool: str, examples, tmp_path: Path):
    cases = firing_cases("kubeadm-mig-fleet", examples, "mig")
    assert sorted(case.alert for case in cases) == sorted(WHOLE_STORY[:3])
    for case in cases:
        # Four MIG instances on the GPU, one used by the trainer: one alert, the trainer's.
        [alert] = case.checks[-1].alerts
        assert (alert["exported_namespace"], alert["exported_pod"]) == (TRAINER.namespace, TRAINER.pod), case.alert
    run_promtool(promtool, tmp_path, examples["kubeadm-mig-fleet"], cases)


@pytest.mark.parametrize("example", ["hami-vllm", "dra-hami"])
def test_without_attribution_a_hot_or_lost_gpu_still_raises_one_alert(promtool: str, examples, example, tmp_path):
    """HAMi's device IDs and HAMi's DRA claims are not mapped to pods by the exporter: its alerts carry no
    workload labels; only HAMi's own monitor (device-plugin mode) names the idle container."""
    mode = "hami" if example == "hami-vllm" else "dra"
    cases = firing_cases(example, examples, mode)
    for case in cases:
        [alert] = case.checks[-1].alerts
        assert ("exported_pod" in alert) == (case.alert == "GPUShareIdleButAllocated"), case.alert
    assert {"GPULost", "GPUHighTemperature"} <= {case.alert for case in cases}
    run_promtool(promtool, tmp_path, examples[example], cases)


def test_hami_names_the_idle_container_from_its_own_monitor(examples):
    """DCGM cannot attribute HAMi's shares; HAMi's vGPU monitor can, so the idle alert comes from it."""
    [case] = [c for c in firing_cases("hami-vllm", examples, "hami") if c.alert == "GPUShareIdleButAllocated"]
    [alert] = case.checks[-1].alerts
    assert (alert["exported_namespace"], alert["exported_pod"]) == (TRAINER.namespace, TRAINER.pod)


def test_the_readme_lists_each_alert_its_labels_and_runbook(examples):
    for name, (rendered, tree) in examples.items():
        readme = tree["README.md"]
        host = dcgm_exporter.host_label(rendered.ctx.stack)
        for alert in alerts_of((rendered, tree)).values():
            row = (
                f"| {alert['alert']} | {alert['labels']['severity']} | {carried_labels(alert, host)} | "
                f"[{alert['alert']}]({alert['annotations']['runbook_url']}) |"
            )
            assert row in readme, (name, alert["alert"])
