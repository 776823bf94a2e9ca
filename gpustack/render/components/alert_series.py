"""The labels DCGM series carry once Prometheus has scraped them: what the alerts are written against.

The exporter labels each series with its host name (``Hostname`` up to 4.8.2, ``hostname`` after:
dcgm_exporter.host_label), ``gpu``, ``UUID``, ``modelName`` and, on a MIG-enabled GPU, once
per MIG instance with ``GPU_I_PROFILE`` and ``GPU_I_ID``
(https://github.com/NVIDIA/dcgm-exporter/blob/main/README.md). A pod using the GPU adds
``namespace``, ``pod`` and ``container`` (read from the kubelet's pod-resources API).

Both ServiceMonitors gpustack deploys (the dcgm-exporter chart's and the GPU Operator's) keep
``honorLabels: false``; prometheus-operator then sets the target's own ``namespace``, ``pod``,
``container``, ``service``, ``endpoint``, ``job`` and ``instance`` (the exporter pod's:
https://prometheus-operator.dev/docs/api-reference/api/#monitoring.coreos.com/v1.Endpoint), and
Prometheus renames the clashing labels of the scraped series to ``exported_<name>``
(``honor_labels`` in https://prometheus.io/docs/prometheus/latest/configuration/configuration/#scrape_config).
So the workload is ``exported_namespace``/``exported_pod``/``exported_container``; the plain
names are the exporter's.

The exporter's host name is the node's short name where kube-state-metrics' ``node`` is its FQDN
on many clouds, and it changed case across releases: no alert groups or joins on it. Both
ServiceMonitors relabel the exporter pod's ``spec.nodeName`` into ``node``
(``NODE_RELABELING``), the name kube-state-metrics uses, and every join and aggregation uses it.

``DCGM_FI_DEV_GPU_UTIL`` is not reported for MIG instances (NVIDIA/dcgm-exporter issues #50,
#105, #216, #430): ``utilisation`` falls back to ``DCGM_FI_PROF_GR_ENGINE_ACTIVE`` there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

WORKLOAD_NAMESPACE = "exported_namespace"
WORKLOAD_POD = "exported_pod"
WORKLOAD_CONTAINER = "exported_container"
# The node of a series: the exporter pod's spec.nodeName, which prometheus-operator's pod
# endpoints discovery exposes as __meta_kubernetes_pod_node_name
# (https://prometheus.io/docs/prometheus/latest/configuration/configuration/#endpoints).
NODE = "node"
NODE_RELABELING = {"sourceLabels": ["__meta_kubernetes_pod_node_name"], "targetLabel": NODE, "action": "replace"}
# The MIG instance of a series; absent (empty) on whole GPUs, so joins on it hold for both.
MIG_INSTANCE = "GPU_I_ID"
GPU_LABELS = ("gpu", "UUID", "modelName")


@dataclass(frozen=True)
class SeriesModel:
    """Label names of one stack's DCGM series, and the PromQL shapes built on them."""

    profiling: bool  # some pool exports DCGM_FI_PROF_* (the MIG utilisation fallback needs it)
    # PromQL naming the pods on each GPU where the exporter cannot (HAMi: hami_monitoring.shares_by_gpu):
    # one series per (UUID, exported_namespace, exported_pod), value 0; empty when there is none.
    shares: str = ""

    @property
    def slice_join(self) -> str:
        """Match one GPU, or one MIG instance of it: ``gpu="0"`` exists on every node, so the node too."""
        return f"on({NODE}, gpu, {MIG_INSTANCE})"

    @property
    def gpu_join(self) -> str:
        return f"on({NODE}, gpu)"

    def where(self) -> str:
        return f"GPU {{{{ $labels.gpu }}}} on {{{{ $labels.{NODE} }}}}"

    def workload(self) -> str:
        """The alert text naming the workload (labels absent when no pod holds the GPU)."""
        return (
            f"{{{{ with $labels.{WORKLOAD_POD} }}}} (pod {{{{ $labels.{WORKLOAD_NAMESPACE} }}}}/{{{{ . }}}})"
            "{{ end }}"
        )

    def utilisation(self) -> str:
        """GPU busy percent: GPU_UTIL, or GR_ENGINE_ACTIVE × 100 where the GPU (a MIG instance) has none."""
        if not self.profiling:
            return "DCGM_FI_DEV_GPU_UTIL"
        return "(DCGM_FI_DEV_GPU_UTIL or 100 * DCGM_FI_PROF_GR_ENGINE_ACTIVE)"

    def per_gpu(
        self, inner: Callable[[str], str], metric: str, *, matcher: str = "", keep: tuple[str, ...] = ()
    ) -> str:
        """``inner`` of ``metric`` folded from MIG instances to the physical GPU, the workloads kept.

        One series per (GPU, workload on it); a GPU that no pod uses gives one series without
        workload labels. So a hot GPU split into seven MIG instances raises one alert, not seven.
        With ``shares``, the pods the exporter cannot see are joined on the GPU's UUID (the
        per-GPU value on the left, one per UUID; the pods on the right, ``group_right``). Not
        with ``keep``: several XID codes of one GPU would give the left side several series per
        UUID, which ``group_right`` refuses.
        """
        gpu = ", ".join((NODE, *GPU_LABELS, *keep))
        used = inner(f'{metric}{{{matcher + "," if matcher else ""}{WORKLOAD_POD}!=""}}')
        every = inner(f"{metric}{{{matcher}}}" if matcher else metric)
        attributed = f"max by ({gpu}, {WORKLOAD_NAMESPACE}, {WORKLOAD_POD}) ({used})"
        if self.shares and not keep:
            copied = ", ".join((NODE, "gpu", "modelName"))
            attributed += f" or max by ({gpu}) ({every}) + on(UUID) group_right({copied}) {self.shares}"
        return f"{attributed} or on({NODE}, gpu{''.join(', ' + k for k in keep)}) max by ({gpu}) ({every})"


def not_servers(servers: str) -> str:
    """A matcher that leaves out the inference-server containers ``servers`` (a regex
    alternation), or nothing when there are none."""
    return f'{{{WORKLOAD_CONTAINER}!~"{servers}"}}' if servers else ""
