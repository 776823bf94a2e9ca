"""How each pool's GPUs are split: time-slicing/MPS replicas or a MIG layout, per pool.

NVIDIA's device plugin reads one config file per node, chosen by the node label
``nvidia.com/device-plugin.config`` among the named configs of its ConfigMap (the chart's
``config.map``, the operator's ``devicePlugin.config``). gpustack names a pool's config after
the pool; pools without settings of their own take ``default`` (the cluster-wide
``devicePlugin.sharing`` and ``migStrategy``). MIG layouts are nvidia-mig-parted configs, also
named after the pool and chosen by the node label ``nvidia.com/mig.config`` (the operator's MIG
manager) or by ``nvidia-mig-parted apply -c <pool>`` on the host.
"""

from __future__ import annotations

import re

from gpustack.spec.gpu_catalogue import GpuModel
from gpustack.spec.models import GpuStack
from gpustack.spec.models.cluster import NodePool, Sharing, SystemPool

DEVICE_PLUGIN_CONFIG_LABEL = "nvidia.com/device-plugin.config"
MIG_CONFIG_LABEL = "nvidia.com/mig.config"
DEFAULT_CONFIG = "default"
# A MIG-capable GPU has 7 compute slices and 8 memory slices (NVIDIA's MIG user guide).
COMPUTE_SLICES = 7
MEMORY_SLICES = 8
_PROFILE = re.compile(r"^(\d+)g\.(\d+)gb$")


def pool_sharing(stack: GpuStack, pool: NodePool) -> Sharing:
    """The pool's own sharing, else the cluster-wide ``devicePlugin.sharing``."""
    return pool.sharing if pool.sharing is not None else stack.spec.devicePlugin.sharing


def pool_mig_strategy(stack: GpuStack, pool: NodePool) -> str:
    """``single``/``mixed`` for a pool with a MIG layout, else the cluster-wide ``migStrategy``."""
    return pool.mig.strategy if pool.mig is not None else stack.spec.devicePlugin.migStrategy


def configured_pools(stack: GpuStack) -> list[NodePool]:
    """Pools with a device plugin config of their own (sharing or MIG set on the pool)."""
    return [pool for pool in stack.spec.nodePools if pool.sharing is not None or pool.mig is not None]


def config_labels(stack: GpuStack, pool: NodePool | SystemPool) -> dict[str, str]:
    """The labels that select a pool's own configs: its device plugin config and, with the GPU
    Operator, its MIG layout; none for a pool that takes ``default``."""
    if not isinstance(pool, NodePool) or (pool.sharing is None and pool.mig is None):
        return {}
    labels = {DEVICE_PLUGIN_CONFIG_LABEL: pool.name}
    if pool.mig is not None and stack.spec.gpuOperator.enabled:
        labels[MIG_CONFIG_LABEL] = pool.name
    return labels


def registered_labels(stack: GpuStack, pool: NodePool | SystemPool) -> dict[str, str]:
    """What a pool's nodes register with (kubeadm JoinConfiguration, K3s ``--node-label``,
    ``kubectl label``): the spec's labels and those selecting its configs."""
    return {**pool.labels, **config_labels(stack, pool)}


def mig_pools(stack: GpuStack) -> list[NodePool]:
    return [pool for pool in stack.spec.nodePools if pool.mig is not None]


def mig_slices(profile: str, model: GpuModel) -> tuple[int, int] | None:
    """(compute slices, memory slices) of ``profile`` on ``model``; None when it has no such profile.

    Memory slices are eighths of the GPU's memory: the profile's memory relative to the
    largest profile's (which has the whole memory), 1g.10gb on an 80 GB H100 = 1, 3g.40gb = 4.
    """
    if profile not in model.migProfiles:
        return None
    sizes = {p: _PROFILE.match(p) for p in model.migProfiles}
    whole = max(int(m.group(2)) for m in sizes.values() if m)
    found = sizes[profile]
    if found is None:
        return None
    return int(found.group(1)), round(int(found.group(2)) * MEMORY_SLICES / whole)
