"""GS056: a device plugin hands GPUs over in a form the GPU Operator's toolkit does not take.

The NVIDIA Container Toolkit takes a container's GPUs from, in order, CDI annotations, the device
plugin's volume mounts (only with ``accept-nvidia-visible-devices-as-volume-mounts``) and
``NVIDIA_VISIBLE_DEVICES`` (from a container without CAP_SYS_ADMIN only with
``accept-nvidia-visible-devices-envvar-when-unprivileged``) (``CUDA.VisibleDevices``,
https://github.com/NVIDIA/nvidia-container-toolkit/blob/v1.20.0/internal/config/image/cuda_image.go).
The GPU Operator's toolkit container writes both keys from its env
``ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED`` (default true) and
``ACCEPT_NVIDIA_VISIBLE_DEVICES_AS_VOLUME_MOUNTS`` (default false) (cmd/nvidia-ctk-installer/toolkit/toolkit.go).
A plugin whose strategy that toolkit does not take gives its pods no GPU: ``envvar`` (the default
of NVIDIA's chart, HAMi's, and the operator's own plugin without CDI) where the toolkit refuses the
variable; ``volume-mounts`` where it does not accept mounts (the variable then holds the mount
folder, which names no GPU). CDI strategies reach containers through containerd whatever the
toolkit says. Stated only where the set configures the operator's toolkit (a chart release or
ClusterPolicy that deploys it): a host-installed toolkit's config.toml is not in manifests.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from gpustack.lint.charts import chartversions
from gpustack.lint.charts.chartkeys import version_key
from gpustack.lint.context import LintContext
from gpustack.lint.facts import deviceplugins
from gpustack.lint.facts.clusterpolicy import cluster_policies
from gpustack.lint.facts.registered import chart_of_role
from gpustack.lint.facts.runtimeevidence import CDI_BY_DEFAULT
from gpustack.lint.model import Hit, get_value, scalar_text
from gpustack.lint.registry import Rule
from gpustack.lint.releases import dispatch

ENVVAR = "ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED"
MOUNTS = "ACCEPT_NVIDIA_VISIBLE_DEVICES_AS_VOLUME_MOUNTS"
STRATEGY = "DEVICE_LIST_STRATEGY"
STRATEGY_FLAG = "--device-list-strategy="
_FALSE = frozenset({"false", "0", "f"})
_TRUE = frozenset({"true", "1", "t"})


def _env(entries: Any) -> dict[str, str]:
    """A container's (or a ClusterPolicy section's) ``env`` list as name → lower-cased text."""
    if not isinstance(entries, list):
        return {}
    return {str(e["name"]): scalar_text(e.get("value", "")).lower()
            for e in entries if isinstance(e, Mapping) and "name" in e}


def _toolkits(ctx: LintContext) -> Iterator[tuple[str, dict[str, str]]]:
    """Each operator toolkit the set deploys (ClusterPolicy, chart release): what it is, its env."""
    for policy in cluster_policies(ctx):
        if policy.get(("spec", "toolkit", "enabled")) is not False:
            yield str(policy.ref), _env(policy.get(("spec", "toolkit", "env")))
    operator = chart_of_role("gpu-operator")
    for release in dispatch.releases(ctx):
        if release.chart == operator and get_value(release.values, "toolkit", "enabled") is not False:
            yield str(release), _env(get_value(release.values, "toolkit", "env"))


def _strategies(plugin: deviceplugins.DevicePlugin) -> list[str] | None:
    """How the plugin hands GPUs over (``cdi`` for any CDI strategy); None where the set does not say."""
    if plugin.pod is not None:
        container = plugin.pod.spec["containers"][plugin.path[-2]]
        flags = [a for a in container.get("args") or [] if isinstance(a, str) and a.startswith(STRATEGY_FLAG)]
        value = flags[-1].removeprefix(STRATEGY_FLAG) if flags else _env(container.get("env")).get(STRATEGY)
    elif plugin.operator:
        value = _operator_strategy(plugin)
    elif plugin.release is None:
        return None
    elif plugin.vendor == "hami":
        value = get_value(plugin.release.values, "devicePlugin", "deviceListStrategy")
    elif "deviceListStrategy" in str(get_value(plugin.release.values, "config", "map", default="")):
        return None  # per-node config files choose
    else:
        value = get_value(plugin.release.values, "deviceListStrategy")
    if value is None:
        value = "envvar"  # the plugins' default
    if not isinstance(value, str):
        return None
    return sorted({"cdi" if s.strip().startswith("cdi") else s.strip() for s in value.split(",")})


def _operator_strategy(plugin: deviceplugins.DevicePlugin) -> str | None:
    """The operator's plugin: CDI with ``cdi.enabled`` (on by default from chart v25.10.0), else
    its ``devicePlugin.env`` (controllers/object_controls.go, ``transformDevicePluginCtrForCDI``)."""
    if plugin.release is not None:
        cdi = get_value(plugin.release.values, "cdi", "enabled")
        if cdi is None:
            version = chartversions.resolve(plugin.release.chart, plugin.release.version).version or plugin.release.version
            if version is None:
                return None
            cdi = version_key(version) >= CDI_BY_DEFAULT
        env = _env(get_value(plugin.release.values, "devicePlugin", "env"))
    else:
        cdi = plugin.resource.get(("spec", "cdi", "enabled"))
        if cdi is None:
            return None
        env = _env(plugin.resource.get(("spec", "devicePlugin", "env")))
    return "cdi" if cdi is True else env.get(STRATEGY, "envvar")


def _problem(strategies: list[str], where: str, env: dict[str, str]) -> str | None:
    if "volume-mounts" in strategies and env.get(MOUNTS, "false") not in _TRUE:
        return (f"{where} leaves {MOUNTS} at false, so its toolkit ignores the plugin's volume mounts and reads "
                "NVIDIA_VISIBLE_DEVICES, which then holds the mount folder and names no GPU")
    if strategies == ["envvar"] and env.get(ENVVAR, "true") in _FALSE:
        return (f"{where} sets {ENVVAR}=false, so its toolkit ignores NVIDIA_VISIBLE_DEVICES in the plugin's pods "
                "(containers without CAP_SYS_ADMIN)")
    return None


def check(ctx: LintContext) -> Iterator[Hit]:
    toolkits = list(_toolkits(ctx))
    if not toolkits:
        return
    for plugin in deviceplugins.set_plugins(ctx):
        strategies = _strategies(plugin)
        if not strategies or "cdi" in strategies:
            continue
        problem = next((p for where, env in toolkits if (p := _problem(strategies, where, env))), None)
        if problem:
            yield Hit(
                plugin.resource,
                plugin.path,
                f"{plugin} hands GPUs over as `{','.join(strategies)}`, but {problem}: its GPU pods get no device "
                "(\"no CUDA-capable device is detected\")",
                fix=f"Hand GPUs over as volume mounts (`deviceListStrategy: volume-mounts`) with {MOUNTS}=true in the "
                "toolkit's env, or through CDI.",
            )


RULE = Rule("GS056", "set", check)
