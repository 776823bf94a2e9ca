"""Cross-field checks: combinations the schema alone cannot refuse.

Each check yields ``(path, message)``; the message names what to change. The loader turns
paths into ``file:line:col``.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterator, Sequence

from gpustack.spec.featuregates import gate_problems
from gpustack.spec.gpu_catalogue import GpuModel, load_catalogue
from gpustack.spec.labelling import SECONDS_PER_NODE, duration_seconds, nodes, shortest_seconds
from gpustack.spec.models import GpuStack
from gpustack.spec.models.cluster import Mps, NodePool, Taint
from gpustack.spec.partitioning import (
    COMPUTE_SLICES,
    DEVICE_PLUGIN_CONFIG_LABEL,
    MEMORY_SLICES,
    MIG_CONFIG_LABEL,
    mig_pools,
    mig_slices,
)
from gpustack.suggest import did_you_mean

Finding = tuple[tuple[str | int, ...], str]
DRA_MIN_MINOR = 34  # resource.k8s.io/v1 is served from Kubernetes 1.34
# vLLM's --gpu-memory-utilization ceiling gpustack renders: leaves room for the CUDA context.
MAX_GPU_MEMORY_UTILIZATION = 0.95


def gpu_model(pool: NodePool) -> GpuModel:
    """The catalogue facts of a pool's GPU (or its custom entry). Call after ``check``."""
    if pool.gpu.custom is not None:
        return pool.gpu.custom
    resolved = load_catalogue().resolve(pool.gpu.model)
    if resolved is None:
        raise KeyError(pool.gpu.model)
    return resolved[1]


def hami_pools(stack: GpuStack) -> list[NodePool]:
    """Pools served by HAMi (all pools unless ``sharing.hami.pools`` names some)."""
    hami = stack.spec.sharing.hami
    if not hami.enabled:
        return []
    return [p for p in stack.spec.nodePools if hami.pools is None or p.name in hami.pools]


def hami_pool_labels(stack: GpuStack) -> dict[str, str]:
    """Labels that single out HAMi's pools: ``{}`` when HAMi serves every pool, else the labels
    all its pools carry (``check_hami`` makes sure no other pool carries them all)."""
    served = hami_pools(stack)
    if not served or len(served) == len(stack.spec.nodePools):
        return {}
    common = set(served[0].labels.items())
    for pool in served[1:]:
        common &= set(pool.labels.items())
    return dict(sorted(common))


def _pool_path(index: int, *rest: str | int) -> tuple[str | int, ...]:
    return ("spec", "nodePools", index, *rest)


def check_gpu_models(stack: GpuStack) -> Iterator[Finding]:
    catalogue = load_catalogue()
    for i, pool in enumerate(stack.spec.nodePools):
        if pool.gpu.custom is None and catalogue.resolve(pool.gpu.model) is None:
            hint = did_you_mean(catalogue.suggestions(pool.gpu.model))
            yield _pool_path(i, "gpu", "model"), (
                f"unknown GPU model {pool.gpu.model!r}; {hint + ' ' if hint else ''}`gpustack gpus` lists "
                "the catalogue. For another GPU add gpu.custom with its facts (see `gpustack schema`)"
            )


NVIDIA_PCI_VENDOR = "10de"
# The GPU Operator skips its driver container on nodes with this label set to false.
SKIP_DRIVER_LABEL = "nvidia.com/gpu.deploy.driver"


def check_vendor(stack: GpuStack) -> Iterator[Finding]:
    """Everything gpustack renders (device plugin, GPU Operator, DCGM, HAMi) is NVIDIA's."""
    for i, pool in enumerate(stack.spec.nodePools):
        custom = pool.gpu.custom
        if custom is not None and custom.pciVendor != NVIDIA_PCI_VENDOR:
            yield _pool_path(i, "gpu", "custom", "pciVendor"), (
                f"pool {pool.name!r} has a GPU of PCI vendor {custom.pciVendor}, not NVIDIA ({NVIDIA_PCI_VENDOR}): "
                "gpustack renders NVIDIA's stack only (driver, device plugin, GPU Operator, DCGM); deploy that "
                "vendor's own device plugin and leave this pool out of the spec"
            )


def check_labelling_interval(stack: GpuStack) -> Iterator[Finding]:
    """A relabel interval the spec sets must suit the fleet (what `gpustack lint` GS021 asks)."""
    wanted = shortest_seconds(stack)
    for path, value in (
        (("spec", "nfd", "sleepInterval"), stack.spec.nfd.sleepInterval),
        (("spec", "devicePlugin", "gfd", "sleepInterval"), stack.spec.devicePlugin.gfd.sleepInterval),
    ):
        if value is not None and 0 < duration_seconds(value) < wanted:
            yield path, (
                f"{value} relabels {nodes(stack)} nodes too often for etcd ({SECONDS_PER_NODE} s per node): "
                f"use at least {wanted:.0f}s, or leave it out for a default that suits the fleet"
            )


def check_unique_pools(stack: GpuStack) -> Iterator[Finding]:
    seen: set[str] = set()
    pools = [("nodePools", i, p.name) for i, p in enumerate(stack.spec.nodePools)]
    pools += [("systemPools", i, p.name) for i, p in enumerate(stack.spec.systemPools)]
    for section, i, name in pools:
        if name in seen:
            yield ("spec", section, i, "name"), f"node pool {name!r} is defined twice; pool names must be unique"
        seen.add(name)


def repels(taints: Sequence[Taint]) -> bool:
    """Whether pods without tolerations stay off nodes with these taints."""
    return any(t.effect in ("NoSchedule", "NoExecute") for t in taints)


def check_cluster(stack: GpuStack) -> Iterator[Finding]:
    cluster = stack.spec.cluster
    path = ("spec", "cluster")
    if cluster.kubeadmVersion and cluster.distribution != "kubeadm":
        yield (*path, "kubeadmVersion"), "kubeadmVersion is for distribution kubeadm; K3s takes k3sVersion"
    if cluster.kubeadmVersion and cluster.kubeadmVersion.split(".")[1] != str(cluster.minor):
        yield (*path, "kubeadmVersion"), (
            f"kubeadmVersion {cluster.kubeadmVersion} is not of Kubernetes {cluster.kubernetesVersion}: "
            "make the two agree"
        )
    if cluster.k3sVersion and cluster.distribution != "k3s":
        yield (*path, "k3sVersion"), "k3sVersion is for distribution k3s; kubeadm takes kubeadmVersion"
    k3s_minor = re.match(r"v1\.([0-9]+)\.[0-9]+", cluster.k3sVersion or "")
    if cluster.k3sVersion and k3s_minor is None:
        yield (*path, "k3sVersion"), (
            f"k3sVersion {cluster.k3sVersion!r} is not a K3s release such as v1.36.4+k3s1 (the install script's "
            "INSTALL_K3S_VERSION)"
        )
    elif k3s_minor is not None and k3s_minor.group(1) != str(cluster.minor):
        yield (*path, "k3sVersion"), (
            f"k3sVersion {cluster.k3sVersion} is not of Kubernetes {cluster.kubernetesVersion}: make the two agree"
        )
    for i, address in enumerate(cluster.serverAddresses):
        try:
            ipaddress.ip_address(address)
        except ValueError:
            yield (*path, "serverAddresses", i), (
                f"{address!r} is not an IP address; kube-prometheus-stack's endpoints take the servers' IPs"
            )
    if cluster.podSubnet:
        try:
            ipaddress.ip_network(cluster.podSubnet)
        except ValueError:
            yield (*path, "podSubnet"), f"{cluster.podSubnet!r} is not a network in CIDR notation, e.g. 10.244.0.0/16"


def check_system_pool(stack: GpuStack) -> Iterator[Finding]:
    """kubeadm taints its control plane: with every pool tainted, the monitoring stack and the
    NFD master (no GPU tolerations) would stay Pending."""
    spec = stack.spec
    if spec.cluster.distribution != "kubeadm" or not all(repels(p.taints) for p in spec.nodePools):
        return
    if any(not repels(p.taints) for p in spec.systemPools):
        return
    yield ("spec", "nodePools"), (
        "every node pool is tainted and kubeadm taints the control plane, so Prometheus, Grafana, "
        "kube-state-metrics and the NFD master have nowhere to run: add an untainted pool under "
        "spec.systemPools (nodes without GPUs), or leave one pool untainted"
    )


def check_driver_source(stack: GpuStack) -> Iterator[Finding]:
    operator = stack.spec.gpuOperator.enabled
    for i, pool in enumerate(stack.spec.nodePools):
        if pool.driver.source == "operator" and not operator:
            yield _pool_path(i, "driver", "source"), (
                f"pool {pool.name!r} expects the GPU Operator's driver container but "
                "spec.gpuOperator.enabled is false: enable the operator or set driver.source: host"
            )
        if (
            operator
            and pool.driver.source == "host"
            and any(p.driver.source == "operator" for p in stack.spec.nodePools)
            and pool.labels.get(SKIP_DRIVER_LABEL) != "false"
        ):
            yield _pool_path(i, "driver", "source"), (
                f"pool {pool.name!r} keeps its host driver while the GPU Operator deploys its driver container "
                f"to GPU nodes: add `{SKIP_DRIVER_LABEL}: \"false\"` to the pool's labels (and label its nodes "
                "so), or the operator installs a second driver on them"
            )
        if operator and pool.toolkit.version:
            yield _pool_path(i, "toolkit", "version"), (
                f"pool {pool.name!r}: the GPU Operator runs its own toolkit container, so no toolkit package "
                "is installed on the host to pin: remove toolkit.version (the operator's toolkit follows its chart)"
            )
        if pool.driver.source == "operator" and pool.toolkit.mode == "legacy":
            yield _pool_path(i, "toolkit", "mode"), (
                f"pool {pool.name!r}: the GPU Operator installs its own toolkit and injects devices "
                "through CDI (cdi.enabled: true); the host-side legacy OCI hook mode cannot be used "
                "with an operator-managed driver. Use toolkit.mode: auto or cdi"
            )


def check_mig(stack: GpuStack) -> Iterator[Finding]:
    """The cluster-wide migStrategy: pools without MIG then serve whole GPUs, so one MIG pool is enough."""
    plugin = stack.spec.devicePlugin
    if plugin.migStrategy == "none":
        return
    if not any(gpu_model(pool).mig_capable for pool in stack.spec.nodePools):
        yield ("spec", "devicePlugin", "migStrategy"), (
            f"migStrategy {plugin.migStrategy!r} but no pool has MIG-capable GPUs "
            f"({', '.join(sorted({p.gpu.model for p in stack.spec.nodePools}))}): set migStrategy: none or use a "
            "MIG-capable GPU (A100, H100, H200)"
        )
    if mig_pools(stack):
        yield ("spec", "devicePlugin", "migStrategy"), (
            "pools set their own mig (strategy and layout): leave devicePlugin.migStrategy at none"
        )
    if isinstance(plugin.sharing, Mps):
        yield ("spec", "devicePlugin", "sharing", "strategy"), (
            "MPS sharing does not work on MIG devices: use migStrategy: none or sharing strategy timeSlicing"
        )


def check_pool_partitioning(stack: GpuStack) -> Iterator[Finding]:
    """Per-pool sharing and MIG layouts: the device plugin must apply them, the GPU must have the profiles."""
    spec = stack.spec
    hami = {p.name for p in hami_pools(stack)}
    for i, pool in enumerate(spec.nodePools):
        if pool.sharing is not None or pool.mig is not None:
            yield from _pool_config_problems(stack, i, pool, in_hami=pool.name in hami)
        if pool.mig is not None:
            yield from _layout_problems(i, pool)
    strategies = {pool.mig.strategy for pool in mig_pools(stack) if pool.mig is not None}
    if spec.gpuOperator.enabled and len(strategies) > 1:
        yield ("spec", "nodePools"), (
            "the GPU Operator applies one mig.strategy to every node, the pools ask for single and mixed: "
            "use one strategy on every MIG pool"
        )


def _pool_config_problems(stack: GpuStack, i: int, pool: NodePool, *, in_hami: bool) -> Iterator[Finding]:
    field = "sharing" if pool.sharing is not None else "mig"
    if in_hami:
        yield _pool_path(i, field), f"pool {pool.name!r} is served by HAMi, which splits GPUs itself: remove {field}"
    elif not stack.spec.devicePlugin.enabled:
        yield _pool_path(i, field), (
            f"pool {pool.name!r} sets {field}, which NVIDIA's device plugin applies, but devicePlugin.enabled is false"
        )
    if pool.sharing is not None and pool.mig is not None and pool.sharing.strategy != "none":
        yield _pool_path(i, "sharing"), f"pool {pool.name!r} sets both sharing and a MIG layout: choose one"
    for label in (DEVICE_PLUGIN_CONFIG_LABEL, MIG_CONFIG_LABEL):
        value = pool.labels.get(label)
        if value is not None and value != pool.name:
            yield _pool_path(i, "labels", label), (
                f"gpustack names pool {pool.name!r}'s configs after the pool: the label must be {label}={pool.name}"
            )


def _layout_problems(i: int, pool: NodePool) -> Iterator[Finding]:
    assert pool.mig is not None
    model = gpu_model(pool)
    path = _pool_path(i, "mig", "layout")
    if not model.mig_capable:
        yield _pool_path(i, "mig"), f"pool {pool.name!r} has {pool.gpu.model} GPUs, which cannot do MIG"
        return
    compute = memory = 0
    for profile, count in pool.mig.layout.items():
        slices = mig_slices(profile, model)
        if slices is None:
            yield (*path, profile), (
                f"{pool.gpu.model} has no MIG profile {profile!r}; it has {', '.join(model.migProfiles)}"
            )
            return
        if count < 1:
            yield (*path, profile), f"{profile}: the count must be at least 1"
            return
        compute += slices[0] * count
        memory += slices[1] * count
    if compute > COMPUTE_SLICES or memory > MEMORY_SLICES:
        yield path, (
            f"the layout takes {compute} compute and {memory} memory slices of a {pool.gpu.model} "
            f"({model.memoryMiB} MiB), which has {COMPUTE_SLICES} and {MEMORY_SLICES}: use fewer or smaller instances"
        )
    if pool.mig.strategy == "single" and len(pool.mig.layout) > 1:
        yield _pool_path(i, "mig", "strategy"), (
            "strategy single advertises every MIG device as nvidia.com/gpu, so all must be one profile: "
            "use one profile or strategy mixed"
        )


def check_profiling(stack: GpuStack) -> Iterator[Finding]:
    if stack.spec.monitoring.dcgmExporter.profiling != "on":
        return
    geforce = [p.name for p in stack.spec.nodePools if not gpu_model(p).dcgmProfiling]
    if geforce:
        yield ("spec", "monitoring", "dcgmExporter", "profiling"), (
            f"profiling: on, but pools {', '.join(geforce)} have GPUs without DCGM profiling "
            "metrics (GeForce): use profiling: auto, which enables them where they exist"
        )


def check_hami(stack: GpuStack) -> Iterator[Finding]:
    hami = stack.spec.sharing.hami
    if not hami.enabled:
        return
    names = {p.name for p in stack.spec.nodePools}
    for j, name in enumerate(hami.pools or []):
        if name not in names:
            yield ("spec", "sharing", "hami", "pools", j), f"no node pool named {name!r}"
    served = hami_pools(stack)
    # The GPU Operator's device plugin follows devicePlugin.enabled too (upstream-facts §7:
    # "with the GPU Operator, set devicePlugin.enabled=false").
    if stack.spec.devicePlugin.enabled and len(served) == len(stack.spec.nodePools):
        yield ("spec", "devicePlugin", "enabled"), (
            "HAMi and the NVIDIA device plugin would both advertise nvidia.com/gpu on "
            f"the same nodes ({', '.join(p.name for p in served)}): set spec.devicePlugin.enabled: false, "
            "or limit sharing.hami.pools to pools the device plugin does not serve"
        )
    others = [p for p in stack.spec.nodePools if p not in served]
    if served and others:
        labels = hami_pool_labels(stack)
        if not labels or any(labels.items() <= p.labels.items() for p in others):
            yield ("spec", "sharing", "hami", "pools"), (
                "HAMi's device plugin selects its nodes by label: give the pools "
                f"{', '.join(p.name for p in served)} a common entry in nodePools[].labels that pools "
                f"{', '.join(p.name for p in others)} do not carry"
            )
    if stack.spec.devicePlugin.sharing.strategy != "none" and served:
        yield ("spec", "devicePlugin", "sharing", "strategy"), (
            "time-slicing/MPS sharing and HAMi both split GPUs: choose one"
        )


# DeviceClasses the DRA driver charts create themselves (upstream-facts §6): gpustack never
# renders these names, so Helm/Argo CD never fight over their ownership (DESIGN §10).
DRIVER_DEVICE_CLASSES = frozenset(
    {
        "gpu.nvidia.com",
        "mig.nvidia.com",
        "vfio.gpu.nvidia.com",
        "compute-domain-daemon.nvidia.com",
        "compute-domain-default-channel.nvidia.com",
        "hami-core-gpu.project-hami.io",
    }
)


def check_dra(stack: GpuStack) -> Iterator[Finding]:
    dra = stack.spec.dra
    cluster = stack.spec.cluster
    if not dra.enabled:
        if dra.claimTemplates or dra.deviceClasses:
            yield ("spec", "dra", "enabled"), "claimTemplates/deviceClasses are set but dra.enabled is false"
        return
    if cluster.minor < DRA_MIN_MINOR:
        yield ("spec", "cluster", "kubernetesVersion"), (
            f"DRA (resource.k8s.io/v1) needs Kubernetes >= 1.{DRA_MIN_MINOR}; "
            f"the cluster is {cluster.kubernetesVersion}: upgrade or set dra.enabled: false"
        )
    uses_capacity = any(t.capacity for t in dra.claimTemplates)
    if uses_capacity and cluster.featureGates.get("DRAConsumableCapacity") is False:
        yield ("spec", "cluster", "featureGates", "DRAConsumableCapacity"), (
            "claim templates request capacity (cores/memory), which needs DRAConsumableCapacity: "
            "remove the `false` or drop the capacity requests"
        )
    if dra.driver == "nvidia" and uses_capacity:
        for j, template in enumerate(dra.claimTemplates):
            if template.capacity:
                yield ("spec", "dra", "claimTemplates", j, "capacity"), (
                    "NVIDIA's DRA driver publishes no consumable cores/memory capacity; "
                    "use driver: hami for fractional GPUs or remove capacity"
                )
    # Both DRA drivers publish nvidia.com/gpu (extendedResourceName) and allocate the same GPUs
    # as a device plugin on the node (upstream-facts §6 chart warning).
    if stack.spec.devicePlugin.enabled:
        yield ("spec", "devicePlugin", "enabled"), (
            "the DRA driver needs the NVIDIA device plugin disabled on the same nodes "
            "(both allocate the GPUs and publish nvidia.com/gpu): set devicePlugin.enabled: false"
        )
    if stack.spec.sharing.hami.enabled:
        yield ("spec", "sharing", "hami", "enabled"), (
            "HAMi's device plugin and a DRA driver would allocate the same GPUs: "
            "use HAMi's DRA driver (dra.driver: hami) without sharing.hami"
        )
    sources = {p.driver.source for p in stack.spec.nodePools}
    if len(sources) > 1:
        yield ("spec", "dra", "driver"), (
            "the DRA driver chart takes one driver root, but the pools mix host-installed and "
            "GPU Operator drivers: use one driver.source on every pool"
        )
    for j, device_class in enumerate(dra.deviceClasses):
        if device_class.name in DRIVER_DEVICE_CLASSES:
            yield ("spec", "dra", "deviceClasses", j, "name"), (
                f"DeviceClass {device_class.name} is created by the DRA driver chart; "
                "give gpustack's extra class a name of its own"
            )


def check_feature_gates(stack: GpuStack) -> Iterator[Finding]:
    cluster = stack.spec.cluster
    for gate, message in gate_problems(minor=cluster.minor, gates=cluster.featureGates):
        yield ("spec", "cluster", "featureGates", gate), message


def check_workloads(stack: GpuStack) -> Iterator[Finding]:
    pools = {p.name: p for p in stack.spec.nodePools}
    served = {p.name for p in hami_pools(stack)}
    for j, workload in enumerate(stack.spec.workloads):
        if workload.type != "vllm":
            continue
        if workload.pool is not None and workload.pool not in pools:
            yield ("spec", "workloads", j, "pool"), f"no node pool named {workload.pool!r}"
            continue
        pool = pools[workload.pool] if workload.pool else stack.spec.nodePools[0]
        visible = gpu_model(pool).memoryMiB
        if workload.share is not None:
            if not stack.spec.sharing.hami.enabled:
                yield ("spec", "workloads", j, "share"), (
                    "a GPU share (memoryMiB/cores) needs sharing.hami.enabled: true"
                )
            elif pool.name not in served:
                yield ("spec", "workloads", j, "share"), f"pool {pool.name!r} is not served by HAMi"
            if workload.share.memoryMiB > visible:
                yield ("spec", "workloads", j, "share", "memoryMiB"), (
                    f"{workload.share.memoryMiB} MiB is more than the {visible} MiB of a {pool.gpu.model}"
                )
            visible = min(visible, workload.share.memoryMiB)
        if workload.modelMemoryMiB is not None and workload.modelMemoryMiB > MAX_GPU_MEMORY_UTILIZATION * visible:
            yield ("spec", "workloads", j, "modelMemoryMiB"), (
                f"{workload.modelMemoryMiB} MiB does not fit in {MAX_GPU_MEMORY_UTILIZATION:.0%} of the "
                f"{visible} MiB the container sees: raise share.memoryMiB or pick a larger GPU"
            )


CHECKS: tuple[Callable[[GpuStack], Iterator[Finding]], ...] = (
    check_vendor,
    check_unique_pools,
    check_cluster,
    check_driver_source,
    check_mig,
    check_pool_partitioning,
    check_profiling,
    check_hami,
    check_dra,
    check_feature_gates,
    check_labelling_interval,
    check_workloads,
)


# Checks of what the rendered stack needs, not of the cluster it describes: `gpustack lint
# --spec` takes a spec of GPU pools alone as context.
RENDER_CHECKS: tuple[Callable[[GpuStack], Iterator[Finding]], ...] = (check_system_pool,)


def check(stack: GpuStack, *, render: bool = True) -> list[Finding]:
    """All cross-field problems; GPU models first since later checks read the catalogue."""
    unknown = list(check_gpu_models(stack))
    if unknown:
        return unknown
    rules = CHECKS + RENDER_CHECKS if render else CHECKS
    return [finding for rule in rules for finding in rule(stack)]
