"""GS010: HAMi's device plugin waits for a node label nobody sets.

The HAMi chart's plugin DaemonSet selects ``gpu: "on"`` (``devicePlugin.nvidiaNodeSelector``,
``nvidianodeSelector`` up to v2.7), a HAMi convention that neither NFD nor GFD
sets: no plugin pod is scheduled until someone runs ``kubectl label node … gpu=on``
(HAMi's README asks for it). Helm merges a values map into the default one, so overriding the selector
with other keys keeps ``gpu: "on"`` unless it is set to null.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from gpustack.lint.context import LintContext
from gpustack.lint.facts import deviceplugins
from gpustack.lint.model import Hit, Path, Resource
from gpustack.lint.registry import Rule
from gpustack.lint.releases import dispatch

LABEL, VALUE = "gpu", "on"
FIX = (
    "Select nodes by a label NFD or GFD sets, e.g. `nvidia.com/gpu.present: \"true\"` or "
    "`feature.node.kubernetes.io/pci-10de.present: \"true\"` (with chart values, set `gpu: null`)."
)


def _selects_gpu_on(selector: object) -> bool:
    # An unquoted `gpu: on` reads as the boolean true (YAML 1.1), still meant as gpu=on.
    value = selector.get(LABEL) if isinstance(selector, Mapping) else None
    return value is True or value == VALUE


def check(resource: Resource, ctx: LintContext) -> Iterator[Hit]:
    for plugin in deviceplugins.device_plugins(resource, ctx.pods_of(resource)):
        if plugin.vendor == "hami" and plugin.pod and _selects_gpu_on(plugin.pod.spec.get("nodeSelector")):
            yield _hit(plugin, resource, (*plugin.pod.path, "nodeSelector", LABEL))


def check_values(ctx: LintContext) -> Iterator[Hit]:
    """HAMi releases, wherever their values are kept."""
    for release in dispatch.releases(ctx):
        plugin = deviceplugins.release_plugin(release)
        if plugin is None or plugin.vendor != "hami":
            continue
        read = deviceplugins.hami_selector_keys(release, ctx)
        if _selects_gpu_on(deviceplugins.hami_node_selector(release.values, read)):
            # Where the values set it, else the chart reference (the chart's default).
            where = [release.where("devicePlugin", key, LABEL) for key in read]
            owner, path = next((w for w in where if w[1] != release.path), (release.resource, release.path))
            yield _hit(plugin, owner, path)


def _hit(plugin: deviceplugins.DevicePlugin, resource: Resource, path: Path) -> Hit:
    return Hit(
        resource,
        path,
        f"{plugin} selects nodes labelled gpu=on, a label neither NFD nor GFD sets: "
        "no plugin pod runs until nodes are labelled by hand",
        fix=FIX,
    )


RULE = Rule("GS010", "object", check, frozenset({"DaemonSet"}), values=check_values)
