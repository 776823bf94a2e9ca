"""NVIDIA GPU Operator values, when ``gpuOperator.enabled`` (https://github.com/NVIDIA/gpu-operator).

The operator then owns the container toolkit, the containerd runtime entry and RuntimeClass,
the device plugin and GFD, and the driver on pools with ``driver.source: operator``. NFD stays
gpustack's own release (nfd.py): the chart's bundled NFD is switched off, never two NFDs.
"""

from __future__ import annotations

from typing import Any

from gpustack.errors import Problem, SpecError
from gpustack.render import gpu_isolation
from gpustack.render.component import Contribution, RenderContext, chart_release
from gpustack.render.requests import requests
from gpustack.render.components import nfd, partitioning
from gpustack.spec.labelling import sleep_interval
from gpustack.spec.models import GpuStack
from gpustack.spec.partitioning import DEFAULT_CONFIG
from gpustack.spec.pools import SKIP_DRIVER_LABEL, gpu_model, hami_pools

RELEASE = "gpu-operator"
NAMESPACE = "gpu-operator"
# The operator runs each operand on nodes labelled nvidia.com/gpu.deploy.<operand>=true and
# leaves a node alone where the label is already false (corpus: state-driver and
# state-device-plugin DaemonSets' nodeSelector).
SKIP_DEVICE_PLUGIN_LABEL = "nvidia.com/gpu.deploy.device-plugin"
CONFIG_NAME = "gpustack-device-plugin-config"

# The chart's daemonsets.tolerations; pool taints are added to these.
CHART_TOLERATIONS = ({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},)
# Values section → row of render/requests.py, for the operands the chart runs by default and leaves
# without requests (its operator has its own; dcgmExporter's come with the monitoring values).
OPERAND_REQUESTS = {
    "driver": "driver",
    "toolkit": "toolkit",
    "devicePlugin": "device-plugin",
    "gfd": "feature-discovery",
    "validator": "validator",
    "migManager": "mig-manager",
}

# K3s runs its own containerd: NVIDIA's K3s test case (gpu-operator controllers/transforms_test.go).
K3S_CONTAINERD_CONFIG = "/var/lib/rancher/k3s/agent/etc/containerd/config.toml"
K3S_CONTAINERD_SOCKET = "/run/k3s/containerd/containerd.sock"


def toolkit_env(stack: GpuStack) -> list[dict[str, str]]:
    """The toolkit container's env, which the operator copies into it (``TransformToolkit``,
    controllers/object_controls.go, from v23.9 on): K3s' containerd, the default runtime, and the
    isolation settings (gpustack/render/gpu_isolation.py), which its installer writes to the
    toolkit's config.toml (toolkit 1.14 on)."""
    env = []
    if stack.spec.cluster.distribution == "k3s":
        env += [
            {"name": "CONTAINERD_CONFIG", "value": K3S_CONTAINERD_CONFIG},
            {"name": "CONTAINERD_SOCKET", "value": K3S_CONTAINERD_SOCKET},
        ]
    default = "true" if stack.spec.cluster.nvidiaDefaultRuntime else "false"
    env.append({"name": "CONTAINERD_SET_AS_DEFAULT", "value": default})
    return env + gpu_isolation.installer_env(gpu_isolation.toolkit_settings(stack))


def host_brings_toolkit(stack: GpuStack) -> bool:
    """Whether the nodes' OS brings the toolkit, so the operator must not run its own: Talos's
    nvidia-container-toolkit extension (``gpustack.spec.talos``), whose containerd config the
    read-only root keeps the toolkit container from editing."""
    return stack.spec.cluster.distribution == "talos"


def driver_values(ctx: RenderContext) -> dict[str, Any]:
    """``driver.enabled`` when any pool takes the operator's driver; its version when pools name one."""
    pools = [(i, p) for i, p in enumerate(ctx.stack.spec.nodePools) if p.driver.source == "operator"]
    versions = sorted({p.driver.version for _, p in pools if p.driver.version})
    if len(versions) > 1:
        index = next(i for i, p in pools if p.driver.version == versions[1])
        raise SpecError(
            Problem(
                f"the GPU Operator chart deploys one driver version, pools ask for {', '.join(versions)}: "
                "use the same driver.version on every operator pool",
                ctx.spec_file,
                path=f"spec.nodePools[{index}].driver.version",
            )
        )
    driver: dict[str, Any] = {"enabled": bool(pools)}
    if versions:
        driver["version"] = versions[0]
    return driver


def job_pod_selector(stack: GpuStack) -> str:
    """Every pod a Job runs: the API server labels a Job's pod template with the Job's name,
    ``batch.kubernetes.io/job-name`` since Kubernetes 1.27 and the unprefixed ``job-name`` before
    (https://kubernetes.io/docs/reference/labels-annotations-taints/#batchkubernetesiojob-name)."""
    return "batch.kubernetes.io/job-name" if stack.spec.cluster.minor >= 27 else "job-name"


def upgrade_policy(stack: GpuStack) -> dict[str, Any]:
    """The upgrade controller's policy for the driver it installs
    (https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/gpu-driver-upgrades.html).

    One node at a time, cordoned, waits while a Job's pod runs there (``waitForCompletion``: the
    Jobs of the stack and of its users finish, or ``jobTimeoutSeconds`` runs out), then evicts
    the pods that hold an ``nvidia.com/gpu*`` or ``nvidia.com/mig-*`` resource. The controller
    evicts through the Eviction API, so PodDisruptionBudgets (the vLLM servers') hold it back
    (k8s-operator-libs ``pkg/upgrade/pod_manager.go``: kubectl's drain helper without
    DisableEviction). ``deleteEmptyDir``: the chart's false refuses every pod with an emptyDir
    (vLLM's /dev/shm and model cache), which fails the node's upgrade; those volumes hold caches.
    Pods that hold GPUs through DRA claims carry no such resource, so under DRA the node is also
    drained (every pod but DaemonSets, also through evictions).
    """
    upgrade = stack.spec.gpuOperator.driverUpgrade
    policy: dict[str, Any] = {
        "autoUpgrade": True,
        "maxParallelUpgrades": 1,
        "waitForCompletion": {"podSelector": job_pod_selector(stack), "timeoutSeconds": upgrade.jobTimeoutSeconds},
        "gpuPodDeletion": {"deleteEmptyDir": True},
    }
    if stack.spec.dra.enabled:
        policy["drain"] = {"enable": True, "deleteEmptyDir": True}
    return policy


def values(ctx: RenderContext) -> dict[str, Any]:
    stack = ctx.stack
    plugin = stack.spec.devicePlugin
    gfd: dict[str, Any] = {"enabled": plugin.gfd.enabled}
    if plugin.gfd.enabled:
        # Same label-churn settings as the standalone GFD (device_plugin.py).
        gfd["env"] = [
            {"name": "GFD_NO_TIMESTAMP", "value": "true"},
            {"name": "GFD_SLEEP_INTERVAL", "value": sleep_interval(stack, plugin.gfd.sleepInterval)},
        ]
    operator_plugin: dict[str, Any] = {"enabled": plugin.enabled}
    strategy = gpu_isolation.plugin_strategy(stack)
    if strategy and not gpu_isolation.operator_plugin_cdi(stack):
        # The operand's privileged container keeps NVIDIA_VISIBLE_DEVICES=all for itself.
        operator_plugin["env"] = [{"name": gpu_isolation.DEVICE_LIST_STRATEGY, "value": strategy}]
    configs = partitioning.plugin_configs(stack)
    if configs:
        operator_plugin["config"] = {"create": True, "name": CONFIG_NAME, "default": DEFAULT_CONFIG, "data": configs}
    result: dict[str, Any] = {
        "nfd": {"enabled": False},
        "driver": driver_values(ctx),
        "toolkit": {"enabled": False} if host_brings_toolkit(stack) else {"enabled": True, "env": toolkit_env(stack)},
        "devicePlugin": operator_plugin,
        "gfd": gfd,
        # The chart defaults to single; the spec's default is none.
        "mig": {"strategy": partitioning.operator_mig_strategy(stack)},
    }
    mig_config = partitioning.mig_parted_config(stack)
    if mig_config is not None:
        # The MIG manager applies config <pool> to nodes labelled nvidia.com/mig.config=<pool>.
        result["migManager"] = {
            "config": {
                "create": True,
                "name": partitioning.MIG_MANAGER_CONFIG,
                "default": partitioning.MIG_DISABLED,
                "data": {"config.yaml": mig_config},
            }
        }
    if result["driver"]["enabled"] and stack.spec.gpuOperator.driverUpgrade.enabled:
        result["driver"]["upgradePolicy"] = upgrade_policy(stack)
    for section, pod in OPERAND_REQUESTS.items():
        if result.setdefault(section, {}).get("enabled", True):
            result[section]["resources"] = requests(pod)
    tolerations = nfd.gpu_tolerations(stack, chart_defaults=CHART_TOLERATIONS)
    if tolerations:
        result["daemonsets"] = {"tolerations": tolerations}
    return result


def notes(ctx: RenderContext) -> list[str]:
    spec = ctx.stack.spec
    result = []
    # With driver.enabled (some pool takes the operator's driver) the host pools opt out through
    # the label their spec must carry (pool_checks.check_driver_source); without it no driver
    # container runs anywhere.
    host_pools = [p for p in spec.nodePools if p.driver.source == "host"]
    if host_pools and driver_values(ctx)["enabled"]:
        selectors = ", ".join(_node_selector(p.labels) or f"the nodes of pool `{p.name}`" for p in host_pools)
        result.append(
            "Pools with a host-installed driver keep it: before installing the operator, make sure their nodes "
            f"carry `{SKIP_DRIVER_LABEL}=false` as the spec says ({selectors}), e.g. "
            f"`kubectl label node \"$NODE\" {SKIP_DRIVER_LABEL}=false`; without it the operator installs a second "
            "driver there."
        )
    if driver_values(ctx)["enabled"] and spec.gpuOperator.driverUpgrade.enabled:
        upgrade = spec.gpuOperator.driverUpgrade
        wait = f"at most {upgrade.jobTimeoutSeconds} s" if upgrade.jobTimeoutSeconds else "until they finish"
        result.append(
            "Driver upgrades (a new `driver.version`, or a chart release with another driver) go one node at a "
            f"time: the operator cordons the node, waits while a Job's pod runs there (`{job_pod_selector(ctx.stack)}`, "
            f"{wait}: `gpuOperator.driverUpgrade.jobTimeoutSeconds`), then evicts its GPU pods through the Eviction "
            "API, so PodDisruptionBudgets hold it back"
            + (", and drains the node, since pods holding DRA claims carry no GPU resource it could find"
               if spec.dra.enabled else "")
            + ". `kubectl get nodes -L nvidia.com/gpu-driver-upgrade-state` follows it; a node left in "
            "`upgrade-failed` had a pod no eviction could move within 5 minutes (a pod without a controller, or a "
            "budget that never allowed it): move that pod, then delete the node's driver pod (`kubectl -n "
            f"{NAMESPACE} delete pod -l app=nvidia-driver-daemonset --field-selector spec.nodeName=$NODE`); once the "
            "new one runs, the controller uncordons the node."
        )
    result += _geforce_notes(ctx.stack)
    hami = hami_pools(ctx.stack) if spec.devicePlugin.enabled else []
    if hami:
        selectors = ", ".join(_node_selector(p.labels) or f"the nodes of pool `{p.name}`" for p in hami)
        result.append(
            "HAMi's pools take HAMi's device plugin, not the operator's (both advertise `nvidia.com/gpu`): label "
            f"their nodes `{SKIP_DEVICE_PLUGIN_LABEL}=false` ({selectors}) before installing the operator."
        )
    if gpu_isolation.refuses_envvar(ctx.stack) and not host_brings_toolkit(ctx.stack):
        result.append(
            "The operator's toolkit ignores `NVIDIA_VISIBLE_DEVICES` in containers without CAP_SYS_ADMIN "
            "(`toolkit.env` `ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED=false`): a pod gets the GPUs "
            "its device plugin allocated, not every GPU of the node it names; the operator's own operands run "
            "privileged and still see them all. `cluster.acceptVisibleDevicesEnvvar: true` keeps the toolkit's default."
        )
    if spec.cluster.distribution == "k3s":
        result.append(
            "The operator's toolkit edits K3s' containerd config.toml, which K3s rewrites on every start; "
            "K3s itself finds the toolkit the operator installs under /usr/local/nvidia/toolkit and "
            "registers the nvidia runtime again."
        )
    return result


def _geforce_notes(stack: GpuStack) -> list[str]:
    """GeForce pools: not on the operator's supported platforms, which list datacenter and
    RTX/Quadro workstation GPUs only
    (https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/platform-support.html).
    Their operands run there (the spec accepts it: a fleet may choose it); the README says so."""
    notes = []
    for pool in stack.spec.nodePools:
        model = gpu_model(pool)
        if model.segment != "geforce":
            continue
        driver = (
            "the operator also installs its driver there (`driver.source: operator`): a host driver "
            f"(`driver.source: host`, nodes labelled `{SKIP_DRIVER_LABEL}=false`) keeps that off the untested path"
            if pool.driver.source == "operator"
            else "its driver stays the host's"
        )
        notes.append(
            f"Pool `{pool.name}` ({model.product}) is a GeForce card, which NVIDIA does not list among the GPU "
            "Operator's supported platforms (datacenter and RTX/Quadro workstation GPUs only): the operator's "
            f"operands run there without NVIDIA's support; {driver}. "
            f"After install, check them on those nodes: `kubectl -n {NAMESPACE} get pods -o wide`."
        )
    return notes


def _node_selector(labels: dict[str, str]) -> str:
    return f"`-l {','.join(f'{k}={v}' for k, v in sorted(labels.items()))}`" if labels else ""


def build(chart: Any, ctx: RenderContext) -> Contribution:
    operator = ctx.stack.spec.gpuOperator
    if not operator.enabled:
        return Contribution()
    release = chart_release(
        "gpu-operator",
        name=RELEASE,
        version=operator.version,
        namespace=NAMESPACE,
        values=values(ctx),
        wave=1,
    )
    return Contribution(releases=[release], notes=notes(ctx))
