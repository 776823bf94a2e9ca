"""GS016: ``DCGM_FI_DEV_GPU_UTIL`` read as saturation, with no profiling metric beside it.

GPU_UTIL is time-based: the share of time any kernel ran, as nvidia-smi shows it. A GPU that
runs one small kernel all the time reads 100 % while its SMs idle. In one measured
case two vLLM pods drove the engine to 78 % with 2.43 % tensor activity: "busy" was
batching, not a full GPU. An alert that fires on GPU_UTIL above a threshold, or an autoscaler
that targets it, adds GPUs where bigger batches were the answer. With a ``DCGM_FI_PROF_*``
term in the same expression (``GR_ENGINE_ACTIVE``, ``SM_ACTIVE``) the rule stays quiet;
``<`` comparisons (idle detection such as a ``GPUIdleButAllocated`` alert) are exempt, and so
is a threshold on how GPU_UTIL changes (``rate()``, ``delta()``: ``promql.level_names``), which
GS041 reports.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from gpustack.lint.context import LintContext
from gpustack.lint.facts import promql
from gpustack.lint.facts.rulefiles import RULE_KINDS
from gpustack.lint.model import Hit, Path, Resource
from gpustack.lint.registry import Rule

GPU_UTIL = "DCGM_FI_DEV_GPU_UTIL"
PROFILING_PREFIX = "DCGM_FI_PROF_"
HPA, SCALED_OBJECT = "HorizontalPodAutoscaler", "ScaledObject"
FIX = (
    "Pair it with a profiling metric, e.g. `DCGM_FI_PROF_GR_ENGINE_ACTIVE > 0.8` or "
    "`DCGM_FI_PROF_SM_ACTIVE`, or compare GPU_UTIL only downwards (idle detection)."
)
WHY = "GPU_UTIL is the share of time a kernel ran, not how full the GPU is"


def _util_alone(tree: Any) -> bool:
    """The expression reads GPU_UTIL and no profiling metric."""
    names = promql.metric_names(tree)
    return GPU_UTIL in names and not any(name.startswith(PROFILING_PREFIX) for name in names)


def _saturation_alert(expr: str) -> bool:
    tree = promql.parse(expr)
    return (
        tree is not None
        and _util_alone(tree)
        and any(comparison.above(GPU_UTIL) for comparison in promql.comparisons(tree))
    )


def _hpa_targets(resource: Resource) -> Iterator[Path]:
    """HPA metrics (Pods, Object, External) named after GPU_UTIL, e.g. through prometheus-adapter."""
    metrics = resource.get(("spec", "metrics"))
    for index, metric in enumerate(metrics if isinstance(metrics, list) else ()):
        if not isinstance(metric, Mapping):
            continue
        for source in ("pods", "object", "external"):
            name = _get(metric, source, "metric", "name")
            if isinstance(name, str) and GPU_UTIL in name:
                yield ("spec", "metrics", index, source, "metric", "name")


def _keda_queries(resource: Resource) -> Iterator[Path]:
    triggers = resource.get(("spec", "triggers"))
    for index, trigger in enumerate(triggers if isinstance(triggers, list) else ()):
        query = _get(trigger, "metadata", "query")
        tree = promql.parse(query) if _get(trigger, "type") == "prometheus" and isinstance(query, str) else None
        if tree is not None and _util_alone(tree):
            yield ("spec", "triggers", index, "metadata", "query")


def _get(node: Any, *keys: str) -> Any:
    for key in keys:
        node = node.get(key) if isinstance(node, Mapping) else None
    return node


def check(resource: Resource, ctx: LintContext) -> Iterator[Hit]:
    if resource.kind in RULE_KINDS:
        for rule in promql.rule_expressions(resource):
            if rule.alert and _saturation_alert(rule.expr):
                yield Hit(
                    resource,
                    rule.expr_path,
                    f"{rule.label} fires on {GPU_UTIL} above a threshold with no DCGM_FI_PROF_* metric: {WHY}",
                    fix=FIX,
                )
        return
    paths = list(_hpa_targets(resource)) if resource.kind == HPA else list(_keda_queries(resource))
    for path in paths:
        yield Hit(
            resource,
            path,
            f"{resource.ref} scales on {GPU_UTIL} with no DCGM_FI_PROF_* metric: {WHY}, so it adds "
            "replicas to GPUs that are busy but far from full",
            fix=FIX,
        )


RULE = Rule("GS016", "object", check, RULE_KINDS | {HPA, SCALED_OBJECT})
