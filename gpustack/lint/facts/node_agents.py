"""The GPU node agents a set deploys, and the tolerations their pods get.

A GPU node agent is a DaemonSet that must run on every GPU node: the NVIDIA device plugin and
GPU Feature Discovery, the DCGM exporter, HAMi's device plugin, a DRA kubelet plugin, the GPU
Operator's operands (driver, toolkit, device plugin, GFD, DCGM exporter, MIG manager,
validator) and NFD's worker (``facts/nfd.py``). Each reaches the set as a chart release or as a
DaemonSet whose image names it (``facts/components.py``).

What each chart's agents tolerate unless its values say otherwise (the charts' values.yaml, at
every version gpustack has key data for); a release's list replaces the default, Helm does not
merge lists:

- nvidia-device-plugin ``tolerations`` (device plugin and GFD): ``CriticalAddonsOnly`` and
  ``nvidia.com/gpu:NoSchedule`` with any value
  (https://github.com/NVIDIA/k8s-device-plugin/blob/main/deployments/helm/nvidia-device-plugin/values.yaml);
- gpu-operator ``daemonsets.tolerations`` (every operand): ``nvidia.com/gpu:NoSchedule`` with any
  value; the chart copies the list into the ClusterPolicy's ``spec.daemonsets.tolerations`` and the
  operator sets a non-empty list on its operands in place of their own, which is that same
  toleration (https://github.com/NVIDIA/gpu-operator/blob/main/deployments/gpu-operator/values.yaml);
- dcgm-exporter ``tolerations``: none (the control plane's taint from 4.7)
  (https://github.com/NVIDIA/dcgm-exporter/blob/main/deployment/values.yaml);
- hami ``devicePlugin.tolerations``: none (https://github.com/Project-HAMi/HAMi/blob/master/charts/hami/values.yaml);
- the DRA driver charts' ``kubeletPlugin.tolerations``: none
  (https://github.com/NVIDIA/k8s-dra-driver-gpu/blob/main/deployments/helm/dra-driver-nvidia-gpu/values.yaml).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from gpustack import charts
from gpustack.lint.facts import clusterpolicy, nfd, registered
from gpustack.lint.facts.components import is_placeholder_image, pod_components
from gpustack.lint.facts.scheduling import tolerations
from gpustack.lint.model import Path, PodSpec, Resource, get_value
from gpustack.lint.releases import dispatch

if TYPE_CHECKING:
    from gpustack.lint.context import LintContext

_GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
_NONE: tuple[Mapping[str, str], ...] = ()
# Components (data/system-components.yaml) whose DaemonSets must run on every GPU node.
NODE_AGENT_COMPONENTS = frozenset({
    "device-plugin", "gke-device-plugin", "dcgm-exporter", "nvidia-gpu-exporter", "hami", "dra-kubelet-plugin",
    "node-feature-discovery", "gpu-operator",
})
# What an agent that does not run on a node leaves undone there, by component.
CONSEQUENCES = {
    "node-feature-discovery": "those nodes never get NFD's labels (feature.node.kubernetes.io/pci-10de.present, GFD's "
    "nvidia.com/gpu.*), and the device plugin and the GPU Operator's operands, which select them, never run there",
    "device-plugin": "those nodes' GPUs are never advertised (nvidia.com/gpu stays 0) and GPU pods stay Pending",
    "gke-device-plugin": "those nodes' GPUs are never advertised (nvidia.com/gpu stays 0) and GPU pods stay Pending",
    "hami": "those nodes' GPUs are never advertised to HAMi and GPU pods stay Pending",
    "dra-kubelet-plugin": "those nodes publish no ResourceSlices, so no ResourceClaim is ever allocated a GPU there",
    "dcgm-exporter": "those nodes' GPUs export no metrics, and alerts on them never fire",
    "nvidia-gpu-exporter": "those nodes' GPUs export no metrics, and alerts on them never fire",
    "gpu-operator": "the operator's driver, toolkit and device plugin never run there, so their GPUs are never advertised",
}


@dataclass(frozen=True)
class AgentTolerations:
    """The tolerations one place gives GPU node agents, and where a finding about them points."""

    resource: Resource
    path: Path
    what: str  # "<owner> deploys <agents>, but its <key>" or "the chart's default …"
    component: str  # a key of CONSEQUENCES
    tolerations: Sequence[Mapping[str, Any]]
    pod: PodSpec | None = None  # a DaemonSet's pod: the pools it selects narrow what it must tolerate


@dataclass(frozen=True)
class _ChartAgents:
    keys: tuple[str, ...]  # where the chart's values hold the agents' tolerations
    defaults: tuple[Mapping[str, Any], ...]
    component: str
    agents: str
    empty_is_default: bool = False  # the GPU Operator: an empty list leaves the operands' own


@cache
def _chart_agents() -> Mapping[str, _ChartAgents]:
    table = {
        registered.chart_of_role("device-plugin"): _ChartAgents(
            ("tolerations",), ({"key": "CriticalAddonsOnly", "operator": "Exists"}, _GPU_TOLERATION),
            "device-plugin", "the NVIDIA device plugin (and GFD)"),
        registered.chart_of_role("gpu-operator"): _ChartAgents(
            ("daemonsets", "tolerations"), (_GPU_TOLERATION,), "gpu-operator", "the GPU Operator's operands",
            empty_is_default=True),
        registered.chart_of_role("metrics-exporter"): _ChartAgents(("tolerations",), _NONE, "dcgm-exporter", "the DCGM exporter"),
        registered.chart_of_role("gpu-sharing"): _ChartAgents(
            ("devicePlugin", "tolerations"), _NONE, "hami", "HAMi's device plugin"),
    }
    for chart in charts.registry().values():
        if chart.role == "dra-driver":
            table[chart.name] = _ChartAgents(
                ("kubeletPlugin", "tolerations"), _NONE, "dra-kubelet-plugin", "the DRA kubelet plugin")
    return table


def chart_tolerations_keys() -> Mapping[str, tuple[str, ...]]:
    """Chart → where its values hold its GPU node agents' tolerations (NFD's in ``facts/nfd.py``)."""
    return {chart: agents.keys for chart, agents in _chart_agents().items()}


def agent_tolerations(ctx: LintContext) -> Iterator[AgentTolerations]:
    """Every place of the set that gives GPU node agents their tolerations: chart releases (their
    values, else the chart's defaults), ClusterPolicies, NFD releases and agent DaemonSets."""
    table = _chart_agents()
    for release in dispatch.releases(ctx):
        agents = table.get(release.chart)
        if agents is None:
            continue
        value = get_value(release.values, *agents.keys)
        given = isinstance(value, list) and not (agents.empty_is_default and not value)
        allowed = [t for t in value if isinstance(t, Mapping)] if given else list(agents.defaults)
        resource, path = release.where(*agents.keys)
        whose = f"its {'.'.join(agents.keys)}" if given else f"the chart's default {'.'.join(agents.keys)}"
        yield AgentTolerations(resource, path, f"{release} deploys {agents.agents}, but {whose}", agents.component, allowed)
    for policy in clusterpolicy.cluster_policies(ctx):
        value = policy.get(("spec", "daemonsets", "tolerations"))
        if isinstance(value, list) and value:
            allowed = [t for t in value if isinstance(t, Mapping)]
            yield AgentTolerations(policy, ("spec", "daemonsets", "tolerations"),
                                   f"{policy.ref} deploys the GPU Operator's operands, but its spec.daemonsets.tolerations",
                                   "gpu-operator", allowed)
    for found in nfd.nfd_releases(ctx):
        value = found.values(*nfd.WORKER_TOLERATIONS)
        given = isinstance(value, list)
        allowed = [t for t in value if isinstance(t, Mapping)] if given else list(found.default_tolerations)
        resource, path = found.release.where(*found.prefix, *nfd.WORKER_TOLERATIONS)
        whose = "its worker.tolerations" if given else "the chart's default worker tolerations"
        yield AgentTolerations(resource, path, f"{found.release} deploys NFD's worker, but {whose}",
                               "node-feature-discovery", allowed)
    for pod in ctx.pod_specs:
        if pod.resource.kind != "DaemonSet":
            continue
        component = next((c.name for c in pod_components(pod) if c.name in NODE_AGENT_COMPONENTS), None)
        if component is not None and not any(is_placeholder_image(str(c.data.get("image", ""))) for c in pod.containers()):
            path = (*pod.path, "tolerations") if "tolerations" in pod.spec else pod.path
            yield AgentTolerations(pod.resource, path, f"the GPU node agent {pod.resource.ref}'s tolerations", component,
                                   tolerations(pod), pod)
