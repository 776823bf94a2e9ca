"""GS067: a GPU pod or GPU node agent in a namespace whose Pod Security level refuses it.

A Namespace of the set that enforces ``baseline`` (or ``restricted``) makes the API server refuse
every pod there that breaks a baseline control (``facts/podsecurity``): a GPU node agent that
mounts the kubelet's folders from the host, or runs privileged, never gets a pod, and nothing
but the controller's events says so. Judged where the set holds the Namespace with its label
and the workload names that namespace.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.lint.context import LintContext
from gpustack.lint.facts.podsecurity import baseline_violation, enforced_levels
from gpustack.lint.facts.podspec import subject
from gpustack.lint.model import Hit, PodSpec
from gpustack.lint.registry import Rule


def check(ctx: LintContext) -> Iterator[Hit]:
    levels = {name: (level, file, line) for name, level, file, line in enforced_levels(ctx)}
    if not levels:
        return
    for pod in ctx.pod_specs:
        namespace = pod.resource.ref.namespace
        if namespace in levels and (pod.gpu_consumer or pod.system_component):
            yield from _refused(pod, namespace, *levels[namespace])


def _refused(pod: PodSpec, namespace: str, level: str, file: str, line: int) -> Iterator[Hit]:
    found = baseline_violation(pod)
    if found is None:
        return
    path, what = found
    yield Hit(
        pod.resource,
        path,
        f"{subject(pod)} {what}, which Pod Security's baseline level forbids, and namespace {namespace} enforces "
        f"{level} ({file}:{line}): the API server refuses its pods, so none ever runs",
        fix=f"Label namespace {namespace} `pod-security.kubernetes.io/enforce: privileged` (GPU node agents need "
        "host access), or move the workload to a namespace that allows it.",
    )


# A set rule of Namespaces: it finds nothing in a set that holds none (and is imported only where one is).
RULE = Rule("GS067", "set", check, frozenset({"Namespace"}))
