"""Each gpustack alert evaluated over synthetic series: it fires when it should, and resolves.

The rules come from ``alerts.prometheus_rule`` for a spec, exactly as rendered; the series are
what DCGM Exporter and kube-state-metrics would scrape (one sample a minute, see promql_eval).
"""

from __future__ import annotations

from typing import Any

import pytest
from promql_eval import Unsupported, alert_timeline, firing
from render_helpers import spec_document

from gpustack.render.components import alerts, dcgm_exporter
from gpustack.spec.models import GpuStack


def rules(**spec: Any) -> dict[str, dict[str, Any]]:
    stack = GpuStack.model_validate(spec_document(**spec))
    rule = alerts.prometheus_rule(stack, host=dcgm_exporter.host_label(stack), profiling=True)
    return {r["alert"]: r for group in rule["spec"]["groups"] for r in group["rules"]}


def gpu(metric: str, node: str = "n1", index: int = 0, **labels: str) -> str:
    extra = "".join(f',{k}="{v}"' for k, v in labels.items())
    return f'{metric}{{Hostname="{node}",gpu="{index}",UUID="GPU-{node}-{index}"{extra}}}'


def states(timeline, minute: int) -> list[str]:
    return [alert.state for alert in timeline[minute]]


def test_high_temperature_fires_after_its_for_and_resolves():
    rule = rules()["GPUHighTemperature"]
    timeline = alert_timeline(rule, {gpu("DCGM_FI_DEV_GPU_TEMP"): "70x3 90x5 70x3"}, 10)
    assert states(timeline, 2) == [] and states(timeline, 3) == ["pending"]
    assert firing(timeline, 5)[0]["Hostname"] == "n1"  # 2m after 90 °C was first seen
    assert states(timeline, 8) == []  # back at 70 °C: resolved


def test_memory_near_full_skips_gpus_reserved_by_vllm():
    rule = rules()["GPUMemoryNearFull"]
    series = {
        # A training job fills GPU 0 for 7 minutes, then frees it.
        gpu("DCGM_FI_DEV_FB_USED", index=0, container="trainer"): "1000x2 22000x7 1000x3",
        gpu("DCGM_FI_DEV_FB_FREE", index=0, container="trainer"): "22000x2 1000x7 22000x3",
        # vLLM holds 92 % of GPU 1 from start to end, by design (--gpu-memory-utilization).
        gpu("DCGM_FI_DEV_FB_USED", index=1, container="vllm"): "21200x12",
        gpu("DCGM_FI_DEV_FB_FREE", index=1, container="vllm"): "1800x12",
    }
    timeline = alert_timeline(rule, series, 11)
    assert [a["gpu"] for a in firing(timeline, 7)] == ["0"]  # 5m after 22000 MiB of 23000
    assert all(a.labels["gpu"] == "0" for minute in timeline for a in minute)  # vLLM's GPU never
    assert states(timeline, 9) == []  # freed: resolved


def test_memory_near_full_fires_for_vllm_when_not_listed():
    rule = rules(monitoring={"alerts": {"memoryReservingContainers": []}})["GPUMemoryNearFull"]
    series = {
        gpu("DCGM_FI_DEV_FB_USED", container="vllm"): "21200x8",
        gpu("DCGM_FI_DEV_FB_FREE", container="vllm"): "1800x8",
    }
    assert firing(alert_timeline(rule, series, 7), 7)


def test_idle_but_allocated_joins_per_node():
    rule = rules()["GPUIdleButAllocated"]
    series = {
        # Node a: GPU 0 idle with 2 GiB held for 20 minutes, then busy.
        gpu("DCGM_FI_DEV_GPU_UTIL", "a"): "0x20 80x3",
        gpu("DCGM_FI_DEV_FB_USED", "a"): "2048x23",
        # Node b: GPU 0 busy, no memory; never pairs with node a's series.
        gpu("DCGM_FI_DEV_GPU_UTIL", "b"): "100x23",
        gpu("DCGM_FI_DEV_FB_USED", "b"): "0x23",
    }
    timeline = alert_timeline(rule, series, 22)
    assert firing(timeline, 14) == []
    assert [a["Hostname"] for a in firing(timeline, 15)] == ["a"]
    assert states(timeline, 20) == []


def test_busy_but_underfilled_reads_sm_activity_not_the_engine():
    rule = rules()["GPUBusyButUnderfilled"]
    series = {
        # nbody on an L4: GPU_UTIL 100 and GR_ENGINE_ACTIVE 1.0 (both time-based), SMs 30 % active,
        # then a larger batch fills the SMs.
        gpu("DCGM_FI_DEV_GPU_UTIL"): "100x45",
        gpu("DCGM_FI_PROF_GR_ENGINE_ACTIVE"): "1x45",
        gpu("DCGM_FI_PROF_SM_ACTIVE"): "0.3x35 0.9x10",
    }
    timeline = alert_timeline(rule, series, 44)
    assert states(timeline, 29) == ["pending"] and firing(timeline, 30)
    assert states(timeline, 35) == []


def test_busy_but_underfilled_only_where_profiling_exists():
    stack = GpuStack.model_validate(spec_document(nodePools=[{"name": "desk", "gpu": {"model": "RTX-4090"}}]))
    rule = alerts.prometheus_rule(stack, host="Hostname", profiling=False)
    names = {r["alert"] for group in rule["spec"]["groups"] for r in group["rules"]}
    assert "GPUBusyButUnderfilled" not in names


FLEET = [
    {"name": "h100", "count": 2, "gpu": {"model": "H100-80GB-SXM", "count": 8}},
    {"name": "desk", "count": 2, "gpu": {"model": "RTX-4090", "count": 2}},
    {"name": "l4", "gpu": {"model": "L4", "count": 1}},
]


def test_gpu_missing_counts_each_pool_against_its_own_gpu_count():
    rule = rules(nodePools=FLEET)["GPUMissing"]
    series = {}
    for i in range(8):
        # GPU 7 of node h1 falls off the bus at minute 3 and is back (after a reset) at minute 12.
        samples = "40x3 _x9 40x3" if i == 7 else "40x15"
        series[gpu("DCGM_FI_DEV_GPU_TEMP", "h1", i, modelName="NVIDIA H100 80GB HBM3")] = samples
        series[gpu("DCGM_FI_DEV_GPU_TEMP", "h2", i, modelName="NVIDIA H100 80GB HBM3")] = "40x15"
    for i in range(2):
        series[gpu("DCGM_FI_DEV_GPU_TEMP", "d1", i, modelName="NVIDIA GeForce RTX 4090")] = "40x15"
    series[gpu("DCGM_FI_DEV_GPU_TEMP", "s1", 0, modelName="NVIDIA L4")] = "40x15"
    timeline = alert_timeline(rule, series, 14)
    assert states(timeline, 2) == [] and states(timeline, 3) == ["pending"]
    [alert] = timeline[8]
    assert (alert.state, alert.labels["Hostname"], alert.value) == ("firing", "h1", 7)
    assert states(timeline, 12) == []  # all 8 back


def test_gpu_missing_has_no_term_for_single_gpu_pools():
    assert "GPUMissing" not in rules()  # one L4 per node: nothing left to count once it is gone
    assert alerts.missing_expr("Hostname", GpuStack.model_validate(spec_document()).spec.nodePools) is None


def test_gpu_unallocatable_when_the_device_plugin_marks_a_gpu_unhealthy():
    rule = rules()["GPUUnallocatable"]
    ksm = 'job="kube-state-metrics",unit="integer"'
    series = {
        f'kube_node_status_capacity{{node="h1",resource="nvidia_com_gpu",{ksm}}}': "8x15",
        f'kube_node_status_allocatable{{node="h1",resource="nvidia_com_gpu",{ksm}}}': "8x2 7x8 8x5",
        'kube_node_status_capacity{node="h1",resource="cpu",unit="core",job="kube-state-metrics"}': "96x15",
        'kube_node_status_allocatable{node="h1",resource="cpu",unit="core",job="kube-state-metrics"}': "95x15",
        f'kube_node_status_capacity{{node="h2",resource="nvidia_com_gpu",{ksm}}}': "8x15",
        f'kube_node_status_allocatable{{node="h2",resource="nvidia_com_gpu",{ksm}}}': "8x15",
    }
    timeline = alert_timeline(rule, series, 14)
    [alert] = timeline[7]
    assert (alert.state, alert.labels, alert.value) == (
        "firing", {"node": "h1", "resource": "nvidia_com_gpu", "severity": "critical"}, 7
    )
    assert states(timeline, 11) == []


def xid(code: int, node: str = "n1") -> str:
    return gpu("DCGM_EXP_XID_ERRORS_COUNT", node, xid=str(code))


def test_fatal_xid_fires_at_once_and_keeps_firing_after_the_window():
    rule = rules()["GPUXidFallenOffBus"]
    assert rule["keep_firing_for"] == "1h"
    # XID 79 counted in the exporter's 5-minute window, then the window empties.
    timeline = alert_timeline(rule, {xid(79): "0x2 1x5 0x80"}, 86)
    assert states(timeline, 1) == [] and firing(timeline, 2)[0]["xid"] == "79"
    assert firing(timeline, 60)  # 53 minutes after the window emptied
    assert states(timeline, 67) == []  # one hour after: resolved


def test_a_repeated_xid_is_seen_again():
    rule = rules()["GPUXidApplicationFault"]
    assert "keep_firing_for" not in rule  # a warning bucket resolves with the window
    # XID 31 twice, ten minutes apart: the last-XID gauge would not change the second time.
    timeline = alert_timeline(rule, {xid(31): "1x5 0x5 2x5 0x3"}, 17)
    assert firing(timeline, 0) and states(timeline, 6) == []
    assert firing(timeline, 10)[0]["xid"] == "31" and states(timeline, 16) == []


def test_xid_alerts_do_not_fire_on_other_codes():
    rule = rules()["GPUXidResetGpu"]
    assert firing(alert_timeline(rule, {xid(13): "1x5"}, 4), 4) == []
    assert firing(alert_timeline(rule, {xid(119): "1x5"}, 4), 4)[0]["xid"] == "119"


def test_the_operator_exporter_writes_hostname_and_the_rules_follow():
    spec = {
        "gpuOperator": {"enabled": True},
        "nodePools": [{"name": "h", "gpu": {"model": "H100-80GB-SXM", "count": 8}, "driver": {"source": "operator"}}],
    }
    stack = GpuStack.model_validate(spec_document(**spec))
    assert dcgm_exporter.host_label(stack) == "hostname"
    rule = rules(**spec)["GPUIdleButAllocated"]
    node = 'hostname="a",gpu="0"'
    series = {f"DCGM_FI_DEV_GPU_UTIL{{{node}}}": "0x16", f"DCGM_FI_DEV_FB_USED{{{node}}}": "4096x16"}
    assert firing(alert_timeline(rule, series, 15), 15)[0]["hostname"] == "a"


def test_the_evaluator_refuses_what_it_does_not_implement_and_many_to_many_joins():
    with pytest.raises(Unsupported):
        alert_timeline({"expr": "rate(X[5m]) > 0"}, {'X{a="1"}': "1x3"}, 2)
    with pytest.raises(ValueError, match="many-to-one"):
        # Two series per GPU on the left (pod labels) cannot be compared one-to-one on(gpu).
        alert_timeline(
            {"expr": "X > on(gpu) Y"}, {'X{gpu="0",pod="p"}': "1", 'X{gpu="0",pod="q"}': "1", 'Y{gpu="0"}': "0"}, 0
        )
