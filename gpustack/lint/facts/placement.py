"""Which nodes a device plugin's pods may run on, and whether two plugins can share a node.

A placement is the pod's required node selection as Kubernetes evaluates it: the nodeSelector
AND any one of the required affinity terms. A chart release's placement is its values over the
chart's defaults (Helm merges maps, so a user affinity keeps the default's other keys). Two
placements are disjoint when every pair of their terms asks for contradictory values of one
label (``In [hami]`` against ``NotIn [hami]``, ``In [a]`` against ``In [b]``, a value against
``DoesNotExist``): no node satisfies both, whatever the cluster. With a spec, two placements that
reach no common node pool cannot meet either.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpustack.lint.facts import deviceplugins, registered
from gpustack.lint.facts.podspec import LabelTest, node_label_tests
from gpustack.lint.facts.pools import ClusterFacts, Pool
from gpustack.lint.facts.scheduling import label_test_holds
from gpustack.lint.model import PodSpec
from gpustack.lint.releases import helmvalues

# The nvidia-device-plugin chart's default affinity, shared by its GFD (its values.yaml).
_DEVICE_PLUGIN_AFFINITY = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]}
                for key, value in (
                    ("feature.node.kubernetes.io/pci-10de.present", "true"),
                    ("feature.node.kubernetes.io/cpu-model.vendor_id", "NVIDIA"),
                    ("nvidia.com/gpu.present", "true"),
                )
            ]
        }
    }
}
# The GPU Operator runs its device plugin on nodes it labels with this key "true", unless the
# node already carries "false" (corpus: gpu-operator assets/state-device-plugin DaemonSet).
OPERATOR_DEVICE_PLUGIN_LABEL = "nvidia.com/gpu.deploy.device-plugin"
_OPERATOR = {"nodeSelector": {OPERATOR_DEVICE_PLUGIN_LABEL: "true"}}


@dataclass(frozen=True)
class Placement:
    """Required node label tests: any one term, each test of it."""

    terms: tuple[tuple[LabelTest, ...], ...]

    @classmethod
    def of_pod(cls, pod: PodSpec) -> Placement:
        selector: list[LabelTest] = []
        terms: dict[int, list[LabelTest]] = {}
        for test in node_label_tests(pod):
            if test.required:
                (selector if test.term is None else terms.setdefault(test.term, [])).append(test)
        if not terms:
            return cls((tuple(selector),))
        return cls(tuple((*selector, *term) for _, term in sorted(terms.items())))

    def disjoint(self, other: Placement) -> bool:
        """Whether no node can satisfy both."""
        return all(_contradict(a, b) for a in self.terms for b in other.terms)

    def reaches(self, pool: Pool, cluster: ClusterFacts) -> bool:
        """Whether the pool's nodes satisfy a term; labels the spec does not know stay open."""
        labels: Mapping[str, str | None] = pool.labels
        if cluster.gpu_operator:
            labels = {OPERATOR_DEVICE_PLUGIN_LABEL: "true", **labels}

        def holds(test: LabelTest) -> bool:
            judged = cluster.judges_label(test.key) or test.key in labels
            return not judged or label_test_holds(test, labels)

        return any(all(holds(test) for test in term) for term in self.terms)


def _contradict(a: tuple[LabelTest, ...], b: tuple[LabelTest, ...]) -> bool:
    return any(_excludes(x, y) or _excludes(y, x) for x in a for y in b if x.key == y.key)


def _excludes(x: LabelTest, y: LabelTest) -> bool:
    if x.selects and y.operator == "DoesNotExist":
        return True
    if x.operator != "In":
        return False
    if y.operator == "In":
        return not set(x.values) & set(y.values)
    return y.operator == "NotIn" and set(x.values) <= set(y.values)


def of_plugin(plugin: deviceplugins.DevicePlugin) -> Placement:
    """A device plugin's placement: its pod's, or what its chart or ClusterPolicy renders."""
    if plugin.pod is not None:
        return Placement.of_pod(plugin.pod)
    release = plugin.release
    if release is None or release.chart == registered.chart_of_role("gpu-operator"):  # a ClusterPolicy, or its chart
        spec: Mapping[str, Any] = _OPERATOR
    elif release.chart == "hami":
        spec = {"nodeSelector": deviceplugins.hami_node_selector(release.values)}
    else:
        own = {key: release.values[key] for key in ("nodeSelector", "affinity") if key in release.values}
        spec = helmvalues.coalesce({"affinity": _DEVICE_PLUGIN_AFFINITY}, own)
    return Placement.of_pod(PodSpec(plugin.resource, plugin.path, spec, {}, False, False))
