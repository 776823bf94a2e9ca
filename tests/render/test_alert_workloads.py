"""A lost GPU, an idle allocated GPU and a hot GPU: exactly one alert each, naming the workload.

Run through promtool over series shaped as the cluster sends them (cluster_series), for the
sharing modes that make it hard: MIG (four instances of a GPU, one used by the pod), HAMi (the
exporter cannot name HAMi's pods: its monitor's shares are joined on the GPU's UUID) and DRA with
NVIDIA's driver (the exporter's kubernetesDRA mapping). One pod holds the GPU in each case, so
"one alert" is one per GPU event; two pods on one GPU would give one alert per (GPU, pod).
"""

from __future__ import annotations

from pathlib import Path

from alert_cases import TRAINER, Builder, Case, gpu_cases, modes
from promtool_support import alerts_of, run_promtool, scrape_of
from render_helpers import Result

from gpustack.render.components.alerts import carried_labels

LOST, IDLE, HOT = "GPULost", "GPUIdleButAllocated", "GPUHighTemperature"
# Under HAMi the idle share is found by HAMi's own monitor, which knows each container's kernels.
HAMI_IDLE = "GPUShareIdleButAllocated"


def firing_cases(result: Result, mode_name: str) -> list[Case]:
    [mode] = [m for m in modes(result[0].ctx.stack) if m.name == mode_name]
    cases = gpu_cases(Builder(mode, scrape_of(result, mode), alerts_of(result)))
    return [case for case in cases if case.alert in (LOST, IDLE, HOT, HAMI_IDLE) and case.kind == "fires"]


def assert_one_alert_each_with_the_trainer(
    promtool: str, result: Result, mode: str, story: tuple[str, ...], folder: Path
) -> None:
    cases = firing_cases(result, mode)
    # Every case of the story (a hot GPU twice: near its own slowdown temperature, and above the
    # fallback threshold of a GPU that reports none); each raises exactly one alert.
    assert {case.alert for case in cases} == set(story)
    for case in cases:
        [alert] = case.checks[-1].alerts
        assert (alert["exported_namespace"], alert["exported_pod"]) == (TRAINER.namespace, TRAINER.pod), case.alert
    run_promtool(promtool, folder, result, cases)


def test_mig_gpu_lost_idle_and_hot_raise_one_alert_each_with_the_pod(promtool: str, examples, tmp_path: Path):
    # Four MIG instances on the GPU, one used by the trainer: one alert, the trainer's.
    assert_one_alert_each_with_the_trainer(promtool, examples["kubeadm-mig-fleet"], "mig", (LOST, IDLE, HOT), tmp_path)


def test_hami_gpu_lost_idle_and_hot_raise_one_alert_each_with_the_pod(promtool: str, examples, tmp_path: Path):
    """The exporter's series carry no pod under HAMi; the lost and hot alerts take it from the share
    HAMi's monitor reports on that GPU's UUID, the idle one from the monitor itself."""
    assert_one_alert_each_with_the_trainer(promtool, examples["hami-vllm"], "hami", (LOST, HAMI_IDLE, HOT), tmp_path)


def test_dra_gpu_lost_idle_and_hot_raise_one_alert_each_with_the_pod(promtool: str, render_spec, tmp_path: Path):
    """NVIDIA's DRA driver: the exporter maps its claims to pods (kubernetesDRA), the idle alert included.
    A spec of its own, not an example: the driver's chart is not among the packaged charts the helm
    and cluster tiers deploy every example with."""
    result = render_spec(devicePlugin={"enabled": False}, dra={"enabled": True, "driver": "nvidia"})
    assert_one_alert_each_with_the_trainer(promtool, result, "dra", (LOST, IDLE, HOT), tmp_path)


def test_hami_dra_gpu_alerts_fire_once_without_the_pod(promtool: str, examples, tmp_path: Path):
    """HAMi's DRA driver: the exporter maps only NVIDIA's claims and HAMi's monitor does not run (no
    device plugin), so a hot or lost GPU raises one alert without workload labels, and no idle
    alert can say which pod holds the GPU (the stated limit, rendered README)."""
    result = examples["dra-hami"]
    cases = firing_cases(result, "dra")
    assert {case.alert for case in cases} == {LOST, HOT}
    for case in cases:
        [alert] = case.checks[-1].alerts
        assert "exported_pod" not in alert, case.alert
    run_promtool(promtool, tmp_path, result, cases)


def test_the_readme_lists_each_alert_its_labels_and_runbook(examples):
    for name, (rendered, tree) in examples.items():
        readme = tree["README.md"]
        for alert in alerts_of((rendered, tree)).values():
            row = (
                f"| {alert['alert']} | {alert['labels']['severity']} | {carried_labels(alert)} | "
                f"[{alert['alert']}]({alert['annotations']['runbook_url']}) |"
            )
            assert row in readme, (name, alert["alert"])
