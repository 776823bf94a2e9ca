"""What the spec's node pools are: a pool's GPU facts, the pools HAMi serves and their labels.

Answers that the spec checks and render both read (render calls them after the checks passed),
and the pool label by which the GPU Operator skips a host-driver pool.
"""

from __future__ import annotations

from collections.abc import Sequence

from gpustack.spec.gpu_catalogue import GpuModel, load_catalogue
from gpustack.spec.models import GpuStack
from gpustack.spec.models.cluster import NodePool, Taint

# The GPU Operator skips its driver container on nodes with this label set to false.
SKIP_DRIVER_LABEL = "nvidia.com/gpu.deploy.driver"


def gpu_model(pool: NodePool) -> GpuModel:
    """The catalogue facts of a pool's GPU (or its custom entry). Call after ``check``."""
    if pool.gpu.custom is not None:
        return pool.gpu.custom
    resolved = load_catalogue().resolve(pool.gpu.model)
    if resolved is None:
        raise KeyError(pool.gpu.model)
    return resolved[1]


def on_nvswitch(pool: NodePool) -> bool:
    """Whether the pool's nodes are NVSwitch boards (8 × an HGX SXM part): NVIDIA Fabric Manager's job."""
    return gpu_model(pool).on_nvswitch(pool.gpu.count)


def workload_pool(stack: GpuStack, workload: object) -> NodePool | None:
    """The pool a workload's pods run on: the one it names (``pool``), else the first; None for
    a name no pool has (``component_checks.check_workloads`` refuses it)."""
    name = getattr(workload, "pool", None)
    if name is None:
        return stack.spec.nodePools[0]
    return next((pool for pool in stack.spec.nodePools if pool.name == name), None)


def fabric_manager_pools(stack: GpuStack) -> list[NodePool]:
    """NVSwitch pools whose host steps install Fabric Manager: a host driver and ``driver.fabricManager``."""
    return [p for p in stack.spec.nodePools if p.driver.source == "host" and p.driver.fabricManager and on_nvswitch(p)]


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


def repels(taints: Sequence[Taint]) -> bool:
    """Whether pods without tolerations stay off nodes with these taints."""
    return any(t.effect in ("NoSchedule", "NoExecute") for t in taints)
