"""HAMi's own per-container GPU metrics: scraped, and alerted on where DCGM Exporter cannot attribute.

dcgm-exporter maps GPUs to pods through the kubelet's pod-resources API and NVIDIA's device IDs;
HAMi's device IDs are its own, so under HAMi the exporter's series carry no pod. HAMi's device
plugin runs a vGPU monitor that reports each container's share (port 9394, Service
``<release>-device-plugin-monitor``, port ``monitorport``:
https://github.com/Project-HAMi/HAMi/blob/master/charts/hami/templates/device-plugin/monitorservice.yaml)
with the 2.10 metric names
(https://github.com/Project-HAMi/website/blob/master/docs/userguide/monitoring/real-time-device-usage.md):
each container's share carries ``namespace``, ``pod``, ``container``, ``vdevice_index`` and
``device_uuid``, the physical GPU's NVML UUID, the exporter's ``UUID``
(https://github.com/Project-HAMi/HAMi/blob/master/cmd/vGPUmonitor/metrics.go).
The chart's own ServiceMonitor needs ``prometheus.enabled`` and has no ``release`` label, so
gpustack renders one. Its ``honorLabels`` stays false: HAMi's ``namespace``/``pod``/``container``
arrive as ``exported_*``, like the DCGM series' workload labels.
"""

from __future__ import annotations

from typing import Any

from gpustack.render.components import hami
from gpustack.render.components.alert_series import NODE_RELABELING, WORKLOAD_NAMESPACE, WORKLOAD_POD, not_servers
from gpustack.spec.labelling import duration_seconds
from gpustack.spec.models import GpuStack
from gpustack.spec.models.monitoring import Alerts

COMPONENT = "hami-device-plugin"
MONITOR_PORT = "monitorport"
LAST_KERNEL = "hami_container_last_kernel_elapsed_seconds"
CONTAINER_MEMORY = "hami_container_device_memory_bytes"
MIB = 1024 * 1024


def service_monitor(stack: GpuStack) -> dict[str, Any]:
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "ServiceMonitor",
        "metadata": {
            "name": f"{hami.RELEASE}-vgpu-monitor",
            "namespace": hami.NAMESPACE,
            "labels": {"release": stack.spec.monitoring.release},
        },
        "spec": {
            "selector": {
                "matchLabels": {"app.kubernetes.io/component": COMPONENT, "app.kubernetes.io/instance": hami.RELEASE}
            },
            # The node, as on the exporter's series (alert_series.NODE): HAMi's container series carry none.
            "endpoints": [{"port": MONITOR_PORT, "path": "/metrics", "relabelings": [NODE_RELABELING]}],
        },
    }


def idle_expr(alerts: Alerts, servers: str) -> str:
    """A container whose last kernel is older than ``idleFor`` while it holds memory on its share."""
    return (
        f"{LAST_KERNEL}{not_servers(servers)} > {int(duration_seconds(alerts.idleFor))} "
        f"and {CONTAINER_MEMORY} > {alerts.idleMemoryMiB * MIB}"
    )



def shares_by_gpu() -> str:
    """The pods holding a HAMi share of each GPU: one series per (UUID, exported_namespace,
    exported_pod), value 0, so that adding it to a per-GPU DCGM value names the pods on the GPU."""
    uuid = f'label_replace({CONTAINER_MEMORY}, "UUID", "$1", "device_uuid", "(.+)")'
    return f"(0 * max by (UUID, {WORKLOAD_NAMESPACE}, {WORKLOAD_POD}) ({uuid}))"
