"""GS026: a GPU workload whose required node selection matches no node pool of the spec.

The labels a pool's nodes carry are known from the spec:
GFD's ``nvidia.com/gpu.product``, ``gpu.family``, ``gpu.memory``, ``gpu.count``, ``gpu.mode``,
``mig.capable``, … from the catalogue facts of the pool's GPU (where GFD is deployed);
``feature.node.kubernetes.io/pci-10de.present`` from gpustack's NFD (``deviceLabelFields:
[vendor]``, so no ``pci-0302_10de``); ``nvidia.com/gpu.present`` only under the GPU Operator;
and the pool's own labels. A selector copied from another cluster (the PCI
class label differs between a GeForce PC and an L4), or one on ``nvidia.com/gpu`` (the
resource name: NFD, GFD and the GPU Operator set ``nvidia.com/gpu.present``, ``.product``,
``.count``, ``.deploy.*``, never the bare key, so only a pool's own labels carry it), then
fails with "didn't match Pod's node affinity/selector" and the pod stays Pending. Labels the
spec does not describe (hostname, zone, …) are never judged. Needs ``--spec``.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.lint.context import LintContext
from gpustack.lint.facts.consumers import is_gpu_workload
from gpustack.lint.facts.podspec import subject
from gpustack.lint.facts.scheduling import Selection
from gpustack.lint.facts.unmatched import no_pool_matches
from gpustack.lint.model import Hit, PodSpec
from gpustack.lint.registry import Rule

FIX = "Select a label the pools carry, e.g. `nvidia.com/gpu.product` with the pool's product, or a pool label."


def check(pod: PodSpec, ctx: LintContext) -> Iterator[Hit]:
    cluster = ctx.cluster
    if cluster is None or not is_gpu_workload(pod):
        return
    found = no_pool_matches(Selection.of(pod, cluster), cluster.pools, cluster)
    if found is None:
        return
    test, why = found
    yield Hit(
        pod.resource,
        test.path,
        f"{subject(pod)} asks for GPU nodes by label, but {why}: it stays Pending",
        fix=FIX,
    )


RULE = Rule("GS026", "pod", check)
