"""GS062: a RuntimeClass for GPUs whose ``scheduling.nodeSelector`` matches no GPU node pool.

The RuntimeClass admission controller merges a class's ``scheduling.nodeSelector`` into the
node selector of every pod that names it (and refuses a pod whose own selector conflicts), so
a class that selects a label no GPU pool carries keeps every GPU pod of that class Pending
(https://kubernetes.io/docs/concepts/containers/runtime-class/#scheduling). Its tolerations only
add to the pod's and never keep a pool out, so they are not judged. A RuntimeClass is one for
GPUs when its handler is NVIDIA's runtime or a GPU pod of the set names it. The pools and their
labels come from the spec or a live cluster (``ctx.cluster``); labels they do not describe stay
open (``Selection``); without them the rule is silent.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from gpustack.lint.context import LintContext
from gpustack.lint.facts.consumers import is_gpu_workload
from gpustack.lint.facts.scheduling import Selection
from gpustack.lint.facts.unmatched import no_pool_matches
from gpustack.lint.model import Hit, PodSpec
from gpustack.lint.registry import Rule

SELECTOR = ("scheduling", "nodeSelector")


def check(ctx: LintContext) -> Iterator[Hit]:
    cluster = ctx.cluster
    pools = [pool for pool in cluster.pools if pool.gpus] if cluster is not None else []
    if cluster is None or not pools:
        return
    named = {pod.spec.get("runtimeClassName") for pod in ctx.pod_specs if is_gpu_workload(pod)}
    for runtime_class in ctx.of_kind("RuntimeClass"):
        selector = runtime_class.get(SELECTOR)
        handler = runtime_class.get(("handler",))
        if not isinstance(selector, Mapping) or not selector:
            continue
        if not ("nvidia" in str(handler).lower() or runtime_class.ref.name in named):
            continue
        # The selector as the pods of the class get it: their nodeSelector.
        as_pod = PodSpec(runtime_class, ("scheduling",), {"nodeSelector": selector}, {}, gpu_consumer=False,
                         system_component=False)
        found = no_pool_matches(Selection.of(as_pod, cluster), pools, cluster, "GPU node pool")
        if found is None:
            continue
        test, why = found
        yield Hit(
            runtime_class,
            test.path,
            f"{runtime_class.ref} (handler {handler}) adds its scheduling.nodeSelector to every pod that names it, but "
            f"{why}: every GPU pod of this RuntimeClass stays Pending",
            fix="Select a label the GPU pools carry (e.g. `nvidia.com/gpu.product` with the pool's product, or a "
            "pool label), or drop `scheduling` where every GPU node has the runtime.",
        )


RULE = Rule("GS062", "set", check)
