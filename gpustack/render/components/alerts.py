"""gpustack's GPU alert rules: one PrometheusRule for kube-prometheus-stack.

Thresholds come from ``monitoring.alerts``; the label names are those the scraped DCGM series
really carry (alert_series: the workload in ``exported_*``, one series per MIG instance, the
node relabelled from the exporter pod's ``spec.nodeName``). Per GPU, alerts carry ``node``,
``gpu``, ``UUID``, ``modelName`` and, when a pod uses the GPU, ``exported_namespace``/``exported_pod``;
per MIG instance also ``GPU_I_ID``.

Every alert has a ``description`` and a ``runbook_url`` into the "Alerts" section that
``runbook_section`` writes into the stack README.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from gpustack.render.components import dcgm_exporter, hami_monitoring, nvswitch_monitoring, xid
from gpustack.render.components.alert_series import (
    NODE,
    WORKLOAD_CONTAINER,
    WORKLOAD_NAMESPACE,
    WORKLOAD_POD,
    SeriesModel,
    not_servers,
)
from gpustack.spec import runbooks
from gpustack.spec.models import GpuStack
from gpustack.spec.models.monitoring import Alerts

RULE_NAME = "gpustack-gpu-alerts"
# A DCGM field every GPU reports, whatever its MIG mode: a GPU without it is gone.
PRESENCE_METRIC = "DCGM_FI_DEV_GPU_TEMP"
# The temperature at which the GPU slows its clocks, per GPU (dcgm_fields.h field 158:
# https://github.com/NVIDIA/DCGM/blob/master/dcgmlib/dcgm_fields.h); not in dcgm-exporter's
# default CSV, so monitoring.py collects it.
SLOWDOWN_METRIC = "DCGM_FI_DEV_SLOWDOWN_TEMP"
# How far back GPULost looks for a GPU that reported and no longer does.
LOST_LOOKBACK = "1h"
# kube-state-metrics' resource label for extended resources (nvidia.com/gpu → nvidia_com_gpu).
NVIDIA_RESOURCES = 'resource=~"nvidia_com_.+"'
README_SECTION = "Alerts"
# Alerts on one GPU (or MIG instance) series as it is, with all its labels; the others listed
# here carry the labels named; every other alert is folded per GPU (alert_series.per_gpu).
PER_SERIES = frozenset({"GPUMemoryNearFull", "GPUIdleButAllocated", "GPUBusyButUnderfilled"})
TARGET_LABELS = {
    "GPUExporterDown": "`job`, `instance`, `node`, `namespace`/`pod` (the exporter's pod)",
    "GPUExporterAbsent": "`job`",
    "GPUUnallocatable": "`node`, `resource` (kube-state-metrics)",
    "GPUShareIdleButAllocated": "`exported_namespace`/`exported_pod`/`exported_container` (the workload), "
    "`device_uuid`, `vdevice_index` (its HAMi share), `node`, the HAMi monitor's `namespace`/`pod`/`instance`",
}


@dataclass(frozen=True)
class AlertRules:
    """What the rules need besides the thresholds: the series' labels, the exporter's job, the allocation."""

    alerts: Alerts
    series: SeriesModel
    job: str
    runbook_base: str
    dra: bool
    hami: bool

    def make(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return _alert(self.runbook_base, *args, **kwargs)


def prometheus_rule(stack: GpuStack, *, profiling: bool, job: str) -> dict[str, Any]:
    """The rule object; ``profiling``: some pool exports DCGM_FI_PROF_*; ``job``: the exporter's scrape job."""
    monitoring = stack.spec.monitoring
    rules = AlertRules(
        alerts=monitoring.alerts,
        series=SeriesModel(
            profiling=profiling,
            shares=hami_monitoring.shares_by_gpu() if stack.spec.sharing.hami.enabled else "",
        ),
        job=job,
        runbook_base=runbooks.readme_url(stack),
        dra=stack.spec.dra.enabled,
        hami=stack.spec.sharing.hami.enabled,
    )
    groups = [
        {"name": "gpustack.gpu", "rules": health_rules(rules)},
        {"name": "gpustack.gpu.presence", "rules": presence_rules(rules)},
        {"name": "gpustack.gpu.xid", "rules": xid.xid_rules(rules.alerts, rules.series, rules.make)},
    ]
    nvswitch = nvswitch_monitoring.rules(stack, rules.alerts, rules.series, rules.make)
    if nvswitch:
        groups.append({"name": "gpustack.nvswitch", "rules": nvswitch})
    if rules.hami:
        groups.append({"name": "gpustack.hami", "rules": [hami_idle_rule(rules)]})
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": {
            "name": RULE_NAME,
            "namespace": monitoring.namespace,
            "labels": {"release": monitoring.release},
        },
        "spec": {"groups": groups},
    }


def health_rules(rules: AlertRules) -> list[dict[str, Any]]:
    """Temperature, memory, row remapping, idle-but-allocated and, with profiling fields, busy-but-underfilled."""
    alerts, series = rules.alerts, rules.series
    servers = _servers(alerts)
    result = [
        rules.make(
            "GPUHighTemperature",
            temperature_expr(alerts, series),
            alerts.temperatureFor, "warning",
            f"{series.where()}{series.workload()} is at {{{{ $value }}}} °C, near its slowdown temperature",
            f"The GPU has been within {alerts.temperatureMarginCelsius} °C of its own slowdown temperature "
            f"({SLOWDOWN_METRIC}, which each GPU model reports) for {alerts.temperatureFor}; it throttles its clocks "
            f"there. A GPU that reports none is held to {alerts.temperatureCelsius} °C. Check the node's airflow and "
            "fans and the GPU's power draw. One alert per GPU (and workload on it), whatever its MIG instances.",
        ),
        rules.make(
            "GPUMemoryNearFull",
            f"DCGM_FI_DEV_FB_USED{not_servers(servers)} / (DCGM_FI_DEV_FB_USED + DCGM_FI_DEV_FB_FREE) "
            f"> {alerts.memoryUsedRatio}",
            alerts.memoryFor, "warning",
            f"{series.where()}{series.workload()} has {{{{ $value | humanizePercentage }}}} of its memory in use",
            f"More than {alerts.memoryUsedRatio:.0%} of the GPU's (or MIG instance's) memory has been in use for "
            f"{alerts.memoryFor}: the next allocation may fail with CUDA out of memory. {_servers_note(servers)}",
        ),
        rules.make(
            "GPUIdleButAllocated",
            f"{series.utilisation()} < {alerts.idleUtilPercent} "
            f'and {series.slice_join} DCGM_FI_DEV_FB_USED{{{WORKLOAD_POD}!=""}} > {alerts.idleMemoryMiB}'
            + (f" unless {series.slice_join} DCGM_FI_DEV_FB_USED{_only_servers(servers)}" if servers else ""),
            alerts.idleFor, "warning",
            f"{series.where()}{series.workload()} holds memory but does no work",
            f"A pod holds more than {alerts.idleMemoryMiB} MiB on a GPU (or MIG instance) that has been below "
            f"{alerts.idleUtilPercent} % busy for {alerts.idleFor}: the GPU is allocated but idle. The pod is in "
            "the exported_namespace/exported_pod labels (namespace/pod name the exporter): scale it down or give "
            "the GPU back. Utilisation is DCGM_FI_DEV_GPU_UTIL, or DCGM_FI_PROF_GR_ENGINE_ACTIVE on MIG instances, "
            f"which have no GPU_UTIL. {_servers_note(servers, idle=True)}",
        ),
        rules.make(
            "GPURowRemapFailure",
            f"({series.per_gpu(str, 'DCGM_FI_DEV_ROW_REMAP_FAILURE')}) > 0",
            None, "critical",
            f"{series.where()}{series.workload()} could not remap a failing memory row",
            "The GPU ran out of spare memory rows to remap (DCGM_FI_DEV_ROW_REMAP_FAILURE): uncorrectable errors "
            "will recur. Drain the node and replace the GPU "
            "(https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/index.html).",
        ),
        rules.make(
            "GPURowsRemappedUncorrectable",
            f"({series.per_gpu(lambda s: f'increase({s}[1h])', 'DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS')}) > 0",
            None, "warning",
            f"{series.where()}{series.workload()} remapped a memory row after an uncorrectable error",
            "A memory row was remapped after an uncorrectable error within the last hour: the remap takes effect "
            "at the next GPU reset. Drain the node and reset the GPU "
            "(https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/index.html).",
        ),
    ]
    if series.profiling:
        # GPU_UTIL and GR_ENGINE_ACTIVE are both time-based (one kernel on one SM reads 100 %);
        # how many SMs have work is SM_ACTIVE.
        result.append(
            rules.make(
                "GPUBusyButUnderfilled",
                f"{series.utilisation()} > {alerts.underfilledUtilPercent} "
                f"and {series.slice_join} DCGM_FI_PROF_SM_ACTIVE < {alerts.underfilledSmActive}",
                alerts.underfilledFor, "info",
                f"{series.where()}{series.workload()} is busy but most of its SMs are idle: larger batches "
                "would raise throughput",
                f"A kernel ran more than {alerts.underfilledUtilPercent} % of the time while fewer than "
                f"{alerts.underfilledSmActive:.0%} of the SM cycles had a warp resident, for {alerts.underfilledFor}. "
                "The GPU is not full: raise the batch size or concurrency before adding GPUs. "
                "Only GPUs with DCGM profiling metrics (not GeForce) report DCGM_FI_PROF_SM_ACTIVE.",
            )
        )
    return result


def temperature_expr(alerts: Alerts, series: SeriesModel) -> str:
    """A GPU within ``temperatureMarginCelsius`` of its own slowdown temperature, or above
    ``temperatureCelsius`` where it reports none (0 or no series: NVML has no threshold for it)."""
    temperature = f"({series.per_gpu(str, 'DCGM_FI_DEV_GPU_TEMP')})"
    own = f"max by ({NODE}, gpu) ({SLOWDOWN_METRIC} > 0)"
    return (
        f"{temperature} > {series.gpu_join} group_left() ({own} - {alerts.temperatureMarginCelsius}) "
        f"or {temperature} > {alerts.temperatureCelsius} unless {series.gpu_join} {own}"
    )


def hami_idle_rule(rules: AlertRules) -> dict[str, Any]:
    """Idle but allocated from HAMi's vGPU monitor, which knows the container of each share."""
    alerts = rules.alerts
    servers = _servers(alerts)
    return rules.make(
        "GPUShareIdleButAllocated",
        hami_monitoring.idle_expr(alerts, servers),
        None, "warning",
        f"HAMi share of {{{{ $labels.device_uuid }}}} held by {{{{ $labels.{WORKLOAD_NAMESPACE} }}}}/"
        f"{{{{ $labels.{WORKLOAD_POD} }}}} ({{{{ $labels.{WORKLOAD_CONTAINER} }}}}) runs no kernel",
        f"A container has launched no GPU kernel for {alerts.idleFor} while holding more than {alerts.idleMemoryMiB} "
        "MiB of its HAMi share (hami_container_last_kernel_elapsed_seconds, hami_container_device_memory_bytes of "
        "HAMi's vGPU monitor: DCGM Exporter cannot tell HAMi's pods apart). Scale it down or give the share back. "
        f"{_servers_note(servers, idle=True)}",
    )


def presence_rules(rules: AlertRules) -> list[dict[str, Any]]:
    """A GPU gone from a node, an exporter down or never scraped, GPUs the kubelet cannot allocate."""
    alerts, series = rules.alerts, rules.series
    up = f'up{{job="{rules.job}"}}'
    lost = series.per_gpu(
        lambda s: f"(last_over_time({s}[{LOST_LOOKBACK}]) unless {series.gpu_join} {PRESENCE_METRIC}) "
        f"and on(instance) {up} == 1",
        PRESENCE_METRIC,
    )
    result = [
        rules.make(
            "GPULost", lost,
            alerts.gpuGoneFor, "critical",
            f"{series.where()}{series.workload()} stopped reporting while its exporter still runs",
            f"The exporter on the node still answers but has not reported this GPU for {alerts.gpuGoneFor}: a GPU "
            "fell off the bus or the driver lost it. Check `nvidia-smi` and the kernel log (dmesg: Xid 79), then "
            f"drain and restart the node. Seen for {LOST_LOOKBACK} after the GPU last reported, and only while "
            "the same exporter pod runs (GPUExporterDown covers a dead one).",
        ),
        rules.make(
            "GPUExporterDown", f"{up} == 0",
            alerts.gpuGoneFor, "critical",
            "DCGM Exporter {{ $labels.instance }} (pod {{ $labels.namespace }}/{{ $labels.pod }}) cannot be scraped",
            f"Prometheus has failed to scrape DCGM Exporter for {alerts.gpuGoneFor}: no GPU alert can fire for its "
            "node. Check the exporter pod's log and events (NVML or DCGM failing to start).",
        ),
        rules.make(
            "GPUExporterAbsent", f"absent({up})",
            alerts.gpuGoneFor, "critical",
            f"Prometheus scrapes no DCGM Exporter (job {rules.job})",
            f"No target of job {rules.job} has been scraped for {alerts.gpuGoneFor}: the exporter is not deployed, "
            "schedules on no node, or Prometheus does not select its ServiceMonitor (release label).",
        ),
    ]
    if not rules.dra:
        # Under DRA no extended resource is advertised: kube-state-metrics has no series to compare.
        result.append(
            rules.make(
                "GPUUnallocatable",
                f"kube_node_status_allocatable{{{NVIDIA_RESOURCES}}} "
                f"< on(node, resource) kube_node_status_capacity{{{NVIDIA_RESOURCES}}}",
                alerts.gpuGoneFor, "critical",
                "{{ $labels.node }} can allocate only {{ $value }} {{ $labels.resource }}, less than its capacity",
                "The device plugin marked GPUs of the node unhealthy (after a fatal XID, for example), so the "
                f"kubelet allocates fewer than the node has, for {alerts.gpuGoneFor}. Check the device plugin's log "
                "on the node and the XID alerts; drain the node and reset or replace the GPU.",
            )
        )
    return result


def runbook_section(rule: dict[str, Any], stack: GpuStack) -> list[str]:
    """The README section the rules' runbook_url annotations point to: a table, then one heading per alert."""
    lines = [
        f"## {README_SECTION}",
        "",
        f"PrometheusRule `{rule['metadata']['name']}` (namespace `{rule['metadata']['namespace']}`). Each alert's "
        "`runbook_url` points to its heading here. DCGM Exporter's series reach Prometheus through a "
        "ServiceMonitor with `honorLabels: false`: the workload using a GPU is in `exported_namespace`, "
        "`exported_pod`, `exported_container`; `namespace`, `pod`, `container` name the exporter's own pod. "
        f"`{NODE}` is the node the exporter pod runs on (its `spec.nodeName`, relabelled by the ServiceMonitor), "
        f"the name kube-state-metrics uses; the exporter's own `{dcgm_exporter.host_label(stack)}` (often the "
        "short host name) is neither grouped nor joined on.",
        "",
        *_attribution(stack),
        *_relative_warning(rule),
        "",
        "| Alert | Severity | Labels | Runbook |",
        "|---|---|---|---|",
    ]
    every = [alert for group in rule["spec"]["groups"] for alert in group["rules"]]
    for alert in every:
        lines.append(
            f"| {alert['alert']} | {alert['labels']['severity']} | {carried_labels(alert)} | "
            f"[{alert['alert']}]({alert['annotations']['runbook_url']}) |"
        )
    for alert in every:
        timing = [f"for {alert['for']}"] if "for" in alert else []
        if "keep_firing_for" in alert:
            timing.append(f"keeps firing for {alert['keep_firing_for']}")
        lines += [
            "",
            f"### {alert['alert']}",
            "",
            f"Severity {alert['labels']['severity']}{', ' if timing else ''}{', '.join(timing)}. "
            f"Labels: {carried_labels(alert)}.",
            "",
            "```promql",
            alert["expr"],
            "```",
            "",
            alert["annotations"]["description"],
        ]
    return lines


def _attribution(stack: GpuStack) -> list[str]:
    """Where the workload labels come from in this stack's sharing modes, and one alert per what."""
    lines = [
        "Per-GPU alerts fire once per (GPU, pod using it), or once without workload labels when no pod "
        "uses it: a GPU two pods share (time-slicing, HAMi) raises one alert per pod; MIG instances are "
        "folded into their GPU."
    ]
    if stack.spec.sharing.hami.enabled:
        lines.append(
            "Under HAMi the exporter cannot name the pods (HAMi's device IDs are its own): per-GPU alerts take "
            "them from HAMi's vGPU monitor, joined on the GPU's UUID (`hami_container_device_memory_bytes`, "
            "label `device_uuid`); XID alerts carry none. The idle alert is HAMi's own, "
            "GPUShareIdleButAllocated, per container."
        )
    if dcgm_exporter.attributes_dra(stack):
        lines.append(
            "DRA claims of NVIDIA's driver are mapped to pods by the exporter (`kubernetesDRA`), so every "
            "alert, GPUIdleButAllocated included, names the pod."
        )
    elif stack.spec.dra.enabled:
        lines.append(
            "**Limit:** the exporter maps only the claims of NVIDIA's DRA driver (gpu.nvidia.com), through the "
            "dcgm-exporter chart's `kubernetesDRA` (not set on the GPU Operator's exporter), and HAMi's DRA driver "
            "runs no per-container monitor: here no alert names the pod, and GPUIdleButAllocated, which needs "
            "the pod, cannot fire. Find the claim with `kubectl get resourceclaims -A -o wide` on the alert's node."
        )
    return [line for text in lines for line in ("", text)][1:]


def _relative_warning(rule: dict[str, Any]) -> list[str]:
    first = rule["spec"]["groups"][0]["rules"][0]["annotations"]["runbook_url"]
    if first.startswith(("http://", "https://")):
        return []
    return [
        "",
        "**The runbook links are relative** (`README.md#…`): Alertmanager, Slack and PagerDuty cannot open "
        "them. Set `monitoring.alerts.runbookBaseUrl` to this README's URL (its page in your Git host).",
    ]


def carried_labels(alert: dict[str, Any]) -> str:
    """The labels an alert carries besides ``alertname`` and ``severity``, in words."""
    name = alert["alert"]
    if name in TARGET_LABELS:
        return TARGET_LABELS[name]
    gpu = f"`{NODE}`, `gpu`, `UUID`, `modelName`"
    if name in PER_SERIES:
        return (
            f"{gpu}, `GPU_I_ID`/`GPU_I_PROFILE` (MIG instance), `exported_namespace`/`exported_pod`/"
            "`exported_container` (the workload), the exporter's `namespace`/`pod`/`instance`"
        )
    extra = ", `xid`, `xid_action`" if "xid_action" in alert["labels"] else ""
    return f"{gpu}{extra}, `exported_namespace`/`exported_pod` when a pod uses the GPU (one alert per workload)"


def _servers(alerts: Alerts) -> str:
    return "|".join(re.escape(name) for name in alerts.memoryReservingContainers)


def _only_servers(servers: str) -> str:
    return f'{{{WORKLOAD_CONTAINER}=~"{servers}"}}'


def _servers_note(servers: str, *, idle: bool = False) -> str:
    if not servers:
        return "No inference-server containers are left out (monitoring.alerts.memoryReservingContainers is empty)."
    why = (
        "an inference server without traffic is idle by design"
        if idle
        else "they reserve most of the memory at start by design (vLLM: --gpu-memory-utilization)"
    )
    return (
        f"Containers matching {servers} (monitoring.alerts.memoryReservingContainers) are left out: {why}. "
        "They are matched on exported_container, the workload's container; container names the exporter's own."
    )


def _alert(
    runbook_base: str,
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
        "runbook_url": f"{runbook_base}#{name.lower()}",
    }
    return rule
