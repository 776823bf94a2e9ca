"""Node Feature Discovery, and how GPU DaemonSets find the nodes it labels.

gpustack deploys one standalone NFD (never a second one bundled by the device-plugin or
GPU Operator chart) and configures it so that every NVIDIA GPU node gets the same label,
whatever its PCI class: ``feature.node.kubernetes.io/pci-10de.present``. Stock NFD names PCI
labels ``<class>_<vendor>``, so a GeForce card (class 0300) and a datacenter card (class 0302)
get different labels and selectors copied from one silently miss the other
(https://kubernetes-sigs.github.io/node-feature-discovery/stable/usage/features.html#pci).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gpustack.lint.charts.chartkeys import version_key
from gpustack.render.component import Contribution, RenderContext, chart_release
from gpustack.spec.labelling import sleep_interval
from gpustack.spec.models import GpuStack

RELEASE = "node-feature-discovery"
NAMESPACE = "node-feature-discovery"

# With deviceLabelFields [vendor] NFD labels every NVIDIA PCI device of the whitelisted
# classes pci-10de.present, the label NVIDIA's own charts select on.
GPU_LABEL = "feature.node.kubernetes.io/pci-10de.present"
# The manual override NVIDIA's charts accept on nodes NFD does not label.
GPU_PRESENT_LABEL = "nvidia.com/gpu.present"
# 0300: VGA controller (GeForce), 0302: 3D controller (datacenter GPUs).
GPU_PCI_CLASSES = ("0300", "0302")
# What the GPU Operator gives its bundled NFD (gpu-operator values.yaml:
# node-feature-discovery.priorityClassName): the GPU agents select nodes by NFD's labels, so a
# worker evicted from a full node, or a master left pending, stalls them. From chart 0.16 the
# top-level key covers master, worker and gc; before, worker.priorityClassName was the only one.
# Never both: 0.16's and later worker templates write each, a duplicate priorityClassName key
# (https://github.com/kubernetes-sigs/node-feature-discovery/blob/master/deployment/helm/node-feature-discovery/templates/worker.yaml).
PRIORITY_CLASS = "system-node-critical"
GLOBAL_PRIORITY_SINCE = (0, 16)


def gpu_node_affinity(exclude: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Required node affinity of GPU DaemonSets: NFD's vendor label, or the manual override.

    ``exclude``: labels that together single out nodes to keep off (HAMi's pools). Terms are
    OR'd and expressions ANDed, so "not all of them" is one term per GPU label and excluded
    label, with ``NotIn``, which also matches nodes without the label.
    """
    gpu = [{"key": key, "operator": "In", "values": ["true"]} for key in (GPU_LABEL, GPU_PRESENT_LABEL)]
    keep_off = [[{"key": key, "operator": "NotIn", "values": [value]}] for key, value in (exclude or {}).items()]
    terms = [{"matchExpressions": [expression, *other]} for expression in gpu for other in keep_off or [[]]]
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}


def gpu_tolerations(stack: GpuStack, *, chart_defaults: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]] | None:
    """Tolerations for the node pools' taints, added to a chart's defaults.

    ``None`` when the defaults already tolerate every taint (the chart's list stays in force).
    """
    tolerations = [dict(t) for t in chart_defaults]
    for pool in stack.spec.nodePools:
        for taint in pool.taints:
            if not any(_tolerates(t, taint.key, taint.effect) for t in tolerations):
                tolerations.append({"key": taint.key, "operator": "Exists", "effect": taint.effect})
    return tolerations if len(tolerations) > len(chart_defaults) else None


def _tolerates(toleration: Mapping[str, Any], key: str, effect: str) -> bool:
    return toleration.get("key") == key and toleration.get("effect") in (None, effect)


def build(chart: Any, ctx: RenderContext) -> Contribution:
    nfd = ctx.stack.spec.nfd
    if not nfd.enabled:
        return Contribution(
            notes=[
                "NFD is not deployed by this stack: the cluster's own NFD must run with "
                f"`deviceLabelFields: [vendor]` so that GPU nodes carry `{GPU_LABEL}=true`, "
                f"or label each GPU node by hand: `kubectl label node \"$NODE\" {GPU_PRESENT_LABEL}=true`."
            ]
        )
    worker: dict[str, Any] = {
        "config": {
            # Large clusters: every relabel is an etcd write; raise it.
            "core": {"sleepInterval": sleep_interval(ctx.stack, nfd.sleepInterval)},
            "sources": {"pci": {"deviceClassWhitelist": list(GPU_PCI_CLASSES), "deviceLabelFields": ["vendor"]}},
        },
    }
    tolerations = gpu_tolerations(ctx.stack, chart_defaults=[])
    if tolerations:
        worker["tolerations"] = tolerations
    values: dict[str, Any] = {
        # GFD publishes nvidia.com/* labels through NFD; nfd-master drops namespaces it is not
        # told about (NVIDIA's charts set the same).
        "master": {"config": {"extraLabelNs": ["nvidia.com"]}},
        "worker": worker,
    }
    if version_key(nfd.version) >= GLOBAL_PRIORITY_SINCE:
        values["priorityClassName"] = PRIORITY_CLASS
    else:
        worker["priorityClassName"] = PRIORITY_CLASS
    release = chart_release(
        "node-feature-discovery", name=RELEASE, version=nfd.version, namespace=NAMESPACE, values=values
    )
    return Contribution(releases=[release])
