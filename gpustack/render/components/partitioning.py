"""Per-pool GPU partitioning: device plugin configs per pool, MIG layouts, and the node labels.

The configs themselves go into the device plugin's release (device_plugin.py: ``config.map``)
or the GPU Operator's (gpu_operator.py: ``devicePlugin.config`` and ``migManager.config``);
this component writes what is left: notes on the node labels that select them (rendered
into each pool's registration: ``spec.partitioning.registered_labels``) and, without the
operator, the nvidia-mig-parted config with the host steps that apply it.
"""

from __future__ import annotations

from typing import Any

from gpustack.render.component import Contribution, RenderContext
from gpustack.spec.models import GpuStack
from gpustack.spec.models.cluster import NodePool
from gpustack.spec.partitioning import (
    DEFAULT_CONFIG,
    config_labels,
    configured_pools,
    mig_pools,
    pool_mig_strategy,
    pool_sharing,
)
from gpustack.yamlio import dump

SHARED_RESOURCE = "nvidia.com/gpu"
MIG_DISABLED = "all-disabled"
MIG_PARTED_FILE = "mig/config.yaml"
# The GPU Operator's MIG manager reads this ConfigMap (key config.yaml) when given one.
MIG_MANAGER_CONFIG = "gpustack-mig-parted-config"


def plugin_config(stack: GpuStack, pool: NodePool | None, *, with_flags: bool) -> str | None:
    """One device plugin config file (``version: v1``); ``pool`` None: the cluster-wide default.

    ``with_flags``: the MIG strategy goes into the file (``flags.migStrategy``) rather than the
    chart's ``migStrategy`` value, whose environment variable would override every file.
    """
    sharing = pool_sharing(stack, pool) if pool is not None else stack.spec.devicePlugin.sharing
    body: dict[str, Any] = {"version": "v1"}
    if with_flags:
        strategy = pool_mig_strategy(stack, pool) if pool is not None else stack.spec.devicePlugin.migStrategy
        body["flags"] = {"migStrategy": strategy}
    if sharing.strategy != "none":
        resources = [{"name": SHARED_RESOURCE, "replicas": sharing.replicas}]
        settings: dict[str, Any] = {"renameByDefault": sharing.renameByDefault}
        if sharing.strategy == "timeSlicing":
            settings["failRequestsGreaterThanOne"] = sharing.failRequestsGreaterThanOne
        body["sharing"] = {sharing.strategy: {**settings, "resources": resources}}
    elif not with_flags:
        return None
    return dump(body)


def plugin_configs(stack: GpuStack) -> dict[str, str]:
    """Named configs: ``default`` plus one per pool with settings of its own; {} when none is needed."""
    pools = configured_pools(stack)
    default = plugin_config(stack, None, with_flags=bool(pools))
    configs = {DEFAULT_CONFIG: default} if default is not None else {}
    configs.update({pool.name: plugin_config(stack, pool, with_flags=True) or "" for pool in pools})
    return configs


def mig_parted_config(stack: GpuStack) -> str | None:
    """nvidia-mig-parted's config: ``all-disabled`` plus one layout per MIG pool, on all its GPUs."""
    pools = mig_pools(stack)
    if not pools:
        return None
    configs: dict[str, Any] = {MIG_DISABLED: [{"devices": "all", "mig-enabled": False}]}
    for pool in pools:
        assert pool.mig is not None
        configs[pool.name] = [{"devices": "all", "mig-enabled": True, "mig-devices": dict(pool.mig.layout)}]
    return dump({"version": "v1", "mig-configs": configs})


def operator_mig_strategy(stack: GpuStack) -> str:
    """The operator's one ``mig.strategy``: the MIG pools' (checks make them agree), else the cluster's."""
    strategies = {pool.mig.strategy for pool in mig_pools(stack) if pool.mig is not None}
    return strategies.pop() if strategies else stack.spec.devicePlugin.migStrategy


def build(chart: Any, ctx: RenderContext) -> Contribution:
    stack = ctx.stack
    pools = configured_pools(stack)
    if not pools:
        return Contribution()
    how = {
        "kubeadm": "its JoinConfiguration",
        "talos": "`machine.nodeLabels` of its Talos machine-config patch",
    }.get(stack.spec.cluster.distribution, "its K3s `--node-label` flags")
    # Talos keeps machine.nodeLabels on the Node; elsewhere the host steps label latecomers.
    later = "" if stack.spec.cluster.distribution == "talos" else "; the host steps label nodes that joined another way"
    notes = []
    for pool in pools:
        labels = " ".join(f"{k}={v}" for k, v in config_labels(stack, pool).items())
        notes.append(
            f"Nodes of pool `{pool.name}` register with `{labels}` ({how}{later}): {_what(stack, pool)}."
        )
    files = {}
    if mig_pools(stack) and not stack.spec.gpuOperator.enabled:
        text = mig_parted_config(stack)
        assert text is not None
        files[MIG_PARTED_FILE] = "# nvidia-mig-parted configs rendered by gpustack, one per MIG pool.\n" + text
        for pool in mig_pools(stack):
            notes.append(
                f"MIG on pool `{pool.name}`: on each of its nodes, with nvidia-mig-parted installed (NVIDIA's "
                f"mig-parted releases), run `nvidia-mig-parted apply -f {MIG_PARTED_FILE} -c {pool.name}` before the "
                "device plugin starts (or restart its pod after), and again after every reboot unless the "
                "nvidia-mig-manager systemd service does it."
            )
    return Contribution(notes=notes, files=files)


def _what(stack: GpuStack, pool: NodePool) -> str:
    parts = [f"device plugin config `{pool.name}`"]
    if pool.mig is not None:
        layout = ", ".join(f"{count} × {profile}" for profile, count in pool.mig.layout.items())
        how = "the operator's MIG manager applies" if stack.spec.gpuOperator.enabled else "MIG layout"
        parts.append(f"{how} {layout} per GPU, strategy {pool.mig.strategy}")
    sharing = pool_sharing(stack, pool)
    if sharing.strategy != "none":
        parts.append(f"{sharing.strategy} with {sharing.replicas} replicas per GPU")
    return "; ".join(parts)
