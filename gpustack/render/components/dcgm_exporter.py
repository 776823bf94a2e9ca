"""Which DCGM Exporter image a stack runs, and the label names that image writes.

Two paths deploy the exporter: NVIDIA's dcgm-exporter chart (monitoring.dcgmExporter.version)
or the GPU Operator (gpuOperator.version), each pinning an image ``<DCGM>-<exporter>-<flavour>``.
The tables below are the images of the packaged charts gpustack knows; for another chart
version the standalone chart's own version is the exporter's, and the operator's image is not
pinned by gpustack (the chart's default then applies and the label is taken as the newest).

dcgm-exporter renamed the node label ``Hostname`` to ``hostname`` after 4.8.2
(NVIDIA/dcgm-exporter#655): alerts and joins use the name the pinned exporter writes.
"""

from __future__ import annotations

from gpustack.spec.models import GpuStack

# dcgm-exporter chart version → image tag (the chart's values.yaml image.tag).
CHART_IMAGE_TAGS = {
    "3.2.0": "3.3.0-3.2.0-ubuntu22.04",
    "3.6.1": "3.3.9-3.6.1-ubuntu22.04",
    "4.0.4": "4.1.1-4.0.4-ubuntu22.04",
    "4.7.1": "4.4.2-4.7.1-ubuntu22.04",
    "4.8.2": "4.5.3-4.8.2-distroless",
}
# gpu-operator chart version → its dcgmExporter.version (values.yaml).
OPERATOR_IMAGE_TAGS = {
    "v23.9.2": "3.3.0-3.2.0-ubuntu22.04",
    "v24.3.0": "3.3.5-3.4.1-ubuntu22.04",
    "v24.6.2": "3.3.7-3.5.0-ubuntu22.04",
    "v24.9.2": "3.3.9-3.6.1-ubuntu22.04",
    "v25.3.4": "4.3.1-4.4.0-ubuntu22.04",
    "v25.10.1": "4.4.2-4.7.0-distroless",
    "v26.7.0": "4.6.0-4.8.3-distroless",
}
IMAGE_REPOSITORY = "nvcr.io/nvidia/k8s/dcgm-exporter"
# The exporter's Service: the GPU Operator names it; the chart's is its fullname, the release name
# gpustack gives it. prometheus-operator sets a ServiceMonitor target's job label to the Service's
# name (https://prometheus-operator.dev/docs/api-reference/api/#monitoring.coreos.com/v1.ServiceMonitorSpec, jobLabel).
OPERATOR_SERVICE = "nvidia-dcgm-exporter"
CHART_RELEASE = "dcgm-exporter"
# The last exporter release that writes ``Hostname``.
LAST_CAPITAL_HOSTNAME = (4, 8, 2)
# The exporter maps DRA claims of NVIDIA's driver only (its kubernetesDRA code reads driver
# gpu.nvidia.com); HAMi's claims stay unattributed.
DRA_ATTRIBUTED_DRIVER = "nvidia"


def image_tag(stack: GpuStack) -> str | None:
    """The pinned image tag of the exporter this stack deploys; None when gpustack does not know it."""
    if stack.spec.gpuOperator.enabled:
        return OPERATOR_IMAGE_TAGS.get(stack.spec.gpuOperator.version)
    return CHART_IMAGE_TAGS.get(stack.spec.monitoring.dcgmExporter.version)


def exporter_version(stack: GpuStack) -> tuple[int, ...] | None:
    """The exporter release (``4.8.2`` of ``4.5.3-4.8.2-distroless``), None when unknown."""
    tag = image_tag(stack)
    if tag is not None:
        return _numbers(tag.split("-")[1])
    if stack.spec.gpuOperator.enabled:
        return None
    return _numbers(stack.spec.monitoring.dcgmExporter.version)


def dcgm_version(stack: GpuStack) -> tuple[int, ...] | None:
    """The DCGM release the pinned image embeds (``4.5.3`` of ``4.5.3-4.8.2-distroless``), None when unknown."""
    tag = image_tag(stack)
    return _numbers(tag.split("-")[0]) if tag is not None else None


def host_label(stack: GpuStack) -> str:
    """``Hostname`` up to exporter 4.8.2, ``hostname`` after (and for releases gpustack does not know)."""
    version = exporter_version(stack)
    return "Hostname" if version is not None and version <= LAST_CAPITAL_HOSTNAME else "hostname"


def attributes_dra(stack: GpuStack) -> bool:
    """Whether the exporter names the pods of DRA-allocated GPUs: with NVIDIA's DRA driver and the
    dcgm-exporter chart (kubernetesDRA). The exporter reads the claims from the kubelet's
    pod-resources API, which lists them from Kubernetes 1.34 (KubeletPodResourcesDynamicResources,
    beta and on), the least DRA needs. The GPU Operator's exporter gets no such setting from gpustack."""
    dra = stack.spec.dra
    return dra.enabled and dra.driver == DRA_ATTRIBUTED_DRIVER and not stack.spec.gpuOperator.enabled


def scrape_job(stack: GpuStack) -> str:
    """The ``job`` label of the exporter's series as Prometheus scrapes them."""
    return OPERATOR_SERVICE if stack.spec.gpuOperator.enabled else CHART_RELEASE


def _numbers(version: str) -> tuple[int, ...] | None:
    parts = version.lstrip("v").split(".")
    return tuple(int(p) for p in parts) if all(p.isdigit() for p in parts) else None
