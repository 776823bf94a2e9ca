"""DCGM Exporter series labelled as a real cluster labels them, as Python data for promtool tests.

Where each label comes from:

- The exporter writes ``gpu``, ``UUID``, ``device``, ``modelName``, ``pci_bus_id``, the node
  (``Hostname`` up to 4.8.2, ``hostname`` after: gpustack/render/components/dcgm_exporter.py)
  and ``DCGM_FI_DRIVER_VERSION`` (a field exported as a label), on every field of
  https://github.com/NVIDIA/dcgm-exporter/blob/main/etc/default-counters.csv; a pod using the
  GPU adds ``namespace``, ``pod``, ``container`` (README, "Kubernetes":
  https://github.com/NVIDIA/dcgm-exporter/blob/main/README.md).
- On a MIG-enabled GPU every device field comes once per MIG instance, with ``GPU_I_PROFILE``
  and ``GPU_I_ID``, and ``DCGM_FI_DEV_GPU_UTIL`` is not reported for MIG instances:
  https://github.com/NVIDIA/dcgm-exporter/issues/50, /issues/105, /issues/216, /issues/430.
- A time-sliced GPU shared by several pods gives one copy of each series per pod (the
  pod-resources API lists the GPU's replicas under each pod).
- Scraped through the chart's or the GPU Operator's ServiceMonitor (``honorLabels: false``,
  https://github.com/NVIDIA/dcgm-exporter/blob/main/deployment/values.yaml), prometheus-operator
  adds the target's ``namespace``, ``pod``, ``container``, ``service``, ``endpoint``, ``job``
  and ``instance`` (https://prometheus-operator.dev/docs/api-reference/api/#monitoring.coreos.com/v1.Endpoint),
  and Prometheus renames the exporter's clashing labels to ``exported_*``
  (``honor_labels``, https://prometheus.io/docs/prometheus/latest/configuration/configuration/#scrape_config).
- With HAMi's device plugin or a DRA driver other than NVIDIA's the exporter cannot map the
  GPU to a pod (its pod mapper knows NVIDIA's device IDs and DRA driver gpu.nvidia.com only:
  gpustack/render/components/dcgm_exporter.py), so those series carry no workload labels.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# Exporter-side values; any consistent values do: what matters is which labels exist.
DRIVER = "595.45.04"
EXPORTER_NAMESPACE = "monitoring"
EXPORTER_CONTAINER = "exporter"


def node_name(host: str) -> str:
    """The Kubernetes node name of a host: its FQDN, as on AWS (``ip-…ec2.internal``), while the
    exporter's Hostname is the short name the node's kernel reports."""
    return f"{host}.ec2.internal"


@dataclass(frozen=True)
class Workload:
    """The pod and container using a GPU: what the exporter writes as namespace/pod/container."""

    namespace: str
    pod: str
    container: str  # vllm for an inference server, which the alerts leave out


@dataclass(frozen=True)
class Slice:
    """A GPU, or one MIG instance of it (``instance_id`` set), and the pods using it."""

    node: str
    index: int  # the exporter's gpu label
    model: str  # NVML's name, the exporter's modelName label
    instance_id: str | None = None  # GPU_I_ID
    profile: str | None = None  # GPU_I_PROFILE, e.g. 1g.10gb
    pods: tuple[Workload, ...] = ()


@dataclass(frozen=True)
class Scrape:
    """The exporter's target: its job and the node label the pinned image writes."""

    job: str
    host: str
    attributes: bool = True  # False: the exporter cannot map this allocation to pods (HAMi, HAMi DRA)

    def instance(self, node: str) -> str:
        return f"10.0.{sum(map(ord, node)) % 250}.7:9400"

    def target(self, node: str) -> dict[str, str]:
        """The labels prometheus-operator gives the exporter pod's target on ``node``, with ``node``
        from the rendered relabeling of the pod's spec.nodeName (the FQDN where the exporter's own
        host label has the short name)."""
        return {
            "node": node_name(node),
            "namespace": EXPORTER_NAMESPACE,
            "pod": f"{self.job}-{node}",
            "container": EXPORTER_CONTAINER,
            "service": self.job,
            "endpoint": "metrics",
            "job": self.job,
            "instance": self.instance(node),
        }

    def series(self, metric: str, piece: Slice, **extra: str) -> list[str]:
        """The series of ``metric`` for one GPU or MIG instance: one per pod using it, or one without pods."""
        labels = {
            "gpu": str(piece.index),
            "UUID": f"GPU-{piece.node}-{piece.index}",
            "device": f"nvidia{piece.index}",
            "modelName": piece.model,
            "pci_bus_id": f"00000000:{piece.index + 1:02X}:00.0",
            self.host: piece.node,
            "DCGM_FI_DRIVER_VERSION": DRIVER,
        }
        if piece.instance_id is not None:
            labels |= {"GPU_I_ID": piece.instance_id, "GPU_I_PROFILE": piece.profile or ""}
        labels |= extra
        pods = piece.pods if self.attributes else ()
        result = []
        for pod in pods or (None,):
            own = dict(labels)
            if pod is not None:
                own |= {
                    "exported_namespace": pod.namespace,
                    "exported_pod": pod.pod,
                    "exported_container": pod.container,
                }
            own |= self.target(piece.node)
            result.append(_selector(metric, own))
        return result


@dataclass
class Series:
    """``promtool``'s input_series: selector → values, in the order added."""

    values: dict[str, str] = field(default_factory=dict)

    def add(self, selectors: list[str], samples: str) -> None:
        for selector in selectors:
            self.values[selector] = samples

    def input_series(self) -> list[dict[str, str]]:
        return [{"series": selector, "values": samples} for selector, samples in self.values.items()]


def labels_of(selector: str) -> dict[str, str]:
    """The labels of a selector written by ``_selector``."""
    body = selector[selector.index("{") + 1 : -1]
    pairs = [part.split("=", 1) for part in body.split('",') if part]
    return {key: value.strip('"') for key, value in pairs}


def _selector(metric: str, labels: dict[str, str]) -> str:
    return metric + "{" + ",".join(f'{key}="{value}"' for key, value in labels.items()) + "}"


def hami_series(metric: str, node: str, pod: Workload, **extra: str) -> str:
    """A series of HAMi's vGPU monitor for one container's share, as Prometheus stores it.

    Labels as HAMi 2.10 writes them
    (https://github.com/Project-HAMi/website/blob/master/docs/userguide/monitoring/real-time-device-usage.md);
    scraped with honorLabels false, its namespace/pod/container become exported_* and the target's
    own (the device plugin pod in kube-system, Service hami-device-plugin-monitor) take their place;
    ``node`` is the rendered relabeling of the pod's node name.
    """
    labels = {
        "device_uuid": f"GPU-{node}-0",
        "vdevice_index": "0",
        "zone": "vGPU",
        "exported_namespace": pod.namespace,
        "exported_pod": pod.pod,
        "exported_container": pod.container,
        "node": node_name(node),
        "namespace": "kube-system",
        "pod": f"hami-device-plugin-{node}",
        "container": "vgpu-monitor",
        "service": "hami-device-plugin-monitor",
        "endpoint": "monitorport",
        "job": "hami-device-plugin-monitor",
        "instance": f"10.0.{sum(map(ord, node)) % 250}.8:9394",
    } | extra
    return _selector(metric, labels)
