"""What rules see besides the object they check: the whole set and the cluster it lands on."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, TypeVar

from gpustack.lint.model import PodSpec, Resource, computed_once
from gpustack.shipped import default_critical_xids

if TYPE_CHECKING:
    from gpustack.lint.charts.chartkeys import ChartKeys
    from gpustack.lint.facts.pools import ClusterFacts

T = TypeVar("T")

# Distributions whose default containerd runtime is not nvidia (pods need runtimeClassName):
# K3s and RKE2 register the nvidia runtime beside runc; Talos's nvidia-container-toolkit
# extension too (https://www.talos.dev/latest/talos-guides/configuration/nvidia-gpu/), unless a
# machine-config patch makes it containerd's default. MicroK8s's gpu addon runs the GPU
# Operator, whose toolkit may or may not be the default: a warning there, not an error.
RUNTIME_CLASS_DISTRIBUTIONS = frozenset({"k3s", "rke2", "k0s", "kubeadm", "talos"})


@dataclass(frozen=True)
class RuleOptions:
    """Tunables from `.gpustack.yaml` that rules read."""

    critical_xids: tuple[int, ...] = field(default_factory=default_critical_xids)  # why: policies/GS015.yaml


@dataclass(frozen=True)
class LintContext:
    """The input set and cluster context.

    ``resources`` is exactly what was passed (set-level rules see only that); ``pod_specs``
    are extracted once for all rules. ``cluster`` holds facts from a spec (``--spec`` or the
    config's ``spec:``) or is None; ``distribution`` is ``--distribution``, else the config's,
    else the spec's.
    """

    resources: tuple[Resource, ...]
    pod_specs: tuple[PodSpec, ...]
    distribution: str | None = None
    options: RuleOptions = field(default_factory=RuleOptions)
    cluster: ClusterFacts | None = None
    partial: bool = False
    kubernetes_version: str | None = None  # --kubernetes-version
    values_files: Mapping[str, str] = field(default_factory=dict)  # file -> "chart[@version]" (.gpustack.yaml values:)
    chart_values: tuple[ChartKeys, ...] = ()  # --chart-values: other charts' keys
    texts: Mapping[str, str] = field(default_factory=dict)  # file -> text: how a value was spelled (GS029)
    # What file-local rules read of the whole set (``Rule.set_fact``), by the function that
    # computes it: the engine computes each once per root and hands it to every file's context.
    set_facts: Mapping[Callable[[LintContext], Any], Any] = field(default_factory=dict)

    def pods_of(self, resource: Resource) -> tuple[PodSpec, ...]:
        """The pod specs inside ``resource``, in document order (an index built once per run:
        object rules never scan the whole set)."""
        return self._pods_by_resource.get(id(resource), ())

    def of_kind(self, *kinds: str | None) -> list[Resource]:
        """The set's objects of these kinds, in input order (an index built once per set: a
        set-wide check looks up the kinds it reads instead of testing every object)."""
        index = self._by_kind
        if len(kinds) == 1:
            return [resource for _, resource in index.get(kinds[0], ())]
        found = sorted((item for kind in dict.fromkeys(kinds) for item in index.get(kind, ())), key=lambda item: item[0])
        return [resource for _, resource in found]

    def memo(self, key: Hashable, compute: Callable[[], T]) -> T:
        """A value computed once per set (a run lints each root's set apart) and shared by
        all checks of a rule (an index over the set), so that a rule run per object never
        rescans the whole set."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    def set_fact(self, compute: Callable[[LintContext], T]) -> T:
        """The fact ``compute`` finds in the whole set: the one the engine handed in (a file
        linted alone still sees its set), else computed here once, over this context's set."""
        if compute in self.set_facts:
            return self.set_facts[compute]  # type: ignore[no-any-return]
        return self.memo(compute, lambda: compute(self))

    def with_set_facts(self, facts: Mapping[Callable[[LintContext], Any], Any]) -> LintContext:
        """This set with the set facts the engine computed over it, keeping what was computed
        over the same set (memos and indexes: ``dataclasses.replace`` would start them again)."""
        other = replace(self, set_facts=facts)
        for kept in ("_memo", "_by_kind", "_pods_by_resource"):
            if kept in self.__dict__:
                other.__dict__[kept] = self.__dict__[kept]
        return other

    @computed_once
    def _memo(self) -> dict[Hashable, Any]:
        return {}

    @computed_once
    def _by_kind(self) -> dict[str | None, list[tuple[int, Resource]]]:
        index: dict[str | None, list[tuple[int, Resource]]] = {}
        for number, resource in enumerate(self.resources):
            index.setdefault(resource.kind, []).append((number, resource))
        return index

    @computed_once
    def _pods_by_resource(self) -> dict[int, tuple[PodSpec, ...]]:
        index: dict[int, list[PodSpec]] = {}
        for pod in self.pod_specs:
            index.setdefault(id(pod.resource), []).append(pod)
        return {key: tuple(pods) for key, pods in index.items()}
