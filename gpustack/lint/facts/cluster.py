"""The cluster the manifests land on, as the rules see it: facts from a spec (``--spec``).

``ClusterFacts`` is plain frozen data, so the rules that read it import no pydantic; only
``load_cluster`` reads the spec (with ``gpustack.spec``), and only when a spec is named.

Per node pool: its GPU's catalogue facts, GPUs per node, node count, the node labels the
stack's own discovery produces (DESIGN §10: gpustack's NFD labels ``pci-10de.present`` with
``deviceLabelFields: [vendor]``; GFD the ``nvidia.com/gpu.*`` labels; ``nvidia.com/gpu.present``
only under the GPU Operator) plus the pool's labels, its taints, how its GPUs are shared and
where its driver comes from. The pod-side helpers below answer what the context rules ask:
which pools a pod can land on, and what one of its pods takes from a pool.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import astuple, dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Literal

from gpustack.lint.facts.gpu import HAMI_CORES, HAMI_MEMORY, gpu_requests
from gpustack.lint.facts.podspec import LabelTest, node_label_tests
from gpustack.lint.model import Container, Path, PodSpec, computed_once

if TYPE_CHECKING:
    from gpustack.lint.input.cache import Cache
    from gpustack.spec.featuregates import Feature
    from gpustack.spec.models import GpuStack
    from gpustack.spec.models.cluster import NodePool

GPU = "nvidia.com/gpu"
SHARED_GPU = "nvidia.com/gpu.shared"
HAMI_MEMORY_MIB, HAMI_MEMORY_PERCENT = HAMI_MEMORY  # nvidia.com/gpumem, nvidia.com/gpumem-percentage
MIG_PREFIX = "nvidia.com/mig-"
HAMI_RESOURCES = frozenset({*HAMI_MEMORY, HAMI_CORES})

# Node labels (upstream-facts §10). gpustack's NFD uses deviceLabelFields [vendor].
NFD_GPU_LABEL = "feature.node.kubernetes.io/pci-10de.present"
PCI_LABEL_PREFIX = "feature.node.kubernetes.io/pci-"
GPU_PRESENT_LABEL = "nvidia.com/gpu.present"  # set by the GPU Operator only
# GFD labels the context rules judge; other nvidia.com/ keys are left open.
GFD_LABELS = frozenset(
    {
        "nvidia.com/gpu.product",
        "nvidia.com/gpu.family",
        "nvidia.com/gpu.memory",
        "nvidia.com/gpu.count",
        "nvidia.com/gpu.mode",
        "nvidia.com/gpu.machine",
        "nvidia.com/gpu.compute.major",
        "nvidia.com/gpu.compute.minor",
        "nvidia.com/gpu.replicas",
        "nvidia.com/gpu.sharing-strategy",
        "nvidia.com/mig.capable",
        "nvidia.com/mps.capable",
        "nvidia.com/vgpu.present",
    }
)

SharingStrategy = Literal["none", "hami", "timeSlicing", "mps"]
DriverSource = Literal["host", "operator"]


@dataclass(frozen=True)
class GpuFacts:
    """A GPU SKU from the catalogue (``specs/gpus.yaml``)."""

    model: str  # the spec's name, e.g. L4
    product: str  # GFD's nvidia.com/gpu.product, e.g. NVIDIA-L4
    family: str
    memory_mib: int
    mig_profiles: tuple[str, ...]
    profiling: bool  # DCGM_FI_PROF_* available
    pci_class: str  # 0300 (VGA, GeForce) or 0302 (3D controller)
    compute_capability: str
    datacenter: bool

    @property
    def mig_capable(self) -> bool:
        return bool(self.mig_profiles)


TOLERATION_FIELDS = ("effect", "key", "operator", "value")  # what Taint.tolerated_by reads


@dataclass(frozen=True)
class Taint:
    key: str
    value: str | None
    effect: str  # NoSchedule | PreferNoSchedule | NoExecute

    def __str__(self) -> str:
        return f"{self.key}{'=' + self.value if self.value else ''}:{self.effect}"

    @property
    def repels(self) -> bool:
        """Whether the scheduler keeps pods without a toleration off the node."""
        return self.effect in ("NoSchedule", "NoExecute")

    def tolerated_by(self, toleration: Mapping[str, Any]) -> bool:
        """Kubernetes' ``Toleration.ToleratesTaint``: effect, then key and operator."""
        effect = toleration.get("effect")
        if effect and effect != self.effect:
            return False
        key = toleration.get("key")
        operator = toleration.get("operator") or "Equal"
        if not key:
            return operator == "Exists"  # an empty key with Exists tolerates every taint
        if key != self.key:
            return False
        if operator == "Exists":
            return True
        return operator == "Equal" and str(toleration.get("value") or "") == (self.value or "")


@dataclass(frozen=True)
class Sharing:
    """How a pool's GPUs are split: HAMi vGPUs, time-slicing or MPS replicas, or not at all."""

    strategy: SharingStrategy = "none"
    replicas: int = 1  # HAMi splitCount, time-slicing/MPS replicas
    memory_scaling: float = 1.0  # HAMi deviceMemoryScaling
    core_scaling: float = 1.0  # HAMi deviceCoreScaling
    renamed: bool = False  # time-slicing/MPS renameByDefault: nvidia.com/gpu.shared

    @property
    def hami(self) -> bool:
        return self.strategy == "hami"


@dataclass(frozen=True)
class Pool:
    """A node pool: ``nodes`` nodes with ``gpus`` GPUs each."""

    name: str
    nodes: int
    gpus: int
    gpu: GpuFacts
    labels: Mapping[str, str | None]  # node labels; None: present, value not known from the spec
    taints: tuple[Taint, ...]
    sharing: Sharing
    driver_source: DriverSource
    resources: frozenset[str]  # GPU extended resources the pool's nodes advertise

    @computed_once
    def shortfalls(self) -> dict[str, Shortfall | None]:
        """``shortfall`` by the pods' ``ask_signature``: thousands of pods ask alike."""
        return {}

    def __str__(self) -> str:
        return f"{self.name} ({self.gpus} × {self.gpu.product} per node)"

    @property
    def gpu_memory_mib(self) -> Fraction:
        """Memory of one GPU as its pods share it (HAMi: × deviceMemoryScaling)."""
        return Fraction(self.gpu.memory_mib) * Fraction(str(self.sharing.memory_scaling))

    @property
    def gpu_cores(self) -> Fraction:
        """HAMi cores (percent) of one GPU, × deviceCoreScaling."""
        return 100 * Fraction(str(self.sharing.core_scaling))

    @property
    def gpu_resource(self) -> str:
        """The resource a whole (or time-sliced) GPU is requested by on this pool."""
        return SHARED_GPU if self.sharing.renamed else GPU

    def units_per_node(self) -> int:
        """``gpu_resource`` units one node advertises: GPUs × replicas (HAMi: vGPUs)."""
        return self.gpus * self.sharing.replicas

    def untolerated(self, tolerations: Iterable[Mapping[str, Any]]) -> tuple[Taint, ...]:
        """The taints that keep a pod with ``tolerations`` off the pool's nodes."""
        tolerations = list(tolerations)
        return tuple(t for t in self.taints if t.repels and not any(t.tolerated_by(tol) for tol in tolerations))

    def offers_mig(self, profile: str) -> bool:
        return profile in self.gpu.mig_profiles


@dataclass(frozen=True)
class ClusterFacts:
    """What a spec says about the cluster: frozen, no pydantic."""

    spec_file: str
    distribution: str
    minor: int  # Kubernetes 1.<minor>
    gates: Mapping[str, bool]  # effective feature gates: the version's defaults, then the spec's
    pools: tuple[Pool, ...]
    nvidia_default_runtime: bool
    gpu_operator: bool
    mig_strategy: str  # none | single | mixed
    nfd: bool
    gfd: bool
    label_keys: frozenset[str]  # label keys the spec's pools set themselves

    def plain(self) -> tuple[Any, ...]:
        """The facts as plain data (``from_plain``), for the lint cache."""
        return astuple(self)

    @classmethod
    def from_plain(cls, plain: tuple[Any, ...]) -> ClusterFacts:
        """Facts from ``plain`` data; another shape raises TypeError or ValueError."""
        *head, pools, nvidia_default_runtime, gpu_operator, mig_strategy, nfd, gfd, label_keys = plain
        return cls(
            *head,
            tuple(_pool_from_plain(*pool) for pool in pools),
            nvidia_default_runtime,
            gpu_operator,
            mig_strategy,
            nfd,
            gfd,
            label_keys,
        )

    @property
    def kubernetes_version(self) -> str:
        return f"1.{self.minor}"

    @property
    def nodes(self) -> int:
        return sum(pool.nodes for pool in self.pools)

    def gate(self, name: str) -> bool:
        return self.gates.get(name, False)

    @computed_once
    def placements(self) -> dict[Any, tuple[Pool, ...]]:
        """The pools of each node selection, and of each selection with tolerations, as pods
        ask for them (``selected_pools``, ``reachable_pools``): thousands of pods share a
        few, and matching each pod against every pool was most of a lint with a spec."""
        return {}

    def judges_label(self, key: str) -> bool:
        """Whether the spec knows every node's value of ``key`` (else any value may exist)."""
        return (
            key in GFD_LABELS
            or key == GPU_PRESENT_LABEL
            or key.startswith(PCI_LABEL_PREFIX)
            or key == GPU  # a resource name, never set as a label: only a pool's own labels carry it
            or key in self.label_keys
        )


def _pool_from_plain(
    name: str, nodes: int, gpus: int, gpu: Any, labels: Any, taints: Any, sharing: Any, source: Any, resources: Any
) -> Pool:
    return Pool(
        name, nodes, gpus, GpuFacts(*gpu), labels, tuple(Taint(*taint) for taint in taints), Sharing(*sharing), source, resources
    )


# --- pods on pools ---------------------------------------------------------------------------


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
            if not test.required or not cluster.judges_label(test.key):
                continue  # preferences never block; labels the spec does not know stay open
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

    MIG resources are left to GS024. HAMi (upstream-facts §7): each vGPU of a container on its
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


# --- from a spec -----------------------------------------------------------------------------


def load_cluster(path: str, cache: Cache | None = None) -> ClusterFacts:
    """Read a spec with ``load_spec`` (a bad spec raises ``SpecError``, located) into facts,
    which ``cache`` keeps by the spec's content: reading a spec imports and runs pydantic,
    0.2 s, more than the rest of a one-file lint."""
    key = cache.cluster_key(path) if cache is not None else None
    stored = cache.get("cluster", key) if cache is not None and key is not None else None
    if stored is not None:
        try:
            return ClusterFacts.from_plain(stored)
        except (TypeError, ValueError):  # an entry of another shape: read the spec again
            pass
    from gpustack.spec.load import load_spec

    loaded = load_spec(path, render=False)
    facts = facts_of(loaded.stack, loaded.file)
    if cache is not None and key is not None:
        cache.put("cluster", key, facts.plain())
    return facts


def facts_of(stack: GpuStack, file: str) -> ClusterFacts:
    from gpustack.spec.pools import hami_pools

    spec = stack.spec
    hami = {pool.name for pool in hami_pools(stack)}
    operator = spec.gpuOperator.enabled
    gfd = spec.devicePlugin.gfd.enabled and (operator or spec.devicePlugin.enabled)
    gates = effective_gates(stack)
    # The standalone chart's GFD shares the device plugin's affinity, which keeps off HAMi's
    # pools (render/device_plugin.py); the operator's GFD runs on every GPU node.
    pools = tuple(
        _pool(stack, pool, gates, hami=pool.name in hami, gfd=gfd and (operator or pool.name not in hami))
        for pool in spec.nodePools
    )
    return ClusterFacts(
        spec_file=file,
        distribution=spec.cluster.distribution,
        minor=spec.cluster.minor,
        gates=gates,
        pools=pools,
        nvidia_default_runtime=spec.cluster.nvidiaDefaultRuntime,
        gpu_operator=operator,
        mig_strategy=spec.devicePlugin.migStrategy,
        nfd=spec.nfd.enabled,
        gfd=gfd,
        label_keys=frozenset(key for pool in spec.nodePools for key in pool.labels),
    )


def effective_gates(stack: GpuStack) -> dict[str, bool]:
    """Every known gate at the cluster's version (absent in that version: off), then what the
    rendered cluster turns on for the spec's own DRA objects, then the spec's ``featureGates``."""
    from gpustack.spec.featuregates import FEATURE_GATES, GATES

    cluster = stack.spec.cluster
    gates: dict[str, bool] = {}
    for name, gate in GATES.items():
        state = gate.state(cluster.minor)
        gates[name] = state is not None and state.default
    features: list[Feature] = []
    if stack.spec.dra.enabled:
        features.append("dra")
        if any(template.capacity for template in stack.spec.dra.claimTemplates):
            features.append("dra-consumable-capacity")
    gates.update({name: True for feature in features for name in FEATURE_GATES[feature]})
    gates.update(cluster.featureGates)
    return gates


def _pool(stack: GpuStack, pool: NodePool, gates: Mapping[str, bool], *, hami: bool, gfd: bool) -> Pool:
    from gpustack.spec.pools import gpu_model

    model = gpu_model(pool)
    gpu = GpuFacts(
        model=pool.gpu.model,
        product=model.product,
        family=model.architecture,
        memory_mib=model.memoryMiB,
        mig_profiles=tuple(model.migProfiles),
        profiling=model.dcgmProfiling,
        pci_class=model.pciClass,
        compute_capability=model.computeCapability,
        datacenter=model.segment == "datacenter",
    )
    sharing = _sharing(stack, pool, hami=hami)
    resources = _resources(stack, pool, gpu, sharing, gates)
    labels = {**_discovered_labels(stack, pool, gpu, sharing, gfd=gfd), **pool.labels}
    taints = tuple(Taint(t.key, t.value, t.effect) for t in pool.taints)
    return Pool(pool.name, pool.count, pool.gpu.count, gpu, labels, taints, sharing, pool.driver.source, resources)


def _sharing(stack: GpuStack, pool: NodePool, *, hami: bool) -> Sharing:
    from gpustack.spec.partitioning import pool_sharing

    if hami:
        settings = stack.spec.sharing.hami
        return Sharing("hami", settings.splitCount, settings.memoryScaling, settings.coreScaling)
    shared = pool_sharing(stack, pool)
    if shared.strategy == "none":
        return Sharing()
    return Sharing(shared.strategy, shared.replicas, renamed=shared.renameByDefault)


def _resources(
    stack: GpuStack, pool: NodePool, gpu: GpuFacts, sharing: Sharing, gates: Mapping[str, bool]
) -> frozenset[str]:
    """GPU extended resources a pool's nodes advertise (upstream-facts §1, §6, §7).

    A pool with a MIG layout of its own advertises exactly its profiles (mixed) or its MIG
    devices as nvidia.com/gpu (single); the cluster-wide mixed strategy any profile of the GPU.
    """
    from gpustack.spec.partitioning import pool_mig_strategy

    if sharing.hami:
        return frozenset({GPU, *HAMI_RESOURCES})
    spec = stack.spec
    found: set[str] = set()
    if spec.devicePlugin.enabled:
        mixed = pool_mig_strategy(stack, pool) == "mixed"
        if pool.mig is None or not mixed:
            found.add(SHARED_GPU if sharing.renamed else GPU)
        if mixed:
            profiles = pool.mig.layout if pool.mig is not None else gpu.mig_profiles
            found.update(MIG_PREFIX + profile for profile in profiles)
    if spec.dra.enabled and gates.get("DRAExtendedResource"):
        found.add(GPU)  # both DRA drivers' DeviceClasses set extendedResourceName nvidia.com/gpu
    return frozenset(found)


def _discovered_labels(
    stack: GpuStack, pool: NodePool, gpu: GpuFacts, sharing: Sharing, *, gfd: bool
) -> dict[str, str | None]:
    """The labels NFD and GFD put on a pool's nodes as this stack deploys them."""
    from gpustack.spec.partitioning import pool_mig_strategy

    labels: dict[str, str | None] = {}
    if stack.spec.nfd.enabled:
        labels[NFD_GPU_LABEL] = "true"
    if stack.spec.gpuOperator.enabled:
        labels[GPU_PRESENT_LABEL] = "true"
    if not gfd:
        return labels
    major, minor = gpu.compute_capability.split(".")
    product: str | None = gpu.product
    if sharing.strategy in ("timeSlicing", "mps") and not sharing.renamed:
        product = f"{gpu.product}-SHARED"
    if gpu.mig_capable and pool_mig_strategy(stack, pool) == "single":
        product = None  # -MIG-<profile> suffix depends on the node's MIG layout
    labels.update(
        {
            "nvidia.com/gpu.product": product,
            "nvidia.com/gpu.family": gpu.family,
            "nvidia.com/gpu.memory": str(gpu.memory_mib),
            "nvidia.com/gpu.count": str(pool.gpu.count),
            # GeForce cards with a display attached report graphics (seed 001 §9).
            "nvidia.com/gpu.mode": "compute" if gpu.datacenter else None,
            "nvidia.com/gpu.machine": None,  # the DMI product name, e.g. g6.2xlarge
            "nvidia.com/gpu.compute.major": major,
            "nvidia.com/gpu.compute.minor": minor,
            "nvidia.com/gpu.replicas": str(sharing.replicas if sharing.strategy in ("timeSlicing", "mps") else 1),
            "nvidia.com/gpu.sharing-strategy": {"timeSlicing": "time-slicing", "mps": "mps"}.get(
                sharing.strategy, "none"
            ),
            "nvidia.com/mig.capable": str(gpu.mig_capable).lower(),
            "nvidia.com/mps.capable": str(sharing.strategy == "mps").lower(),
            "nvidia.com/vgpu.present": "false",
        }
    )
    return labels


def describe_label(key: str, cluster: ClusterFacts) -> str:
    """What the pools carry for ``key``, for a message: ``g6: NVIDIA-L4; a100: absent``."""
    parts = []
    for pool in cluster.pools:
        if key not in pool.labels:
            parts.append(f"{pool.name}: absent")
        else:
            value = pool.labels[key]
            parts.append(f"{pool.name}: {value if value is not None else 'any value'}")
    return "; ".join(parts)
