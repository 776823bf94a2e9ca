"""The cluster the manifests land on, as the rules see it: node pools and their facts.

``ClusterFacts`` is plain frozen data, so the rules that read it import no pydantic
(``facts.from_spec`` builds it from a spec); ``plain``/``from_plain`` are its lint-cache form.

Per node pool: its GPU's catalogue facts, GPUs per node, node count, the node labels the
stack's own discovery produces (gpustack's NFD labels ``pci-10de.present`` with
``deviceLabelFields: [vendor]``; GFD the ``nvidia.com/gpu.*`` labels; ``nvidia.com/gpu.present``
only under the GPU Operator) plus the pool's labels, its taints, how its GPUs are shared and
where its driver comes from.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import astuple, dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Literal

from gpustack.lint.facts.quantities import HAMI_CORES, HAMI_MEMORY
from gpustack.lint.model import computed_once

if TYPE_CHECKING:
    from gpustack.lint.facts.scheduling import Shortfall

GPU = "nvidia.com/gpu"
SHARED_GPU = "nvidia.com/gpu.shared"
HAMI_MEMORY_MIB, HAMI_MEMORY_PERCENT = HAMI_MEMORY  # nvidia.com/gpumem, nvidia.com/gpumem-percentage
MIG_PREFIX = "nvidia.com/mig-"
HAMI_RESOURCES = frozenset({*HAMI_MEMORY, HAMI_CORES})

# Node labels NFD and GFD set. gpustack's NFD uses deviceLabelFields [vendor].
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
    nvswitch_board_gpus: int | None = None  # the catalogue's nvswitchBoardGpus

    @property
    def mig_capable(self) -> bool:
        return bool(self.mig_profiles)

    def on_nvswitch(self, gpus_per_node: int) -> bool:
        """As ``GpuModel.on_nvswitch``: a node with that many of this part is an NVSwitch board."""
        return self.nvswitch_board_gpus is not None and gpus_per_node >= self.nvswitch_board_gpus


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


def untolerated(taints: Iterable[Taint], tolerations: Iterable[Mapping[str, Any]]) -> tuple[Taint, ...]:
    """The taints that keep a pod with ``tolerations`` off a node carrying ``taints``."""
    tolerations = list(tolerations)
    return tuple(t for t in taints if t.repels and not any(t.tolerated_by(tol) for tol in tolerations))


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
    fabric_manager: bool = True  # the spec's driver.fabricManager: host steps install it on NVSwitch boards
    mig_layout: Mapping[str, int] = field(default_factory=dict)  # MIG profile -> instances per GPU (the pool's own layout)

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
        return untolerated(self.taints, tolerations)

    def offers_mig(self, profile: str) -> bool:
        return profile in self.gpu.mig_profiles

    def mig_per_node(self, profile: str) -> int | None:
        """Instances of ``profile`` one node has, where the pool's own MIG layout says; else None."""
        return self.mig_layout.get(profile, 0) * self.gpus if self.mig_layout else None


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
    # The DeviceClasses the spec adds (dra.deviceClasses), each with its CEL selectors as rendered.
    device_classes: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def plain(self) -> tuple[Any, ...]:
        """The facts as plain data (``from_plain``), for the lint cache."""
        return astuple(self)

    @classmethod
    def from_plain(cls, plain: tuple[Any, ...]) -> ClusterFacts:
        """Facts from ``plain`` data; another shape raises TypeError or ValueError."""
        *head, pools, nvidia_default_runtime, gpu_operator, mig_strategy, nfd, gfd, label_keys, device_classes = plain
        return cls(
            *head,
            tuple(_pool_from_plain(*pool) for pool in pools),
            nvidia_default_runtime,
            gpu_operator,
            mig_strategy,
            nfd,
            gfd,
            label_keys,
            tuple((name, tuple(selectors)) for name, selectors in device_classes),
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
    name: str,
    nodes: int,
    gpus: int,
    gpu: Any,
    labels: Any,
    taints: Any,
    sharing: Any,
    source: Any,
    resources: Any,
    fabric_manager: bool,
    mig_layout: Any,
) -> Pool:
    return Pool(
        name,
        nodes,
        gpus,
        GpuFacts(*gpu),
        labels,
        tuple(Taint(*taint) for taint in taints),
        Sharing(*sharing),
        source,
        resources,
        fabric_manager,
        mig_layout,
    )


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
