"""gpustack's GPU alert rules: one PrometheusRule for kube-prometheus-stack.

Thresholds come from ``monitoring.alerts`` (seed 001 §7's values are the defaults). Joins of
DCGM series match on the node and the GPU (``on(Hostname, gpu)``): ``gpu="0"`` exists on every
node, so ``on(gpu)`` alone pairs series of different machines (DESIGN §10 GS017).

XID alerts follow NVIDIA's XID catalogue (upstream-facts §9): one alert per resolution bucket,
critical for fatal codes, warning for application-level ones. ``DCGM_FI_DEV_XID_ERRORS`` holds
only the last code, so ``> 0`` would never resolve: the rules fire when the gauge changes to a
code of the bucket (DESIGN §10 "Monitoring").
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from gpustack.spec.models import Alerts, GpuStack

RULE_NAME = "gpustack-gpu-alerts"
XID_METRIC = "DCGM_FI_DEV_XID_ERRORS"
# How long an XID alert fires after the gauge changed; the same code twice in a row is one change.
XID_WINDOW = "5m"
# Join labels for DCGM series of one GPU: the exporter's node name plus the GPU index.
GPU_JOIN = "on(Hostname, gpu)"


@dataclass(frozen=True)
class XidBucket:
    """An XID catalogue resolution bucket (upstream-facts §9) and the alert gpustack makes of it."""

    action: str
    fatal: bool
    codes: tuple[int, ...]
    alert: str
    summary: str


XID_BUCKETS = (
    XidBucket("RESTART_BM", True, (79,), "GPUXidFallenOffBus", "GPU has fallen off the bus: restart the node"),
    XidBucket(
        "RESET_GPU", True, (46, 62, 64, 95, 109, 119, 120, 136, 140, 143, 155, 156, 158),
        "GPUXidResetGpu", "fatal GPU error: drain the node and reset the GPU",
    ),
    XidBucket(
        "WORKFLOW_XID_48", True, (48,), "GPUXidDoubleBitEcc",
        "uncorrectable ECC error (page retirement): drain the node, reset the GPU, check retired pages",
    ),
    XidBucket("WORKFLOW_NVLINK_ERR", True, (74,), "GPUXidNvlink", "NVLink error: drain the node, check the links"),
    XidBucket(
        "WORKFLOW_NVLINK5_ERR", True, tuple(range(144, 151)), "GPUXidNvlink5",
        "NVLink5 error: drain the node, check the links",
    ),
    XidBucket(
        "RESTART_APP", False, (31, 94), "GPUXidApplicationFault",
        "application-level GPU fault (MMU fault, contained error): restart the application",
    ),
    XidBucket(
        "WORKFLOW_XID_45", False, (45,), "GPUXidPreemptiveCleanup", "preemptive cleanup after a killed context"
    ),
    # NVIDIA files these under IGNORE; they alert only when listed in monitoring.alerts.criticalXids.
    XidBucket(
        "IGNORE", False, (43, 63, 92), "GPUXidInformational", "informational XID, listed as critical in the spec"
    ),
)
_UNLISTED = XidBucket(
    "UNKNOWN", False, (), "GPUXidListed", "XID listed as critical in the spec, not in gpustack's catalogue"
)


def prometheus_rule(stack: GpuStack, *, profiling: bool) -> dict[str, Any]:
    """The rule object; ``profiling``: some pool exports DCGM_FI_PROF_* fields."""
    monitoring = stack.spec.monitoring
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": {
            "name": RULE_NAME,
            "namespace": monitoring.namespace,
            "labels": {"release": monitoring.release},
        },
        "spec": {
            "groups": [
                {"name": "gpustack.gpu", "rules": health_rules(monitoring.alerts, profiling=profiling)},
                {"name": "gpustack.gpu.xid", "rules": xid_rules(monitoring.alerts.criticalXids)},
            ]
        },
    }


def health_rules(alerts: Alerts, *, profiling: bool) -> list[dict[str, Any]]:
    """Temperature, memory, idle-but-allocated and, with profiling fields, busy-but-underfilled."""
    rules = [
        _alert(
            "GPUHighTemperature",
            f"DCGM_FI_DEV_GPU_TEMP > {alerts.temperatureCelsius}",
            alerts.temperatureFor,
            "warning",
            "GPU {{ $labels.gpu }} on {{ $labels.Hostname }} is at {{ $value }} °C",
        ),
        _alert(
            "GPUMemoryNearFull",
            f"DCGM_FI_DEV_FB_USED / (DCGM_FI_DEV_FB_USED + DCGM_FI_DEV_FB_FREE) > {alerts.memoryUsedRatio}",
            alerts.memoryFor,
            "warning",
            "GPU {{ $labels.gpu }} on {{ $labels.Hostname }} has {{ $value | humanizePercentage }} "
            "of its memory in use",
        ),
        # seed 001 §7: a pod holding memory on an idle GPU; utilisation alone cannot tell.
        _alert(
            "GPUIdleButAllocated",
            f"DCGM_FI_DEV_GPU_UTIL < {alerts.idleUtilPercent} "
            f"and {GPU_JOIN} DCGM_FI_DEV_FB_USED > {alerts.idleMemoryMiB}",
            alerts.idleFor,
            "warning",
            "GPU {{ $labels.gpu }} on {{ $labels.Hostname }} holds memory but does no work",
        ),
    ]
    if profiling:
        # GPU_UTIL is time-based (one kernel reads 100 %); GR_ENGINE_ACTIVE shows how full the
        # engine is (seed 001 §7, §11: 78 % busy with 2 % tensor use).
        rules.append(
            _alert(
                "GPUBusyButUnderfilled",
                f"DCGM_FI_DEV_GPU_UTIL > {alerts.underfilledUtilPercent} "
                f"and {GPU_JOIN} DCGM_FI_PROF_GR_ENGINE_ACTIVE < {alerts.underfilledEngineActive}",
                alerts.underfilledFor,
                "info",
                "GPU {{ $labels.gpu }} on {{ $labels.Hostname }} is busy but its engines are underfilled: "
                "larger batches would raise throughput",
            )
        )
    return rules


def xid_rules(critical_xids: list[int]) -> list[dict[str, Any]]:
    """One alert per XID bucket; IGNORE codes and unknown codes only where the spec lists them."""
    listed = set(critical_xids)
    known = {code for bucket in XID_BUCKETS for code in bucket.codes}
    buckets = [*XID_BUCKETS, replace(_UNLISTED, codes=tuple(sorted(listed - known)))]
    rules = []
    for bucket in buckets:
        codes = tuple(c for c in bucket.codes if bucket.action not in ("IGNORE", "UNKNOWN") or c in listed)
        if codes:
            rules.append(_xid_alert(bucket, codes))
    return rules


def xid_expr(codes: tuple[int, ...]) -> str:
    """The last XID is one of ``codes`` and the gauge changed within the window.

    The code comparison comes first so that ``$value`` is the XID code.
    """
    is_code = " or ".join(f"{XID_METRIC} == {code}" for code in codes)
    return f"({is_code}) and changes({XID_METRIC}[{XID_WINDOW}]) > 0"


def _xid_alert(bucket: XidBucket, codes: tuple[int, ...]) -> dict[str, Any]:
    rule = _alert(
        bucket.alert,
        xid_expr(codes),
        None,
        "critical" if bucket.fatal else "warning",
        "XID {{ $value }} on GPU {{ $labels.gpu }} of {{ $labels.Hostname }}: " + bucket.summary,
    )
    rule["labels"]["xid_action"] = bucket.action
    return rule


def _alert(name: str, expr: str, for_: str | None, severity: str, summary: str) -> dict[str, Any]:
    rule: dict[str, Any] = {"alert": name, "expr": expr}
    if for_:
        rule["for"] = for_
    rule["labels"] = {"severity": severity}
    rule["annotations"] = {"summary": summary}
    return rule

