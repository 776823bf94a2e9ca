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


def check(pod: PodSpec, ctx: LintContext) -> Iterator[Hit]:
    if not (pod.gpu_consumer or pod.system_component):
        return
    namespace = pod.resource.ref.namespace
    levels = {name: (level, file, line) for name, level, file, line in ctx.set_fact(enforced_levels)}
    if namespace not in levels:
        return
    found = baseline_violation(pod)
    if found is None:
        return
    path, what = found
    level, file, line = levels[namespace]
    yield Hit(
        pod.resource,
        path,
        f"{subject(pod)} {what}, which Pod Security's baseline level forbids, and namespace {namespace} enforces "
        f"{level} ({file}:{line}): the API server refuses its pods, so none ever runs",
        fix=f"Label namespace {namespace} `pod-security.kubernetes.io/enforce: privileged` (GPU node agents need "
        "host access), or move the workload to a namespace that allows it.",
    )


RULE = Rule("GS067", "pod", check, set_fact=enforced_levels)
