"""Monitoring: kube-prometheus-stack, DCGM Exporter and gpustack's GPU alert rules.

Wiring (one choice, used everywhere): every PrometheusRule and the DCGM Exporter's
ServiceMonitor carry ``release: <monitoring.release>``, which kube-prometheus-stack's default
selectors pick up (its values.yaml). gpustack does not flip ``ruleSelectorNilUsesHelmValues``
(false selects every rule): the label keeps foreign rules out and works with the chart's defaults.

With the GPU Operator, the operator deploys DCGM Exporter: this module adds its
``dcgmExporter`` values (``operator_dcgm_values``) to the gpu-operator release, which the
pipeline merges, so that both paths export the same metrics the same way.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from gpustack.render.component import Contribution, HelmRelease, RenderContext, add_object, chart_release
from gpustack.render.components import (
    alerts,
    dcgm_exporter,
    gpu_operator,
    hami_monitoring,
    monitoring_stack,
    nfd,
    nvswitch_monitoring,
    runtime,
    secrets,
)
from gpustack.render.components.alert_series import NODE_RELABELING
from gpustack.render.requests import requests
from gpustack.shipped import lint_data
from gpustack.spec.models import GpuStack
from gpustack.spec.models.cluster import NodePool
from gpustack.spec.pools import gpu_model

# The Grafana chart mounts provider <name>'s dashboards at this folder (its values.yaml).
DASHBOARD_PROVIDER = "gpu"
# kube-prometheus-stack provisions its Prometheus data source with this uid. The Grafana chart
# replaces a dashboard input ``${DS_PROMETHEUS}`` only when ``datasource`` is given as a list
# of {name, value}; the string form rewrites only single-line "datasource": entries, which
# current dashboards no longer have.
PROMETHEUS_DATASOURCE_UID = "prometheus"
DASHBOARD_INPUT = "DS_PROMETHEUS"
# Dashboards are downloaded from grafana.com over verified TLS: silent, fail on HTTP errors, follow
# redirects (the chart's own example), never -k.
DASHBOARD_CURL_OPTIONS = "-sLf"
FIRST_CURL_OPTIONS_MAJOR = 75
# Pod labels copied onto GPU metrics: enough to attribute usage, bounded cardinality. One list
# for both paths (the dcgm-exporter chart and the GPU Operator's dcgmExporter).
POD_LABEL_ALLOWLIST = [r"^app$", r"^app\.kubernetes\.io/(name|instance)$"]
# The dcgm-exporter chart's own tolerations (values.yaml); pool taints are added to these.
EXPORTER_TOLERATIONS = ({"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"},)
# Delivery order: the chart that brings the monitoring CRDs before the exporter's ServiceMonitor.
MONITORING_WAVE = 0
EXPORTER_WAVE = 1

# The collectors CSV: field, Prometheus type, help (dcgm-exporter's format).
# Rows here: field and help; the type is the one gpustack/lint/data/dcgm-metrics.yaml gives.
_BASE_FIELDS = (
    ("Clocks", (
        ("DCGM_FI_DEV_SM_CLOCK", "SM clock frequency (in MHz)."),
        ("DCGM_FI_DEV_MEM_CLOCK", "Memory clock frequency (in MHz)."),
    )),
    ("Temperature and power", (
        ("DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C)."),
        # Each GPU's own throttling threshold, which GPUHighTemperature compares with (alerts.py).
        (alerts.SLOWDOWN_METRIC, "GPU slowdown temperature (in C)."),
        ("DCGM_FI_DEV_MEMORY_TEMP", "Memory temperature (in C)."),
        ("DCGM_FI_DEV_POWER_USAGE", "Power draw (in W)."),
        ("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "Total energy consumption since boot (in mJ)."),
    )),
    ("Utilisation (time-based: one busy kernel reads 100 %)", (
        ("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %)."),
        ("DCGM_FI_DEV_MEM_COPY_UTIL", "Memory utilization (in %)."),
        ("DCGM_FI_DEV_ENC_UTIL", "Encoder utilization (in %)."),
        ("DCGM_FI_DEV_DEC_UTIL", "Decoder utilization (in %)."),
    )),
    ("Memory", (
        ("DCGM_FI_DEV_FB_FREE", "Frame buffer memory free (in MiB)."),
        ("DCGM_FI_DEV_FB_USED", "Frame buffer memory used (in MiB)."),
        ("DCGM_FI_DEV_FB_RESERVED", "Frame buffer memory reserved (in MiB)."),
    )),
    ("Errors", (
        ("DCGM_FI_DEV_XID_ERRORS", "Value of the last XID error encountered."),
        # Computed by the exporter: XIDs per code (label xid) in the last 5 minutes, repeats included.
        ("DCGM_EXP_XID_ERRORS_COUNT", "Count of XID errors within the XID count window."),
        ("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "Rows remapped for uncorrectable errors."),
        ("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "Rows remapped for correctable errors."),
        ("DCGM_FI_DEV_ROW_REMAP_FAILURE", "Whether remapping of rows has failed."),
    )),
    ("Interconnect", (
        ("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "Total NVLink bandwidth counter for all lanes."),
    )),
    ("Labels", (
        ("DCGM_FI_DRIVER_VERSION", "Driver version."),
    )),
)
# Upstream's five default profiling (DCP) fields, plus SM_ACTIVE and SM_OCCUPANCY (commented
# out upstream): GR_ENGINE_ACTIVE is time-based like GPU_UTIL, how full the SMs are is these two.
_PROFILING_FIELDS = (
    ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "Ratio of time the graphics/compute engine is active."),
    ("DCGM_FI_PROF_SM_ACTIVE", "Ratio of cycles an SM has at least one warp assigned."),
    ("DCGM_FI_PROF_SM_OCCUPANCY", "Ratio of warps resident on an SM to the maximum."),
    ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "Ratio of cycles the tensor (HMMA) pipe is active."),
    ("DCGM_FI_PROF_DRAM_ACTIVE", "Ratio of cycles the device memory interface is active."),
    ("DCGM_FI_PROF_PCIE_TX_BYTES", "Rate of PCIe data transmitted, headers included (in B/s)."),
    ("DCGM_FI_PROF_PCIE_RX_BYTES", "Rate of PCIe data received, headers included (in B/s)."),
)
# Types of the fields dcgm-metrics.yaml does not list: a metric the exporter computes itself, and
# a field it exports as a label.
_TYPES_NOT_IN_LINT_DATA = {"DCGM_EXP_XID_ERRORS_COUNT": "gauge", "DCGM_FI_DRIVER_VERSION": "label"}


def build(chart: Any, ctx: RenderContext) -> Contribution:
    stack = ctx.stack
    monitoring = stack.spec.monitoring
    if not monitoring.enabled:
        return Contribution()
    releases = [kube_prometheus_stack_release(stack)]
    exporter = monitoring.dcgmExporter
    if stack.spec.gpuOperator.enabled:
        # Values added to gpu_operator's release (the pipeline merges releases of one name).
        releases.append(
            chart_release(
                "gpu-operator",
                name=gpu_operator.RELEASE,
                version=stack.spec.gpuOperator.version,
                namespace=gpu_operator.NAMESPACE,
                values={"dcgmExporter": operator_dcgm_values(stack)},
                wave=EXPORTER_WAVE,
            )
        )
    elif (exporter_namespace := monitoring_stack.exporter_namespace(stack)) is not None:
        releases.append(
            chart_release(
                "dcgm-exporter",
                name=dcgm_exporter.CHART_RELEASE,
                version=exporter.version,
                namespace=exporter_namespace,
                values=dcgm_exporter_values(stack),
                wave=EXPORTER_WAVE,
            )
        )
    if monitoring.alerts.enabled:
        rule = alerts.prometheus_rule(
            stack,
            profiling=bool(profiling_pools(stack)),
            job=dcgm_exporter.scrape_job(stack),
        )
        add_object(chart, rule)
    if stack.spec.sharing.hami.enabled:
        add_object(chart, hami_monitoring.service_monitor(stack))
    return Contribution(releases=releases, notes=_notes(stack))


def kube_prometheus_stack_release(stack: GpuStack) -> HelmRelease:
    monitoring = stack.spec.monitoring
    return chart_release(
        "kube-prometheus-stack",
        name=monitoring.release,
        version=monitoring.version,
        namespace=monitoring.namespace,
        values=kube_prometheus_stack_values(stack),
        wave=MONITORING_WAVE,
        pod_security=monitoring_stack.pod_security_level(stack),
    )


def profiling_pools(stack: GpuStack) -> list[NodePool]:
    """Pools whose GPUs get DCGM profiling fields (``profiling: auto`` = those that have them)."""
    if stack.spec.monitoring.dcgmExporter.profiling == "off":
        return []
    return [pool for pool in stack.spec.nodePools if gpu_model(pool).dcgmProfiling]


def collectors_csv(stack: GpuStack) -> str:
    """One collectors CSV for every pool, the reason in a comment."""
    lines = ["# DCGM Exporter collectors rendered by gpustack. Format: DCGM field, Prometheus type, help."]
    for title, fields in _BASE_FIELDS:
        lines += ["", f"# {title}", *(_csv_row(field) for field in fields)]
    lines += ["", "# Profiling (DCP)", *(f"# {line}" for line in _profiling_reason(stack))]
    if profiling_pools(stack):
        lines += [_csv_row(field) for field in _PROFILING_FIELDS]
    lines += ["", "# NVSwitch boards", *(f"# {line}" for line in nvswitch_monitoring.csv_reason(stack))]
    lines += [_csv_row(field) for field in nvswitch_monitoring.fields(stack)]
    return "\n".join(lines) + "\n"


def dcgm_exporter_values(stack: GpuStack) -> dict[str, Any]:
    """Values of NVIDIA's dcgm-exporter chart (https://github.com/NVIDIA/dcgm-exporter)."""
    values: dict[str, Any] = {}
    tag = dcgm_exporter.image_tag(stack)
    if tag is not None:
        # Pinned, so that the DCGM release and the exporter's label names are the ones gpustack
        # wrote the alerts for (dcgm_exporter.py).
        values["image"] = {"repository": dcgm_exporter.IMAGE_REPOSITORY, "tag": tag}
    values |= {
        # Like the device plugin, the exporter reads the GPUs through NVML
        # (runtimeClassName nvidia), and runs on GPU nodes only.
        "runtimeClassName": runtime.RUNTIME_CLASS,
        "affinity": nfd.gpu_node_affinity(),
    }
    tolerations = nfd.gpu_tolerations(stack, chart_defaults=EXPORTER_TOLERATIONS)
    if tolerations:
        values["tolerations"] = tolerations
    values["resources"] = monitoring_stack.exporter_requests()
    values["serviceMonitor"] = _service_monitor(stack)
    attribution = stack.spec.monitoring.dcgmExporter.podAttribution
    values["kubernetes"] = {"enablePodLabels": attribution}
    if attribution:
        values["kubernetes"]["podLabelAllowlistRegex"] = POD_LABEL_ALLOWLIST
    if dcgm_exporter.attributes_dra(stack):
        # Attribute GPUs that NVIDIA's DRA driver allocated, not only device-plugin ones: the chart
        # then sets KUBERNETES_ENABLE_DRA and lets the exporter read ResourceSlices (values.yaml
        # kubernetesDRA, templates/daemonset.yaml and clusterrole.yaml of
        # https://github.com/NVIDIA/dcgm-exporter/tree/main/deployment).
        values["kubernetesDRA"] = {"enabled": True}
    # customMetrics replaces the chart's CSV in full.
    values["customMetrics"] = collectors_csv(stack)
    return values


def operator_dcgm_values(stack: GpuStack) -> dict[str, Any]:
    """The ``dcgmExporter`` values of the gpu-operator chart (v26.7.0 keys)."""
    monitoring = stack.spec.monitoring
    if not monitoring.dcgmExporter.enabled:
        return {"enabled": False}
    values: dict[str, Any] = {"enabled": True}
    tag = dcgm_exporter.image_tag(stack)
    if tag is not None:
        values["version"] = tag
    values["enablePodLabels"] = monitoring.dcgmExporter.podAttribution
    if monitoring.dcgmExporter.podAttribution:
        values["podLabelAllowlistRegex"] = POD_LABEL_ALLOWLIST
    return values | {
        "resources": monitoring_stack.exporter_requests(),
        "serviceMonitor": _service_monitor(stack),
        # The operator takes one CSV under the key dcgm-metrics.csv of this ConfigMap.
        "config": {"name": "gpustack-dcgm-metrics", "create": True, "data": collectors_csv(stack)},
    }


def kube_prometheus_stack_values(stack: GpuStack) -> dict[str, Any]:
    """Values of kube-prometheus-stack: Grafana dashboards (for labs only, anonymous Admin), and
    Alertmanager's receiver, Prometheus's storage and every pod's requests (monitoring_stack)."""
    grafana_spec = stack.spec.monitoring.grafana
    # A Secret the stack generates once (render.components.secrets): without it the chart makes a
    # new random password on every Argo CD sync.
    grafana: dict[str, Any] = {
        "admin": {
            "existingSecret": grafana_spec.adminSecret,
            "userKey": secrets.GRAFANA_USER_KEY,
            "passwordKey": secrets.GRAFANA_PASSWORD_KEY,
        }
    }
    if grafana_spec.dashboards:
        grafana["dashboardProviders"] = {
            "dashboardproviders.yaml": {
                "apiVersion": 1,
                "providers": [
                    {
                        "name": DASHBOARD_PROVIDER,
                        "orgId": 1,
                        "folder": "GPU",
                        "type": "file",
                        "disableDeletion": False,
                        "editable": True,
                        "options": {"path": f"/var/lib/grafana/dashboards/{DASHBOARD_PROVIDER}"},
                    }
                ],
            }
        }
        if _chart_sets_curl_options(stack.spec.monitoring.version):
            # The chart's default is -skf: it would accept any certificate grafana.com's address answers with.
            grafana["defaultCurlOptions"] = DASHBOARD_CURL_OPTIONS
        # The init container that downloads them has no requests either (downloadDashboards.resources).
        grafana["downloadDashboards"] = {"resources": requests("grafana-download")}
        grafana["dashboards"] = {
            DASHBOARD_PROVIDER: {
                f"gnet-{dashboard.gnetId}": {
                    "gnetId": dashboard.gnetId,
                    "revision": dashboard.revision,
                    # Replaces the dashboards' ${DS_PROMETHEUS} input.
                    "datasource": [{"name": DASHBOARD_INPUT, "value": PROMETHEUS_DATASOURCE_UID}],
                }
                for dashboard in grafana_spec.dashboards
            }
        }
    if grafana_spec.anonymousAdmin:
        # A lab setting; off unless the spec asks (GS025 flags it).
        grafana["grafana.ini"] = {"auth.anonymous": {"enabled": True, "org_role": "Admin"}}
    values = monitoring_stack.stack_values(stack)
    values["grafana"] |= grafana
    return values


def _chart_sets_curl_options(version: str) -> bool:
    """Whether the chart's grafana subchart reads ``defaultCurlOptions`` (from kube-prometheus-stack 75;
    earlier releases hard-code ``curl -skf`` in the dashboard download script)."""
    return int(version.split(".")[0]) >= FIRST_CURL_OPTIONS_MAJOR


def _service_monitor(stack: GpuStack) -> dict[str, Any]:
    # The exporter charts' ServiceMonitor has no release label: without it kube-prometheus-stack
    # never scrapes it (GS014). The node label the alerts join on comes from the exporter pod's
    # spec.nodeName, not the exporter's host name (alert_series.NODE).
    return {
        "enabled": True,
        "additionalLabels": {"release": stack.spec.monitoring.release},
        "relabelings": [NODE_RELABELING],
    }


def _csv_row(field: tuple[str, str]) -> str:
    name, help_text = field
    return ", ".join((name, _metric_type(name), help_text))


@cache
def _metric_types() -> dict[str, str]:
    """DCGM field → Prometheus type, as the linter's table records dcgm-exporter's declarations."""
    table = lint_data("dcgm-metrics.yaml")
    return {
        **{name: "gauge" for name in table["gauges"]},
        **{name: "counter" for name in table["counters"]},
        **_TYPES_NOT_IN_LINT_DATA,
    }


def _metric_type(name: str) -> str:
    return _metric_types()[name]


def _profiling_reason(stack: GpuStack) -> list[str]:
    if stack.spec.monitoring.dcgmExporter.profiling == "off":
        return ["Left out: monitoring.dcgmExporter.profiling is off."]
    capable = profiling_pools(stack)
    if not capable:
        return ["Left out: no pool's GPU provides them (GeForce cannot enable DCGM profiling: https://docs.nvidia.com/datacenter/dcgm/latest/user-guide/feature-overview.html#profiling-metrics)."]
    lines = [f"Collected for pools {_describe(capable)}."]
    others = [pool for pool in stack.spec.nodePools if pool not in capable]
    if others:
        lines.append(
            f"Pools {_describe(others)} cannot provide them (GeForce); the exporter skips these fields "
            "there ('Skipping line ... metric not enabled'), so one CSV serves every pool."
        )
    return lines


def _describe(pools: list[NodePool]) -> str:
    return ", ".join(f"{pool.name} ({pool.gpu.model})" for pool in pools)


def _notes(stack: GpuStack) -> list[str]:
    monitoring = stack.spec.monitoring
    notes = [
        f"Prometheus loads gpustack's rules and the DCGM Exporter ServiceMonitor through the label "
        f"`release: {monitoring.release}`, which kube-prometheus-stack's default selectors match; "
        "`ruleSelectorNilUsesHelmValues` stays at its default instead of being flipped."
    ]
    notes += monitoring_stack.notes(stack)
    if monitoring.grafana.dashboards:
        ids = ", ".join(str(d.gnetId) for d in monitoring.grafana.dashboards)
        # The fetch stays (the repository ships no copy of grafana.com's dashboards), made explicit:
        # the chart's download_dashboards.sh runs `set -euf` and curl per dashboard in an init container
        # (templates/_config.tpl of https://github.com/grafana/helm-charts/tree/main/charts/grafana).
        notes.append(
            f"Grafana downloads dashboards {ids} from grafana.com into the folder GPU **at every start of its pod** "
            "(the grafana chart's download init container, `set -e`): behind an egress policy that blocks "
            "https://grafana.com the init container fails and Grafana does not start. There, set "
            "`monitoring.grafana.dashboards: []` and import the dashboards by hand, or allow the egress."
        )
        if not _chart_sets_curl_options(monitoring.version):
            notes.append(
                f"**Grafana downloads them with `curl -k`** (no certificate check): kube-prometheus-stack "
                f"{monitoring.version} hard-codes it; from version {FIRST_CURL_OPTIONS_MAJOR} gpustack sets "
                f"`grafana.defaultCurlOptions: {DASHBOARD_CURL_OPTIONS}`."
            )
    if monitoring.grafana.anonymousAdmin:
        notes.append("**Grafana grants anonymous Admin access** (`grafana.anonymousAdmin`): for labs only.")
    if stack.spec.gpuOperator.enabled:
        notes.append("DCGM Exporter runs as part of the GPU Operator, with gpustack's collectors CSV.")
    return notes
