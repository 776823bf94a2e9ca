"""The NFD workers a set deploys: chart releases of NFD, and the NFD that NVIDIA's charts bundle.

NFD's own chart deploys it stock; the device plugin chart (when ``nfd.enabled``, else
``gfd.enabled``) and the GPU Operator (unless ``nfd.enabled: false``) bundle it configured for
GPUs. What each deploys unless its values say otherwise, in every packaged version
(node-feature-discovery 0.14–0.19, nvidia-device-plugin 0.14–0.20, gpu-operator v23.9–v26.7):

- PCI labels (``worker.config.sources.pci.deviceLabelFields``): stock ``[class, vendor]``,
  the bundled ones ``[vendor]``
  (https://kubernetes-sigs.github.io/node-feature-discovery/stable/usage/features.html#pci);
- the worker's tolerations (``worker.tolerations``): none in NFD's chart
  (https://github.com/kubernetes-sigs/node-feature-discovery/blob/master/deployment/helm/node-feature-discovery/values.yaml),
  ``nvidia.com/gpu`` with any value in the GPU Operator's
  (https://github.com/NVIDIA/gpu-operator/blob/main/deployments/gpu-operator/values.yaml), and
  only ``nvidia.com/gpu=present`` in the device plugin's
  (https://github.com/NVIDIA/k8s-device-plugin/blob/main/deployments/helm/nvidia-device-plugin/values.yaml).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from gpustack.lint.facts import registered
from gpustack.lint.facts.components import pod_components
from gpustack.lint.facts.operands import component_releases
from gpustack.lint.model import get_value
from gpustack.lint.releases.release import HelmChartRelease

if TYPE_CHECKING:
    from gpustack.lint.context import LintContext

STOCK_FIELDS = ("class", "vendor")  # NFD's default deviceLabelFields
BUNDLED_FIELDS = ("vendor",)  # the deviceLabelFields of the NFD that NVIDIA's charts bundle
_GPU_TAINT = "nvidia.com/gpu"
WORKER_TOLERATIONS = ("worker", "tolerations")  # where NFD's values hold its worker's tolerations
_BUNDLED_TOLERATIONS: Mapping[str, tuple[Mapping[str, str], ...]] = {
    "gpu-operator": ({"key": _GPU_TAINT, "operator": "Exists", "effect": "NoSchedule"},),
    "device-plugin": ({"key": _GPU_TAINT, "operator": "Equal", "value": "present", "effect": "NoSchedule"},),
}


@dataclass(frozen=True)
class NfdRelease:
    """A release that deploys NFD, where its NFD values sit and what it deploys by default."""

    release: HelmChartRelease
    prefix: tuple[str, ...]  # where the release's values configure NFD: () in NFD's own chart
    default_fields: tuple[str, ...]
    default_tolerations: tuple[Mapping[str, str], ...]

    def values(self, *keys: str) -> Any:
        return get_value(self.release.values, *self.prefix, *keys)


@cache
def nfd_charts() -> dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[Mapping[str, str], ...]]]:
    """Chart → (where its NFD's values sit, its default deviceLabelFields, its worker's default
    tolerations of GPU taints)."""
    by_chart = {registered.chart_of_role(role): tolerations for role, tolerations in _BUNDLED_TOLERATIONS.items()}
    return {
        chart: (prefix, BUNDLED_FIELDS if prefix else STOCK_FIELDS, by_chart.get(chart, ()))
        for chart, prefix in registered.component_values("feature-discovery", "node-feature-discovery").items()
    }


def nfd_releases(ctx: LintContext) -> Iterator[NfdRelease]:
    """The set's releases that deploy NFD (a GPU Operator with ``nfd.enabled: false`` and a device
    plugin chart without its NFD left out)."""
    plugin = registered.chart_of_role("device-plugin")
    for release, (prefix, fields, tolerations) in component_releases(ctx, nfd_charts(), "nfd"):
        if release.chart == plugin and not _plugin_deploys_nfd(release.values):
            continue
        yield NfdRelease(release, prefix, fields, tolerations)


def _plugin_deploys_nfd(values: Mapping[str, Any]) -> bool:
    # The chart's dependency condition `nfd.enabled,gfd.enabled`: the first key set decides.
    for keys in (("nfd", "enabled"), ("gfd", "enabled")):
        value = get_value(values, *keys)
        if value is not None:
            return value is True
    return False


NFD_LABEL_PREFIX = "feature.node.kubernetes.io/"  # every label NFD's worker puts on nodes
NFD_COMPONENT = "node-feature-discovery"
# Objects that say NFD runs: its own CRDs' kinds, and the OpenShift NFD operator's instance
# (https://docs.openshift.com/container-platform/latest/hardware_enablement/psap-node-feature-discovery-operator.html).
_NFD_KINDS = ("NodeFeatureRule", "NodeFeature", "NodeFeatureGroup", "NodeFeatureDiscovery")


def deploys_nfd(ctx: LintContext) -> bool:
    """Whether the set deploys NFD: a release that does (``nfd_releases``), a pod of NFD's
    images, an OLM Subscription to the NFD operator, or an object of NFD's kinds."""
    if any(True for _ in nfd_releases(ctx)) or ctx.of_kind(*_NFD_KINDS):
        return True
    nfd_pods = (pod for pod in ctx.pod_specs if pod.system_component)  # NFD's pods are GPU system components
    if any(component.name == NFD_COMPONENT for pod in nfd_pods for component in pod_components(pod)):
        return True
    return any(get_value(sub.data, "spec", "name") == "nfd" for sub in ctx.of_kind("Subscription"))

