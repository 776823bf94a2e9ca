"""CPU and memory requests of every container the stack's charts run, in one table.

Requests only, no limits: a memory limit would OOM-kill Prometheus during WAL replay or a
driver container while it builds its modules, and the scheduler needs only the requests to
keep system pods from being squeezed out of a node by GPU workloads. Sized for a cluster of
tens of GPU nodes; the charts that ship their own requests (NFD's master, worker and gc, the
GPU Operator's operator) keep theirs.
"""

from __future__ import annotations

from typing import Any

REQUESTS = {
    # kube-prometheus-stack. Prometheus's memory grows with its series: about 8 KiB each,
    # dcgm-exporter writes ~40 per GPU.
    "prometheus": {"cpu": "500m", "memory": "2Gi"},
    "alertmanager": {"cpu": "50m", "memory": "128Mi"},
    "operator": {"cpu": "100m", "memory": "128Mi"},
    "config-reloader": {"cpu": "10m", "memory": "32Mi"},
    "grafana": {"cpu": "100m", "memory": "256Mi"},
    # Grafana's k8s-sidecar containers (dashboards, datasources: one value for all of them) and
    # the init container that downloads dashboards.
    "grafana-sidecar": {"cpu": "10m", "memory": "96Mi"},
    "grafana-download": {"cpu": "10m", "memory": "32Mi"},
    "kube-state-metrics": {"cpu": "50m", "memory": "128Mi"},
    "node-exporter": {"cpu": "50m", "memory": "64Mi"},
    # The exporter embeds DCGM's host engine.
    "dcgm-exporter": {"cpu": "100m", "memory": "512Mi"},
    # GPU node agents.
    "device-plugin": {"cpu": "50m", "memory": "64Mi"},
    "feature-discovery": {"cpu": "10m", "memory": "32Mi"},
    "driver": {"cpu": "100m", "memory": "256Mi"},
    "toolkit": {"cpu": "50m", "memory": "64Mi"},
    "dcgm": {"cpu": "100m", "memory": "256Mi"},
    "mig-manager": {"cpu": "10m", "memory": "64Mi"},
    "validator": {"cpu": "10m", "memory": "32Mi"},
    "node-status-exporter": {"cpu": "10m", "memory": "32Mi"},
    "hami-scheduler": {"cpu": "100m", "memory": "128Mi"},
    "hami-monitor": {"cpu": "50m", "memory": "64Mi"},
    # HAMi's DRA kubelet plugin and its init container (kubelet-plugin-prestart.sh, which waits for the driver).
    "hami-dra-plugin": {"cpu": "50m", "memory": "64Mi"},
    "hami-dra-init": {"cpu": "10m", "memory": "32Mi"},
    # gpustack's smoke Jobs (smoke.py): nvidia-smi, seconds of work.
    "gpu-smoke-test": {"cpu": "10m", "memory": "32Mi"},
}


def requests(pod: str) -> dict[str, Any]:
    """A container's ``resources`` value: its requests from the table."""
    return {"requests": dict(REQUESTS[pod])}
