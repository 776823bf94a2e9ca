"""GS009: HAMi's device plugin and NVIDIA's in one set.

Both advertise ``nvidia.com/gpu`` to the kubelet; on a node running both, whichever
registered last owns the resource and the other's allocations break (HAMi FAQ, HAMi#646;
seed 001 §11 had to uninstall NVIDIA's plugin). HAMi's maintainers allow both only on
separate nodes (HAMi#2076), which this rule cannot prove from the set.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.lint import sets
from gpustack.lint.context import LintContext
from gpustack.lint.model import Hit, PodSpec, Resource
from gpustack.lint.registry import Rule


def check(ctx: LintContext) -> Iterator[Hit]:
    pods: dict[Resource, list[PodSpec]] = {}
    for pod in ctx.pod_specs:
        pods.setdefault(pod.resource, []).append(pod)
    plugins = [
        plugin for resource in ctx.resources for plugin in sets.device_plugins(resource, pods.get(resource, ()))
    ]
    plugins += [plugin for release in sets.releases(ctx) if (plugin := sets.release_plugin(release))]
    hami = [p for p in plugins if p.vendor == "hami"]
    nvidia = [p for p in plugins if p.vendor == "nvidia"]
    if not hami or not nvidia:
        return
    for plugin in plugins:
        other = (nvidia if plugin.vendor == "hami" else hami)[0]
        yield Hit(
            plugin.resource,
            plugin.path,
            f"{plugin} and {other} both advertise nvidia.com/gpu",
            fix="Keep one: with HAMi, remove NVIDIA's device plugin (GPU Operator: "
            "`devicePlugin.enabled: false`), or run the two on disjoint nodes.",
        )


RULE = Rule("GS009", "set", check)
