"""GS009: HAMi's device plugin and NVIDIA's in one set, on nodes they may share.

Both advertise ``nvidia.com/gpu`` to the kubelet; on a node running both, whichever
registered last owns the resource and the other's allocations break (HAMi FAQ, HAMi#646;
seed 001 §11 had to uninstall NVIDIA's plugin). HAMi's maintainers allow both only on
separate nodes (HAMi#2076): the rule stays quiet when the two placements cannot meet
(``placement.py``: contradictory required node labels, or, with a spec, no pool both reach).
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.lint import placement, sets
from gpustack.lint.cluster import ClusterFacts
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
    for plugin in plugins:
        for other in nvidia if plugin.vendor == "hami" else hami:
            shared = _shared(plugin, other, ctx.cluster)
            if shared is None:
                continue
            yield Hit(
                plugin.resource,
                plugin.path,
                f"{plugin} and {other} both advertise nvidia.com/gpu{shared}",
                fix="Keep one per node: with HAMi, remove NVIDIA's device plugin (GPU Operator: "
                "`devicePlugin.enabled: false`), or keep NVIDIA's off HAMi's nodes (node affinity `NotIn` "
                f"on the label HAMi selects; GPU Operator: label them `{placement.OPERATOR_DEVICE_PLUGIN_LABEL}=false`).",
            )
            break


def _shared(a: sets.DevicePlugin, b: sets.DevicePlugin, cluster: ClusterFacts | None) -> str | None:
    """None when the two never run on one node; else what the message adds (the pools)."""
    first, second = placement.of_plugin(a), placement.of_plugin(b)
    if first.disjoint(second):
        return None
    if cluster is None:
        return ""
    pools = [p.name for p in cluster.pools if first.reaches(p, cluster) and second.reaches(p, cluster)]
    if not pools:
        return None
    where = f"pool {pools[0]}" if len(pools) == 1 else f"pools {', '.join(pools)}"
    return f" on the nodes of {where} ({cluster.spec_file})"


RULE = Rule("GS009", "set", check)
