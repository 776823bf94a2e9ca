"""Cross-field checks: combinations the schema alone cannot refuse.

Each check yields ``(path, message)``; the message names what to change. The loader turns
paths into ``file:line:col``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from gpustack.spec.catalogue import GpuModel, load_catalogue
from gpustack.spec.models import GpuStack, Mps, NodePool

Finding = tuple[tuple[str | int, ...], str]
DRA_MIN_MINOR = 34  # resource.k8s.io/v1 is served from Kubernetes 1.34


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


def _pool_path(index: int, *rest: str | int) -> tuple[str | int, ...]:
    return ("spec", "nodePools", index, *rest)


def check_gpu_models(stack: GpuStack) -> Iterator[Finding]:
    catalogue = load_catalogue()
    for i, pool in enumerate(stack.spec.nodePools):
        if pool.gpu.custom is None and catalogue.resolve(pool.gpu.model) is None:
            known = ", ".join(catalogue.names())
            yield _pool_path(i, "gpu", "model"), (
                f"unknown GPU model {pool.gpu.model!r}; known: {known}. "
                "For another GPU add gpu.custom with its facts (see `gpustack schema`)"
            )


def check_unique_pools(stack: GpuStack) -> Iterator[Finding]:
    seen: set[str] = set()
    for i, pool in enumerate(stack.spec.nodePools):
        if pool.name in seen:
            yield _pool_path(i, "name"), f"node pool {pool.name!r} is defined twice; pool names must be unique"
        seen.add(pool.name)


def check_driver_source(stack: GpuStack) -> Iterator[Finding]:
    operator = stack.spec.gpuOperator.enabled
    for i, pool in enumerate(stack.spec.nodePools):
        if pool.driver.source == "operator" and not operator:
            yield _pool_path(i, "driver", "source"), (
                f"pool {pool.name!r} expects the GPU Operator's driver container but "
                "spec.gpuOperator.enabled is false: enable the operator or set driver.source: host"
            )
        if pool.driver.source == "operator" and pool.toolkit.mode == "legacy":
            yield _pool_path(i, "toolkit", "mode"), (
                f"pool {pool.name!r}: the GPU Operator installs its own toolkit and injects devices "
                "through CDI (cdi.enabled: true); the host-side legacy OCI hook mode cannot be used "
                "with an operator-managed driver. Use toolkit.mode: auto or cdi"
            )


def check_mig(stack: GpuStack) -> Iterator[Finding]:
    plugin = stack.spec.devicePlugin
    if plugin.migStrategy == "none":
        return
    for i, pool in enumerate(stack.spec.nodePools):
        if not gpu_model(pool).mig_capable:
            yield ("spec", "devicePlugin", "migStrategy"), (
                f"migStrategy {plugin.migStrategy!r} but pool {pool.name!r} has {pool.gpu.model} GPUs, "
                "which cannot do MIG: set migStrategy: none or use a MIG-capable GPU (A100, H100, H200)"
            )
            break
    if isinstance(plugin.sharing, Mps):
        yield ("spec", "devicePlugin", "sharing", "strategy"), (
            "MPS sharing does not work on MIG devices: use migStrategy: none or sharing strategy timeSlicing"
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
    plugin_on = stack.spec.devicePlugin.enabled or stack.spec.gpuOperator.enabled
    if plugin_on and len(served) == len(stack.spec.nodePools):
        where = "gpuOperator" if stack.spec.gpuOperator.enabled else "devicePlugin"
        yield ("spec", where, "enabled"), (
            "HAMi and the NVIDIA device plugin would both advertise nvidia.com/gpu on "
            f"the same nodes ({', '.join(p.name for p in served)}): set spec.{where}.enabled: false, "
            "or limit sharing.hami.pools to pools the device plugin does not serve"
        )
    if stack.spec.devicePlugin.sharing.strategy != "none" and served:
        yield ("spec", "devicePlugin", "sharing", "strategy"), (
            "time-slicing/MPS sharing and HAMi both split GPUs: choose one"
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
    if dra.driver == "hami" and stack.spec.devicePlugin.enabled and not stack.spec.sharing.hami.enabled:
        yield ("spec", "devicePlugin", "enabled"), (
            "HAMi's DRA driver needs the standard GPU device plugin disabled on the same nodes "
            "(both publish nvidia.com/gpu): set devicePlugin.enabled: false"
        )


def check_workloads(stack: GpuStack) -> Iterator[Finding]:
    pools = {p.name for p in stack.spec.nodePools}
    for j, workload in enumerate(stack.spec.workloads):
        if workload.type != "vllm":
            continue
        if workload.pool is not None and workload.pool not in pools:
            yield ("spec", "workloads", j, "pool"), f"no node pool named {workload.pool!r}"
        if workload.share is not None and not stack.spec.sharing.hami.enabled:
            yield ("spec", "workloads", j, "share"), (
                "a GPU share (memoryMiB/cores) needs sharing.hami.enabled: true"
            )


CHECKS: tuple[Callable[[GpuStack], Iterator[Finding]], ...] = (
    check_unique_pools,
    check_driver_source,
    check_mig,
    check_profiling,
    check_hami,
    check_dra,
    check_workloads,
)


def check(stack: GpuStack) -> list[Finding]:
    """All cross-field problems; GPU models first since later checks read the catalogue."""
    unknown = list(check_gpu_models(stack))
    if unknown:
        return unknown
    return [finding for rule in CHECKS for finding in rule(stack)]
