"""kube-prometheus-stack's own pods: Alertmanager's routes (alert_routing), Prometheus's retention and storage, requests.

Keys are those of kube-prometheus-stack's values.yaml (and of its grafana, kube-state-metrics
and prometheus-node-exporter subcharts):
https://github.com/prometheus-community/helm-charts/blob/main/charts/kube-prometheus-stack/values.yaml
"""

from __future__ import annotations

from typing import Any

from gpustack.render import pod_security
from gpustack.render.components import alert_routing, gpu_operator
from gpustack.render.requests import requests
from gpustack.spec.models import GpuStack
from gpustack.spec.models.monitoring import Monitoring

# retentionSize as a share of Prometheus's volume (retention_size).
RETENTION_SHARE = 80
_MIB_PER_UNIT = {"Mi": 1, "Gi": 1024, "Ti": 1024 * 1024}


def stack_values(stack: GpuStack) -> dict[str, Any]:
    """Values for Alertmanager, Prometheus, the operator and the subcharts' pods."""
    monitoring = stack.spec.monitoring
    prometheus: dict[str, Any] = {
        "retention": monitoring.retention,
        "retentionSize": retention_size(monitoring.prometheusStorage),
        "resources": requests("prometheus"),
        "storageSpec": _volume(monitoring, monitoring.prometheusStorage),
    }
    alertmanager_spec: dict[str, Any] = {
        "resources": requests("alertmanager"),
        "storage": _volume(monitoring, monitoring.alertmanagerStorage),
    }
    alertmanager: dict[str, Any] = {"alertmanagerSpec": alertmanager_spec}
    prometheus_section: dict[str, Any] = {"prometheusSpec": prometheus}
    if monitoring.replicas > 1:
        for section, pod_spec in ((alertmanager, alertmanager_spec), (prometheus_section, prometheus)):
            pod_spec["replicas"] = monitoring.replicas
            pod_spec["podAntiAffinity"] = "soft"  # the chart's: prefer one replica per node
            # The chart's budget keeps its minAvailable: 1 (setting maxUnavailable as well would
            # render both, which the API refuses): a drain evicts one replica at a time.
            section["podDisruptionBudget"] = {"enabled": True}
    routes = alert_routing.config(monitoring)
    if routes is not None:
        alertmanager_spec["secrets"] = alert_routing.secrets(monitoring)
        alertmanager["config"] = routes
    return {
        "alertmanager": alertmanager,
        "prometheus": prometheus_section,
        "prometheusOperator": {
            "resources": requests("operator"),
            "prometheusConfigReloader": {"resources": requests("config-reloader")},
        },
        "grafana": {
            "resources": requests("grafana"),
            # The grafana chart's sidecars carry no requests of their own (its values.yaml:
            # sidecar.resources is empty); the dashboard download's are monitoring.py's.
            "sidecar": {"resources": requests("grafana-sidecar")},
        },
        "kube-state-metrics": {"resources": requests("kube-state-metrics")},
        "prometheus-node-exporter": node_exporter_values(stack),
    }


def exporter_namespace(stack: GpuStack) -> str | None:
    """Where the DCGM exporter runs: the GPU Operator's namespace, or the dcgm-exporter chart's
    release namespace (``monitoring.agentsNamespace``); None where neither runs one."""
    if stack.spec.gpuOperator.enabled:
        return gpu_operator.NAMESPACE
    monitoring = stack.spec.monitoring
    return monitoring.agentsNamespace if monitoring.dcgmExporter.enabled else None


def node_agents_namespace(stack: GpuStack) -> str | None:
    """Where node-exporter runs beside the DCGM exporter, in a namespace that is privileged anyway
    (``exporter_namespace``); None without an exporter, or when it is the monitoring namespace itself
    (node-exporter then stays there, and the namespace stays privileged)."""
    agents = exporter_namespace(stack)
    return agents if agents != stack.spec.monitoring.namespace else None


def pod_security_level(stack: GpuStack) -> str:
    """What kube-prometheus-stack's namespace must admit: baseline once node-exporter (host network,
    PID and root filesystem) runs elsewhere; Grafana, Prometheus, Alertmanager, the operator and
    kube-state-metrics run as non-root without host access."""
    return pod_security.BASELINE if node_agents_namespace(stack) else pod_security.PRIVILEGED


def node_exporter_values(stack: GpuStack) -> dict[str, Any]:
    """The prometheus-node-exporter subchart: its requests and, through its ``namespaceOverride``
    (https://github.com/prometheus-community/helm-charts/blob/main/charts/prometheus-node-exporter/values.yaml),
    the node agents' namespace."""
    values: dict[str, Any] = {"resources": requests("node-exporter")}
    namespace = node_agents_namespace(stack)
    if namespace is not None:
        values["namespaceOverride"] = namespace
    return values


def exporter_requests() -> dict[str, Any]:
    return requests("dcgm-exporter")


def retention_size(volume: str) -> str:
    """Prometheus's ``retentionSize``: 80 % of its volume, in Prometheus's base-2 units (``GB`` is
    GiB). Blocks, WAL and head chunks count towards it; Prometheus's docs advise at most 80-85 % of
    the disk (https://prometheus.io/docs/prometheus/latest/storage/#operational-aspects), so the
    oldest blocks go before the volume fills (a full PVC stops ingestion; an emptyDir over its
    sizeLimit gets the pod evicted)."""
    mib = int(volume[:-2]) * _MIB_PER_UNIT[volume[-2:]] * RETENTION_SHARE // 100
    return f"{mib // 1024}GB" if mib >= 1024 else f"{mib}MB"


def notes(stack: GpuStack) -> list[str]:
    """What the README says about where alerts go and where the data lives."""
    monitoring = stack.spec.monitoring
    size = f"{monitoring.prometheusStorage} (Prometheus, `retentionSize: {retention_size(monitoring.prometheusStorage)}`)"
    if not monitoring.persistence:
        kept = (
            f"**Prometheus and Alertmanager keep their data in emptyDir volumes** (`monitoring.persistence: false`), "
            f"{size}: {monitoring.retention} of samples at most, and the history and Alertmanager's silences are lost "
            "whenever the pods move to another node."
        )
    else:
        storage_class = (
            f"StorageClass `{monitoring.storageClass}`"
            if monitoring.storageClass
            else "the cluster's default StorageClass (none is set in `monitoring.storageClass`: a cluster without a "
            "default leaves the claims Pending and Prometheus unscheduled; `kubectl get storageclass` shows it)"
        )
        kept = (
            f"Prometheus keeps {monitoring.retention} of samples, bounded by size, on PersistentVolumeClaims of "
            f"{storage_class}: {size}, {monitoring.alertmanagerStorage} (Alertmanager)."
        )
    agents = node_agents_namespace(stack)
    if agents is not None:
        placed = (
            f"node-exporter (host network, PID and root filesystem) runs in namespace `{agents}` beside the DCGM "
            f"exporter, both `privileged` for Pod Security; `{monitoring.namespace}` (Prometheus, Alertmanager, "
            "Grafana, the operator, kube-state-metrics) enforces `baseline` and warns at `restricted`."
        )
    else:
        placed = (
            f"**`{monitoring.namespace}` is `privileged` for Pod Security**: node-exporter (host network, PID and root "
            "filesystem) runs there, as no DCGM exporter namespace is rendered to move it to."
        )
    return [*alert_routing.notes(monitoring), kept, placed]


def _volume(monitoring: Monitoring, size: str) -> dict[str, Any]:
    """The ``storageSpec``/``storage`` of a Prometheus or Alertmanager: a claim template, or an
    emptyDir of the same size (prometheus-operator's StorageSpec:
    https://prometheus-operator.dev/docs/api-reference/api/#monitoring.coreos.com/v1.StorageSpec)."""
    if not monitoring.persistence:
        return {"emptyDir": {"sizeLimit": size}}
    spec: dict[str, Any] = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}}
    if monitoring.storageClass:
        spec = {"storageClassName": monitoring.storageClass, **spec}
    return {"volumeClaimTemplate": {"spec": spec}}
