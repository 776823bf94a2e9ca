"""GS048: NFD's worker does not tolerate a GPU pool's taint, so those nodes are never labelled.

NFD's worker runs as a DaemonSet; on a node whose taint it does not tolerate it never runs, and
the node never gets ``feature.node.kubernetes.io/pci-10de.present`` (nor GFD's labels, which
reach the node through NFD). The device plugin chart's default affinity and the GPU Operator's
operands select those labels: the pool's GPUs are never advertised. NFD's own chart tolerates no
taint by default, the device plugin chart's bundled NFD only ``nvidia.com/gpu=present``
(``facts/nfd.py``). A release's ``worker.tolerations`` replace the chart's list (Helm does not
merge lists). The GPU nodes' taints come from the spec's pools, else from the GPU node groups the
set declares (``facts/node_groups.py``: Talos machine configs, talhelper nodes, Karpenter
NodePools, OpenShift MachineSets).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from gpustack.lint.context import LintContext
from gpustack.lint.facts.components import pod_components
from gpustack.lint.facts.nfd import nfd_releases
from gpustack.lint.facts.node_groups import gpu_node_groups, taints_of
from gpustack.lint.facts.pools import Taint, untolerated
from gpustack.lint.facts.scheduling import tolerations
from gpustack.lint.model import Hit, Path, Resource
from gpustack.lint.registry import Rule

NFD_COMPONENT = "node-feature-discovery"  # data/system-components.yaml
WORKER_TOLERATIONS = ("worker", "tolerations")


def check(ctx: LintContext) -> Iterator[Hit]:
    groups = _gpu_groups(ctx)
    if not groups:
        return
    for nfd in nfd_releases(ctx):
        value = nfd.values(*WORKER_TOLERATIONS)
        given = isinstance(value, list)
        allowed = [t for t in value if isinstance(t, Mapping)] if given else nfd.default_tolerations
        resource, path = nfd.release.where(*nfd.prefix, *WORKER_TOLERATIONS)
        whose = "its worker.tolerations" if given else "the chart's default worker tolerations"
        yield from _hits(groups, allowed, resource, path, f"{nfd.release} deploys NFD's worker, but {whose}")
    for pod in ctx.pod_specs:
        if pod.resource.kind == "DaemonSet" and any(c.name == NFD_COMPONENT for c in pod_components(pod)):
            path = (*pod.path, "tolerations") if "tolerations" in pod.spec else pod.path
            yield from _hits(groups, tolerations(pod), pod.resource, path, f"NFD's worker {pod.resource.ref}")


def _gpu_groups(ctx: LintContext) -> list[tuple[str, tuple[Taint, ...]]]:
    """(name, taints) of each GPU node group: the spec's GPU pools, else the set's node groups."""
    if ctx.cluster is not None:
        return [(f"pool {pool.name}", pool.taints) for pool in ctx.cluster.pools if pool.gpus]
    return [(group[0], taints_of(group)) for group in gpu_node_groups(ctx)]


def _hits(
    groups: list[tuple[str, tuple[Taint, ...]]], allowed: Sequence[Mapping[str, Any]], resource: Resource, path: Path,
    what: str,
) -> Iterator[Hit]:
    blocked = [(name, found) for name, taints in groups if (found := untolerated(taints, allowed))]
    if not blocked:
        return
    listed = "; ".join(f"{name} ({', '.join(map(str, taints))})" for name, taints in blocked)
    yield Hit(
        resource,
        path,
        f"{what} do not tolerate the taints of GPU node group(s) {listed}: the worker never runs there, so those nodes never "
        "get NFD's labels (feature.node.kubernetes.io/pci-10de.present, GFD's nvidia.com/gpu.*) and the device "
        "plugin, which selects them, never advertises their GPUs",
        fix=f"Add to NFD's `worker.tolerations` (or the DaemonSet's tolerations): {_toleration(blocked[0][1][0])}.",
    )


def _toleration(taint: Taint) -> str:
    return f"`{{key: {taint.key}, operator: Exists, effect: {taint.effect}}}`"


RULE = Rule("GS048", "set", check)
