"""gpustack's GPU alert rules: one PrometheusRule for kube-prometheus-stack.

Thresholds come from ``monitoring.alerts``. Joins of DCGM series match on the node and the GPU
(``on(<host>, gpu)``): ``gpu="0"`` exists on every node, so ``on(gpu)`` alone pairs series of
different machines. ``<host>`` is the node label of the pinned exporter, ``Hostname`` up to
4.8.2 and ``hostname`` after (dcgm_exporter.host_label).

XID alerts follow NVIDIA's XID catalogue: one alert per resolution bucket, critical for fatal
codes, warning for application-level ones. They read the exporter's
``DCGM_EXP_XID_ERRORS_COUNT`` (XIDs per code in the last 5 minutes, code in label ``xid``)
rather than the last-XID gauge, so a repeat of the same code is seen too; fatal buckets keep
firing for ``xidKeepFiringFor`` after the window, since the GPU stays broken.

Every alert has a ``description`` and a ``runbook_url`` into the "Alerts" section that
``runbook_section`` writes into the stack README.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from gpustack.spec.models import GpuStack
from gpustack.spec.models.cluster import NodePool
from gpustack.spec.models.components import Alerts
from gpustack.spec.pools import gpu_model

RULE_NAME = "gpustack-gpu-alerts"
XID_COUNT_METRIC = "DCGM_EXP_XID_ERRORS_COUNT"
# dcgm-exporter's --xid-count-window-size default (5 minutes), the window of the count above.
XID_WINDOW = "5 minutes"
# A DCGM field every GPU reports, whatever its MIG mode: its series count is the GPU count.
PRESENCE_METRIC = "DCGM_FI_DEV_GPU_TEMP"
# kube-state-metrics' resource label for extended resources (nvidia.com/gpu → nvidia_com_gpu).
NVIDIA_RESOURCES = 'resource=~"nvidia_com_.+"'
README_SECTION = "Alerts"


@dataclass(frozen=True)
class XidBucket:
    """An XID catalogue resolution bucket and the alert gpustack makes of it."""

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


@dataclass(frozen=True)
class AlertRules:
    """What the rules need besides the thresholds: the exporter's node label and the pools."""

    alerts: Alerts
    host: str
    pools: tuple[NodePool, ...]
    profiling: bool
    runbook_base: str

    @property
    def join(self) -> str:
        return f"on({self.host}, gpu)"

    def where(self) -> str:
        return f"GPU {{{{ $labels.gpu }}}} on {{{{ $labels.{self.host} }}}}"


def prometheus_rule(stack: GpuStack, *, host: str, profiling: bool) -> dict[str, Any]:
    """The rule object; ``host``: the exporter's node label; ``profiling``: some pool exports DCGM_FI_PROF_*."""
    monitoring = stack.spec.monitoring
    rules = AlertRules(
        alerts=monitoring.alerts,
        host=host,
        pools=tuple(stack.spec.nodePools),
        profiling=profiling,
        runbook_base=monitoring.alerts.runbookBaseUrl or "README.md",
    )
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
                {"name": "gpustack.gpu", "rules": health_rules(rules)},
                {"name": "gpustack.gpu.presence", "rules": presence_rules(rules)},
                {"name": "gpustack.gpu.xid", "rules": xid_rules(rules)},
            ]
        },
    }


def health_rules(rules: AlertRules) -> list[dict[str, Any]]:
    """Temperature, memory, idle-but-allocated and, with profiling fields, busy-but-underfilled."""
    alerts = rules.alerts
    result = [
        _alert(
            rules, "GPUHighTemperature",
            f"DCGM_FI_DEV_GPU_TEMP > {alerts.temperatureCelsius}",
            alerts.temperatureFor, "warning",
            f"{rules.where()} is at {{{{ $value }}}} °C",
            f"The GPU has been above {alerts.temperatureCelsius} °C for {alerts.temperatureFor}; it throttles its "
            "clocks next. Check the node's airflow and fans and the GPU's power draw.",
        ),
        _alert(
            rules, "GPUMemoryNearFull",
            _memory_expr(rules),
            alerts.memoryFor, "warning",
            f"{rules.where()} has {{{{ $value | humanizePercentage }}}} of its memory in use",
            f"More than {alerts.memoryUsedRatio:.0%} of the GPU's memory has been in use for {alerts.memoryFor}: "
            "the next allocation may fail with CUDA out of memory. GPUs held by containers that reserve "
            "their memory at start by design ("
            + (", ".join(alerts.memoryReservingContainers) or "none listed")
            + ", monitoring.alerts.memoryReservingContainers) are left out.",
        ),
        _alert(
            rules, "GPUIdleButAllocated",
            f"DCGM_FI_DEV_GPU_UTIL < {alerts.idleUtilPercent} "
            f"and {rules.join} DCGM_FI_DEV_FB_USED > {alerts.idleMemoryMiB}",
            alerts.idleFor, "warning",
            f"{rules.where()} holds memory but does no work",
            f"A process holds more than {alerts.idleMemoryMiB} MiB on a GPU that has been below "
            f"{alerts.idleUtilPercent} % busy for {alerts.idleFor}: the GPU is allocated but idle. Find the pod "
            "with the namespace/pod labels and scale it down or give the GPU back.",
        ),
    ]
    if rules.profiling:
        # GPU_UTIL and GR_ENGINE_ACTIVE are both time-based (one kernel on one SM reads 100 %);
        # how many SMs have work is SM_ACTIVE.
        result.append(
            _alert(
                rules, "GPUBusyButUnderfilled",
                f"DCGM_FI_DEV_GPU_UTIL > {alerts.underfilledUtilPercent} "
                f"and {rules.join} DCGM_FI_PROF_SM_ACTIVE < {alerts.underfilledSmActive}",
                alerts.underfilledFor, "info",
                f"{rules.where()} is busy but most of its SMs are idle: larger batches would raise throughput",
                f"A kernel ran more than {alerts.underfilledUtilPercent} % of the time while fewer than "
                f"{alerts.underfilledSmActive:.0%} of the SM cycles had a warp resident, for {alerts.underfilledFor}. "
                "The GPU is not full: raise the batch size or concurrency before adding GPUs. "
                "Only GPUs with DCGM profiling metrics (not GeForce) report DCGM_FI_PROF_SM_ACTIVE.",
            )
        )
    return result


def presence_rules(rules: AlertRules) -> list[dict[str, Any]]:
    """A GPU gone from a node: fewer exporter series than the pool's GPUs, or fewer allocatable than capacity."""
    alerts = rules.alerts
    result = []
    expr = missing_expr(rules.host, rules.pools)
    if expr is not None:
        expected = ", ".join(f"{pool.name}: {pool.gpu.count}" for pool in rules.pools)
        result.append(
            _alert(
                rules, "GPUMissing", expr,
                alerts.gpuGoneFor, "critical",
                f"{{{{ $labels.{rules.host} }}}} reports {{{{ $value }}}} GPUs, fewer than its pool's nodes have",
                f"DCGM Exporter sees fewer GPUs on the node than its pool declares ({expected}) for "
                f"{alerts.gpuGoneFor}: a GPU fell off the bus or the driver lost it. Check `nvidia-smi` and the "
                "kernel log (dmesg: Xid 79), then drain and restart the node.",
            )
        )
    result.append(
        _alert(
            rules, "GPUUnallocatable",
            f"kube_node_status_allocatable{{{NVIDIA_RESOURCES}}} "
            f"< on(node, resource) kube_node_status_capacity{{{NVIDIA_RESOURCES}}}",
            alerts.gpuGoneFor, "critical",
            "{{ $labels.node }} can allocate only {{ $value }} {{ $labels.resource }}, less than its capacity",
            "The device plugin marked GPUs of the node unhealthy (after a fatal XID, for example), so the kubelet "
            f"allocates fewer than the node has, for {alerts.gpuGoneFor}. Check the device plugin's log on the node "
            "and the XID alerts; drain the node and reset or replace the GPU.",
        )
    )
    return result


def missing_expr(host: str, pools: Iterable[NodePool]) -> str | None:
    """Nodes whose distinct GPUs (by index) are fewer than their pool's ``gpu.count``.

    Pools are told apart by the exporter's ``modelName`` (NVML's name, which GFD's product label
    spells with dashes for spaces); pools of one model with different counts use the smallest.
    A node of one GPU that loses it has no series left to count: such pools get no term (their
    loss shows in GPUUnallocatable and the XID alerts). None when no pool has a term.
    """
    counts: dict[str, int] = {}
    for pool in pools:
        product = gpu_model(pool).product
        counts[product] = min(counts.get(product, pool.gpu.count), pool.gpu.count)
    terms = [
        f'count by ({host}) (count by ({host}, gpu) ({PRESENCE_METRIC}{{modelName=~"{_model_regex(product)}"}})) '
        f"< {count}"
        for product, count in sorted(counts.items())
        if count > 1
    ]
    if not terms:
        return None
    return terms[0] if len(terms) == 1 else " or ".join(f"({term})" for term in terms)


def xid_rules(rules: AlertRules) -> list[dict[str, Any]]:
    """One alert per XID bucket; IGNORE codes and unknown codes only where the spec lists them."""
    listed = set(rules.alerts.criticalXids)
    known = {code for bucket in XID_BUCKETS for code in bucket.codes}
    buckets = [*XID_BUCKETS, replace(_UNLISTED, codes=tuple(sorted(listed - known)))]
    result = []
    for bucket in buckets:
        codes = tuple(c for c in bucket.codes if bucket.action not in ("IGNORE", "UNKNOWN") or c in listed)
        if codes:
            result.append(_xid_alert(rules, bucket, codes))
    return result


def xid_expr(codes: tuple[int, ...]) -> str:
    """An XID of one of ``codes`` within the exporter's count window."""
    return f'{XID_COUNT_METRIC}{{xid=~"{"|".join(str(code) for code in codes)}"}} > 0'


def _xid_alert(rules: AlertRules, bucket: XidBucket, codes: tuple[int, ...]) -> dict[str, Any]:
    keep = rules.alerts.xidKeepFiringFor if bucket.fatal else None
    lasting = f" The alert keeps firing {keep} after the last occurrence." if keep else ""
    rule = _alert(
        rules, bucket.alert,
        xid_expr(codes),
        None, "critical" if bucket.fatal else "warning",
        f"XID {{{{ $labels.xid }}}} on {rules.where()} ({{{{ $value }}}} in {XID_WINDOW}): {bucket.summary}",
        f"The driver reported XID {', '.join(map(str, codes))} (NVIDIA's XID catalogue: {bucket.action}) within "
        f"the last {XID_WINDOW}: {bucket.summary}.{lasting}",
        keep_firing_for=keep,
    )
    rule["labels"]["xid_action"] = bucket.action
    return rule


def runbook_section(rule: dict[str, Any]) -> list[str]:
    """The README section the rules' runbook_url annotations point to: one heading per alert."""
    lines = [
        f"## {README_SECTION}",
        "",
        f"PrometheusRule `{rule['metadata']['name']}` (namespace `{rule['metadata']['namespace']}`). Each alert's "
        "`runbook_url` points to its heading here.",
    ]
    for group in rule["spec"]["groups"]:
        for alert in group["rules"]:
            timing = [f"for {alert['for']}"] if "for" in alert else []
            if "keep_firing_for" in alert:
                timing.append(f"keeps firing for {alert['keep_firing_for']}")
            lines += [
                "",
                f"### {alert['alert']}",
                "",
                f"Severity {alert['labels']['severity']}{', ' if timing else ''}{', '.join(timing)}.",
                "",
                "```promql",
                alert["expr"],
                "```",
                "",
                alert["annotations"]["description"],
            ]
    return lines


def _memory_expr(rules: AlertRules) -> str:
    alerts = rules.alerts
    expr = f"DCGM_FI_DEV_FB_USED / (DCGM_FI_DEV_FB_USED + DCGM_FI_DEV_FB_FREE) > {alerts.memoryUsedRatio}"
    if alerts.memoryReservingContainers:
        containers = "|".join(re.escape(name) for name in alerts.memoryReservingContainers)
        expr += f' unless {rules.join} DCGM_FI_DEV_FB_USED{{container=~"{containers}"}}'
    return expr


def _model_regex(product: str) -> str:
    """GFD's product label as a regex on NVML's name: each dash may have been a space."""
    return "[ -]".join(re.escape(part) for part in product.split("-"))


def _alert(
    rules: AlertRules,
    name: str,
    expr: str,
    for_: str | None,
    severity: str,
    summary: str,
    description: str,
    *,
    keep_firing_for: str | None = None,
) -> dict[str, Any]:
    rule: dict[str, Any] = {"alert": name, "expr": expr}
    if for_:
        rule["for"] = for_
    if keep_firing_for:
        rule["keep_firing_for"] = keep_firing_for
    rule["labels"] = {"severity": severity}
    rule["annotations"] = {
        "summary": summary,
        "description": description,
        "runbook_url": f"{rules.runbook_base}#{name.lower()}",
    }
    return rule
