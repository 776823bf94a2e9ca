"""Pods on node pools: which pools a pod can land on, and what one of its pods takes from a pool.

The scheduler's questions the context rules ask of ``ClusterFacts``: node selection and
affinity (``label_test_holds``, ``Selection``), taints (``reachable_pools``), the GPU
resources each container asks for, whether one node of a pool can ever hold a pod
(``shortfall``), and what pods take of a pool's capacity (``Usage``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from gpustack.lint.facts.podspec import LabelTest, node_label_tests
from gpustack.lint.facts.pools import (
    GPU,
    HAMI_MEMORY_MIB,
    HAMI_MEMORY_PERCENT,
    HAMI_RESOURCES,
    MIG_PREFIX,
    TOLERATION_FIELDS,
    ClusterFacts,
    Pool,
)
from gpustack.lint.facts.quantities import HAMI_CORES, gpu_requests
from gpustack.lint.model import Container, Path, PodSpec


def label_test_holds(test: LabelTest, labels: Mapping[str, str | None]) -> bool:
    """One nodeSelector entry or affinity expression on a node with ``labels``.

    A label whose value the spec does not know (None) satisfies every value test.
    """
    present = test.key in labels
    value = labels.get(test.key)
    if test.operator == "Exists":
        return present
    if test.operator == "DoesNotExist":
        return not present
    if test.operator == "NotIn":
        return not present or value is None or value not in test.values
    if not present:
        return False  # In, Gt, Lt need the label
    if value is None:
        return True
    if test.operator == "In":
        return value in test.values
    if test.operator in ("Gt", "Lt") and len(test.values) == 1:
        try:
            number, bound = int(value), int(test.values[0])
        except ValueError:
            return False
        return number > bound if test.operator == "Gt" else number < bound
    return False


@dataclass(frozen=True)
class Selection:
    """A pod's required node selection: nodeSelector AND any one of the affinity terms."""

    selector: tuple[LabelTest, ...]
    terms: tuple[tuple[LabelTest, ...], ...]  # empty: no required affinity

    @classmethod
    def of(cls, pod: PodSpec, cluster: ClusterFacts) -> Selection:
        selector: list[LabelTest] = []
        terms: dict[int, list[LabelTest]] = {}
        for test in node_label_tests(pod):
            if not test.required:
                continue  # preferences never block
            if test.term is not None:
                terms.setdefault(test.term, [])  # a term of unknown labels only stays open: it may match
            if not cluster.judges_label(test.key):
                continue  # labels the spec does not know stay open
            if test.term is None:
                selector.append(test)
            else:
                terms.setdefault(test.term, []).append(test)
        return cls(tuple(selector), tuple(tuple(term) for _, term in sorted(terms.items())))

    @property
    def condition(self) -> tuple[Any, ...]:
        """What the selection asks of a node's labels, without where it is written: pods with
        the same condition select the same pools."""
        return tuple((test.key, test.operator, test.values) for test in self.selector), tuple(
            tuple((test.key, test.operator, test.values) for test in term) for term in self.terms
        )

    @property
    def tests(self) -> tuple[LabelTest, ...]:
        return self.selector + tuple(test for term in self.terms for test in term)

    def matches(self, pool: Pool) -> bool:
        if not all(label_test_holds(test, pool.labels) for test in self.selector):
            return False
        return not self.terms or any(all(label_test_holds(t, pool.labels) for t in term) for term in self.terms)


def tolerations(pod: PodSpec) -> list[Mapping[str, Any]]:
    items = pod.spec.get("tolerations")
    return [item for item in items if isinstance(item, Mapping)] if isinstance(items, list) else []


def selected_pools(pod: PodSpec, cluster: ClusterFacts) -> tuple[Pool, ...]:
    """Pools whose node labels satisfy the pod's required node selection."""
    return pod.derived(_selected_pools, cluster)


def _selected_pools(pod: PodSpec, cluster: ClusterFacts) -> tuple[Pool, ...]:
    selection = Selection.of(pod, cluster)
    key = ("selected", selection.condition)
    found = cluster.placements.get(key)
    if found is None:
        found = cluster.placements[key] = tuple(pool for pool in cluster.pools if selection.matches(pool))
    return found


def reachable_pools(pod: PodSpec, cluster: ClusterFacts) -> tuple[Pool, ...]:
    """Pools the pod may be scheduled onto by labels and taints (resources aside)."""
    return pod.derived(_reachable_pools, cluster)


def _reachable_pools(pod: PodSpec, cluster: ClusterFacts) -> tuple[Pool, ...]:
    selected = selected_pools(pod, cluster)
    allowed = tolerations(pod)
    # Pools by id: they live as long as the cluster that holds this memo. Of each toleration,
    # what Taint.tolerated_by reads, by repr: a malformed value may be a list.
    tolerated = repr([[item.get(name) for name in TOLERATION_FIELDS] for item in allowed])
    key = ("reachable", tuple(map(id, selected)), tolerated)
    found = cluster.placements.get(key)
    if found is None:
        found = cluster.placements[key] = tuple(pool for pool in selected if not pool.untolerated(allowed))
    return found


# --- what a pod takes ------------------------------------------------------------------------


@dataclass(frozen=True)
class Amount:
    """One GPU resource of one container, with where it is written."""

    name: str
    quantity: Fraction
    path: Path


@dataclass(frozen=True)
class ContainerAsk:
    """The GPU resources one container asks for (placeholders left out)."""

    container: Container
    amounts: Mapping[str, Amount]

    def get(self, name: str) -> Fraction:
        amount = self.amounts.get(name)
        return amount.quantity if amount else Fraction(0)


def container_asks(pod: PodSpec) -> tuple[tuple[ContainerAsk, ...], tuple[ContainerAsk, ...]]:
    """(regular containers, init containers) with the GPU resources each asks for."""
    return pod.derived(_container_asks)


def _container_asks(pod: PodSpec) -> tuple[tuple[ContainerAsk, ...], tuple[ContainerAsk, ...]]:
    regular: list[ContainerAsk] = []
    init: list[ContainerAsk] = []
    for container in pod.containers():
        if container.group == "ephemeralContainers":
            continue  # ephemeral containers get no resources
        amounts = {
            name: Amount(name, quantity, _amount_path(container, name))
            for name, quantity in gpu_requests(container).items()
            if quantity is not None
        }
        if amounts:
            (init if container.group == "initContainers" else regular).append(ContainerAsk(container, amounts))
    return tuple(regular), tuple(init)


def _amount_path(container: Container, name: str) -> Path:
    resources = container.data.get("resources")
    limits = resources.get("limits") if isinstance(resources, Mapping) else None
    section = "limits" if isinstance(limits, Mapping) and name in limits else "requests"
    return (*container.path, "resources", section, name)


def pod_total(pod: PodSpec, name: str) -> Fraction:
    """What the pod takes of extended resource ``name`` on its node: the sum over its
    containers, or the largest init container if that is more (Kubernetes' effective request)."""
    regular, init = container_asks(pod)
    return max([sum((ask.get(name) for ask in regular), Fraction(0)), *(ask.get(name) for ask in init)])


@dataclass(frozen=True)
class Usage:
    """What one pod takes from a pool, in the units the pool is shared in.

    HAMi pools: vGPU slots, memory (MiB) and cores (percent), each vGPU on its own GPU;
    other pools: units of the pool's GPU resource (whole GPUs or time slices).
    """

    units: Fraction = Fraction(0)
    memory_mib: Fraction = Fraction(0)
    cores: Fraction = Fraction(0)

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.units + other.units, self.memory_mib + other.memory_mib, self.cores + other.cores)

    def __sub__(self, other: Usage) -> Usage:
        return Usage(self.units - other.units, self.memory_mib - other.memory_mib, self.cores - other.cores)

    def __mul__(self, factor: int) -> Usage:
        return Usage(self.units * factor, self.memory_mib * factor, self.cores * factor)


def hami_vgpus(ask: ContainerAsk) -> Fraction:
    """vGPUs a container takes under HAMi: nvidia.com/gpu, or 1 when it asks only for
    memory or cores (HAMi's webhook adds nvidia.com/gpu: 1)."""
    count = ask.get(GPU)
    return count if count > 0 else Fraction(1)


def hami_memory(ask: ContainerAsk, pool: Pool) -> Fraction:
    """MiB per vGPU: gpumem, gpumem-percentage of the card, or the whole card (HAMi's default)."""
    if HAMI_MEMORY_MIB in ask.amounts:
        return ask.get(HAMI_MEMORY_MIB)
    if HAMI_MEMORY_PERCENT in ask.amounts:
        return pool.gpu_memory_mib * ask.get(HAMI_MEMORY_PERCENT) / 100
    return pool.gpu_memory_mib


def usage(pod: PodSpec, pool: Pool) -> Usage:
    """What one pod of ``pod`` takes from ``pool`` while it runs (regular containers)."""
    return pod.derived(_usage, pool)


def _usage(pod: PodSpec, pool: Pool) -> Usage:
    regular, _ = container_asks(pod)
    total = Usage()
    for ask in regular:
        if pool.sharing.hami:
            vgpus = hami_vgpus(ask) if ask.amounts.keys() & (HAMI_RESOURCES | {GPU}) else Fraction(0)
            total += Usage(vgpus, vgpus * hami_memory(ask, pool), vgpus * ask.get(HAMI_CORES))
        else:
            total += Usage(units=ask.get(pool.gpu_resource))
    return total


def usage_key(pod: PodSpec) -> tuple[Any, ...]:
    """What ``usage`` reads of a pod: pods with equal keys take as much from every pool."""
    regular, _ = container_asks(pod)
    return tuple(tuple((name, amount.quantity) for name, amount in ask.amounts.items()) for ask in regular)


def least(usages: Iterable[Usage]) -> Usage:
    """The smallest of each part: what a pod surely takes on whichever of several pools."""
    items = list(usages)
    return Usage(
        min(u.units for u in items), min(u.memory_mib for u in items), min(u.cores for u in items)
    )


def capacity(pool: Pool) -> Usage:
    """All a pool offers in ``Usage`` units."""
    gpus = pool.nodes * pool.gpus
    if pool.sharing.hami:
        return Usage(Fraction(gpus * pool.sharing.replicas), gpus * pool.gpu_memory_mib, gpus * pool.gpu_cores)
    return Usage(units=Fraction(pool.nodes * pool.units_per_node()))


@dataclass(frozen=True)
class Shortfall:
    """Why one node of a pool can never hold a pod: the amount at ``path`` is too much."""

    path: Path
    reason: str


def shortfall(pod: PodSpec, pool: Pool) -> Shortfall | None:
    """Why the pod never fits on one node of ``pool``, or None when it does.

    MIG resources are left to GS024. HAMi (its chart's values.yaml): each vGPU of a container on its
    own GPU, memory per vGPU up to the card's × deviceMemoryScaling, cores up to 100 % ×
    deviceCoreScaling, vGPUs per node up to GPUs × splitCount. Other pools: GPUs (× the
    time-slicing or MPS replicas) per node.
    """
    asks = ask_signature(pod)
    known = pool.shortfalls
    if asks not in known:
        known[asks] = _shortfall(pod, pool)
    return known[asks]


def ask_signature(pod: PodSpec) -> str:
    """All that ``shortfall`` reads of a pod (its containers' GPU amounts, where they are
    written, the containers' names): pods with the same signature fit the same pools alike.
    A string: it keeps its hash, where a tuple of fractions computes it at every lookup."""
    return pod.derived(_ask_signature)


def _ask_signature(pod: PodSpec) -> str:
    return repr([[(ask.container.name, *ask.amounts.values()) for ask in asks] for asks in container_asks(pod)])


def _shortfall(pod: PodSpec, pool: Pool) -> Shortfall | None:
    regular, init = container_asks(pod)
    asks = regular + init
    for ask in asks:
        for amount in ask.amounts.values():
            if mig_profile(amount.name) is None and amount.name not in pool.resources:
                offered = ", ".join(sorted(r for r in pool.resources if mig_profile(r) is None)) or "no GPU resource"
                return Shortfall(amount.path, f"pool {pool.name} advertises no {amount.name} (it offers {offered})")
    if pool.sharing.hami:
        return _hami_shortfall(pod, pool, asks)
    name = pool.gpu_resource
    total = pod_total(pod, name)
    if total > pool.units_per_node():
        path = _tipping(pod, name, pool.units_per_node())
        replicas = f" × {pool.sharing.replicas} {pool.sharing.strategy} replicas" if pool.sharing.replicas > 1 else ""
        return Shortfall(
            path,
            f"it asks for {number_text(total)} {name} on one node, pool {pool.name} has "
            f"{pool.gpus} × {pool.gpu.product}{replicas} per node",
        )
    return None


def _hami_shortfall(pod: PodSpec, pool: Pool, asks: tuple[ContainerAsk, ...]) -> Shortfall | None:
    card = f"pool {pool.name}'s {pool.gpu.product} has"
    for ask in asks:
        if GPU in ask.amounts and ask.get(GPU) > pool.gpus:
            return Shortfall(
                ask.amounts[GPU].path,
                f"container {ask.container.name} asks for {number_text(ask.get(GPU))} vGPUs, each on its own "
                f"GPU, pool {pool.name} has {pool.gpus} GPU(s) per node",
            )
        if HAMI_MEMORY_MIB in ask.amounts and ask.get(HAMI_MEMORY_MIB) > pool.gpu_memory_mib:
            scaling = pool.sharing.memory_scaling
            scaled = f" × deviceMemoryScaling {scaling}" if scaling != 1 else ""
            return Shortfall(
                ask.amounts[HAMI_MEMORY_MIB].path,
                f"container {ask.container.name} asks for {number_text(ask.get(HAMI_MEMORY_MIB))} MiB per vGPU, "
                f"{card} {pool.gpu.memory_mib} MiB{scaled}",
            )
        if HAMI_MEMORY_PERCENT in ask.amounts and ask.get(HAMI_MEMORY_PERCENT) > 100:
            return Shortfall(
                ask.amounts[HAMI_MEMORY_PERCENT].path,
                f"container {ask.container.name} asks for more than 100 % of a GPU's memory",
            )
        if HAMI_CORES in ask.amounts and ask.get(HAMI_CORES) > pool.gpu_cores:
            return Shortfall(
                ask.amounts[HAMI_CORES].path,
                f"container {ask.container.name} asks for {number_text(ask.get(HAMI_CORES))} % of a GPU's cores, "
                f"{card} {number_text(pool.gpu_cores)} %",
            )
    vgpus = pod_total(pod, GPU)
    if vgpus > pool.units_per_node():
        path = _tipping(pod, GPU, pool.units_per_node())
        return Shortfall(
            path,
            f"it asks for {number_text(vgpus)} vGPUs on one node, pool {pool.name} has {pool.gpus} GPU(s) × "
            f"splitCount {pool.sharing.replicas}",
        )
    return None


def _tipping(pod: PodSpec, name: str, limit: int) -> Path:
    """Where the pod's ``name`` goes over ``limit``: the container whose request tips the sum of
    the regular containers over, else the init container that alone asks for more."""
    regular, init = container_asks(pod)
    running = Fraction(0)
    for ask in regular:
        running += ask.get(name)
        if running > limit and name in ask.amounts:
            return ask.amounts[name].path
    return next(ask.amounts[name].path for ask in init if ask.get(name) > limit)


def placeable_pools(pod: PodSpec, cluster: ClusterFacts) -> tuple[Pool, ...]:
    """Pools where the pod can run at all: reachable by labels and taints, and one node fits it."""
    return pod.derived(_placeable_pools, cluster)


def _placeable_pools(pod: PodSpec, cluster: ClusterFacts) -> tuple[Pool, ...]:
    return tuple(pool for pool in reachable_pools(pod, cluster) if shortfall(pod, pool) is None)


def number_text(value: Fraction) -> str:
    """A quantity for a message: 8000, 0.5."""
    return str(value.numerator) if value.denominator == 1 else f"{float(value):g}"


def mig_profile(resource: str) -> str | None:
    """``nvidia.com/mig-1g.10gb`` (or ``…+me``) → ``1g.10gb``; None for other resources."""
    if not resource.startswith(MIG_PREFIX):
        return None
    return resource[len(MIG_PREFIX):].split("+", 1)[0]

