"""``ClusterFacts`` from a spec (``--spec``): the only place the lint reads a spec.

``load_cluster`` reads it with ``gpustack.spec`` (pydantic, imported lazily, and only when a
spec is named) and keeps the facts in the lint cache by the spec's content; ``facts_of``
turns a loaded stack into pools with the labels, resources and sharing its render deploys.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from gpustack.lint.facts.pools import (
    GPU,
    GPU_PRESENT_LABEL,
    HAMI_RESOURCES,
    MIG_PREFIX,
    NFD_GPU_LABEL,
    SHARED_GPU,
    ClusterFacts,
    GpuFacts,
    Pool,
    Sharing,
    Taint,
)

if TYPE_CHECKING:
    from gpustack.lint.input.cache import Cache
    from gpustack.spec.featuregates import Feature
    from gpustack.spec.gpu_catalogue import GpuModel
    from gpustack.spec.models import GpuStack
    from gpustack.spec.models.cluster import NodePool


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
        device_classes=_device_classes(stack),
    )


def _device_classes(stack: GpuStack) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The DeviceClasses the spec adds, with their selectors as render writes them."""
    from gpustack import charts
    from gpustack.spec.deviceclasses import class_selectors

    dra = stack.spec.dra
    if not dra.enabled or not dra.deviceClasses:
        return ()
    driver = str(charts.dra_driver_chart(dra.driver).dra_driver)
    return tuple((spec.name, tuple(class_selectors(spec, driver))) for spec in dra.deviceClasses)


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

    gpu = catalogue_facts(pool.gpu.model, gpu_model(pool))
    sharing = _sharing(stack, pool, hami=hami)
    resources = _resources(stack, pool, gpu, sharing, gates)
    labels = {**_discovered_labels(stack, pool, gpu, sharing, gfd=gfd), **pool.labels}
    taints = tuple(Taint(t.key, t.value, t.effect) for t in pool.taints)
    layout = dict(pool.mig.layout) if pool.mig is not None else {}
    return Pool(
        pool.name, pool.count, pool.gpu.count, gpu, labels, taints, sharing, pool.driver.source, resources,
        pool.driver.fabricManager, layout,
    )


def catalogue_facts(name: str, model: GpuModel) -> GpuFacts:
    """The rules' facts of a catalogue entry (``specs/gpus.yaml``), under the name ``name``."""
    return GpuFacts(
        model=name,
        product=model.product,
        family=model.architecture,
        memory_mib=model.memoryMiB,
        mig_profiles=tuple(model.migProfiles),
        profiling=model.dcgmProfiling,
        pci_class=model.pciClass,
        compute_capability=model.computeCapability,
        datacenter=model.segment == "datacenter",
        nvswitch_board_gpus=model.nvswitchBoardGpus,
    )


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
    """GPU extended resources a pool's nodes advertise (device plugin, DRA drivers, HAMi).

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
            # GeForce cards with a display attached report graphics.
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
