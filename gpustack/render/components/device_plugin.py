"""NVIDIA's device plugin with GPU Feature Discovery, as Helm values.

Only when the GPU Operator is off: with the operator on, it runs the device plugin and GFD
itself (gpu_operator.py) and a second plugin would advertise the same GPUs twice.

The plugin hands GPUs over as volume mounts (``deviceListStrategy: volume-mounts``), not in
``NVIDIA_VISIBLE_DEVICES``, which a pod's own env overrides (gpustack/render/gpu_isolation.py).
Not ``cdi-cri``: the plugin then sets no ``NVIDIA_VISIBLE_DEVICES`` at all, so a pod on RuntimeClass
nvidia keeps its image's (CUDA images say ``all``) and the toolkit must refuse the variable
anyway; containerd injects CDI devices only with CDI on, the default from containerd 2.0 but off
in 1.7 (``enable_cdi``, https://github.com/containerd/containerd/blob/release/1.7/docs/cri/config.md),
which an existing node or an older K3s may still run; and the plugin writes its CDI spec from a driver root it must mount (``nvidiaDriverRoot``,
``cdi.nvidiaHookPath``), which Talos's extensions lay out differently. ``volume-mounts`` needs only
the NVIDIA runtime every stack has and the toolkit setting the host steps make; the chart then
adds CAP_SYS_ADMIN to the plugin and GFD (``_helpers.tpl``, ``requiresCapSysAdmin``), which the
toolkit counts as privileged, so their own ``NVIDIA_VISIBLE_DEVICES=all`` still reaches every GPU
(https://github.com/NVIDIA/k8s-device-plugin/blob/v0.17.0/deployments/helm/nvidia-device-plugin/templates/_helpers.tpl).
Charts before 0.16 add it only for MIG, so gpustack sets it there itself.
"""

from __future__ import annotations

from typing import Any

from gpustack.lint.charts.chartkeys import version_key
from gpustack.render import gpu_isolation
from gpustack.render.component import Contribution, RenderContext, chart_release
from gpustack.render.components import nfd, partitioning
from gpustack.render.requests import requests
from gpustack.spec.labelling import sleep_interval
from gpustack.spec.partitioning import DEFAULT_CONFIG, configured_pools
from gpustack.spec.pools import hami_pool_labels, hami_pools

RELEASE = "nvidia-device-plugin"
NAMESPACE = "kube-system"  # where the plugin's static manifest runs it too
RUNTIME_CLASS = "nvidia"
SHARED_RESOURCE = "nvidia.com/gpu"
# The first chart whose _helpers.tpl gives the plugin and GFD CAP_SYS_ADMIN for volume-mounts.
FIRST_VOLUME_MOUNT_CAPABILITY = (0, 16, 0)

# The chart's own tolerations (values.yaml); pool taints are added to these.
CHART_TOLERATIONS = (
    {"key": "CriticalAddonsOnly", "operator": "Exists"},
    {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
)


def values(ctx: RenderContext) -> dict[str, Any]:
    stack = ctx.stack
    plugin = stack.spec.devicePlugin
    gfd = plugin.gfd
    result: dict[str, Any] = {
        # No privileged mode, no /dev mounts: the nvidia runtime injects the devices
        # (the chart's README: the typical runtimeClassName is nvidia).
        "runtimeClassName": RUNTIME_CLASS,
        # Off HAMi's pools when HAMi serves some of them: both plugins advertise nvidia.com/gpu
        # (HAMi#2076: separate nodes by DaemonSet affinity). GFD shares the value.
        "affinity": nfd.gpu_node_affinity(exclude=hami_pool_labels(stack)),
        # gpustack deploys NFD as its own release (nfd.py): the chart's bundled one would be a second.
        "nfd": {"enabled": False},
        "gfd": {"enabled": gfd.enabled},
        # The chart gives the same resources to the plugin, GFD and the MPS daemon.
        "resources": requests("device-plugin"),
    }
    strategy = gpu_isolation.plugin_strategy(stack)
    if strategy:
        # The chart's value becomes DEVICE_LIST_STRATEGY, which overrides the per-node config files.
        result["deviceListStrategy"] = strategy
        if version_key(plugin.version) < FIRST_VOLUME_MOUNT_CAPABILITY:
            sys_admin = {"capabilities": {"add": ["SYS_ADMIN"]}}
            result["securityContext"] = sys_admin
            result["gfd"]["securityContext"] = dict(sys_admin)
    if gfd.enabled:
        # noTimestamp: no nvidia.com/gfd.timestamp label rewritten every interval, one etcd
        # write per node less per interval. Top level: the chart's GFD
        # template reads .Values.sleepInterval / .Values.noTimestamp (0.15.0 to 0.20.0), while
        # its values.yaml declares them under gfd:, where nothing reads them.
        result.update(sleepInterval=sleep_interval(stack, gfd.sleepInterval), noTimestamp=True)
    tolerations = nfd.gpu_tolerations(stack, chart_defaults=CHART_TOLERATIONS)
    if tolerations:
        result["tolerations"] = tolerations
    configs = partitioning.plugin_configs(stack)
    if not configured_pools(stack):
        # One strategy for every node: the chart's value (its env var overrides config files).
        result["migStrategy"] = plugin.migStrategy
    if configs:
        # Per-node configs: a node labelled nvidia.com/device-plugin.config=<name> takes <name>.
        result["config"] = {"map": configs, "default": DEFAULT_CONFIG}
    return result


def build(chart: Any, ctx: RenderContext) -> Contribution:
    spec = ctx.stack.spec
    if not spec.devicePlugin.enabled or spec.gpuOperator.enabled:
        return Contribution()
    release = chart_release(
        "nvidia-device-plugin",
        name=RELEASE,
        version=spec.devicePlugin.version,
        namespace=NAMESPACE,
        values=values(ctx),
        wave=1,
    )
    notes = []
    excluded = hami_pool_labels(ctx.stack)
    if excluded:
        pools = ", ".join(f"`{p.name}`" for p in hami_pools(ctx.stack))
        labels = ", ".join(f"`{key}={value}`" for key, value in excluded.items())
        notes.append(
            f"The device plugin and GFD keep off HAMi's pools {pools}: their node affinity excludes nodes "
            f"labelled {labels}, so GFD's `nvidia.com/gpu.*` labels are not set there either."
        )
    if spec.devicePlugin.sharing.strategy != "none":
        sharing = spec.devicePlugin.sharing
        name = f"{SHARED_RESOURCE}.shared" if sharing.renameByDefault else SHARED_RESOURCE
        isolation = (
            "time-slicing gives no memory isolation: one pod can take the whole GPU memory"
            if sharing.strategy == "timeSlicing"
            else "MPS splits memory and compute evenly; it is experimental upstream and not for MIG devices"
        )
        notes.append(f"GPU sharing: each GPU is advertised as {sharing.replicas} × `{name}`; {isolation}.")
    return Contribution(releases=[release], notes=notes)
