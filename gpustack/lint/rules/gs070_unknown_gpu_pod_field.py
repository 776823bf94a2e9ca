"""GS070: a GPU pod spec or container with a field Kubernetes does not have.

A misspelt field (``serivceAccountName``), or one written at the wrong level (a container's
``runtimeClassName``, ``nodeSelector`` or ``tolerations``, which belong to the pod spec), is an
unknown field: ``kubectl apply`` and ``oc create`` validate strictly by default and refuse the
object ("unknown field"), Helm refuses it the same way, and a client that only warns drops
it, so the GPU pod runs without what the field was meant to say (its runtime class, its node
selection). Judged for GPU workloads and GPU node agents, in the built-in kinds whose pod
template is Kubernetes' own (custom resources add fields of their own to pod specs); the
fields are Kubernetes' (``data/pod-fields.yaml``).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping
from functools import cache

from gpustack.lint.context import LintContext
from gpustack.lint.facts.podspec import subject
from gpustack.lint.model import Hit, PodSpec
from gpustack.lint.registry import Rule
from gpustack.shipped import lint_data

BUILT_IN_TEMPLATES = frozenset({
    "Pod", "PodTemplate", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "ReplicationController", "Job",
    "CronJob", "DeploymentConfig",
})
FIX = "Write the field by its Kubernetes name at its level (pod spec or container), or remove it."


@cache
def _fields() -> Mapping[str, frozenset[str]]:
    return {level: frozenset(names) for level, names in lint_data("pod-fields.yaml").items()}


def check(pod: PodSpec, ctx: LintContext) -> Iterator[Hit]:
    if pod.resource.kind not in BUILT_IN_TEMPLATES or not (pod.gpu_consumer or pod.system_component):
        return
    fields = _fields()
    for key in pod.spec:
        if key not in fields["podSpec"]:
            hint = _hint(str(key), fields["podSpec"], fields["container"], "a container's field, not the pod spec's")
            yield _hit(pod, (*pod.path, key), f"{subject(pod)} has `{key}` in its pod spec, which PodSpec does not have{hint}")
    for container in pod.containers():
        for key in container.data:
            if key not in fields["container"]:
                hint = _hint(str(key), fields["container"], fields["podSpec"], "a pod spec field, not a container's")
                yield _hit(pod, (*container.path, key), f"{subject(pod, container)} has `{key}`, which Container does not have{hint}")
        resources = container.data.get("resources")
        for key in resources if isinstance(resources, Mapping) else ():
            if key not in fields["resources"]:
                hint = _hint(str(key), fields["resources"], frozenset(), "")
                yield _hit(pod, (*container.path, "resources", key),
                           f"{subject(pod, container)} has `resources.{key}`, which ResourceRequirements does not have{hint}")


def _hint(key: str, level: frozenset[str], other: frozenset[str], misplaced: str) -> str:
    if key in other:
        return f" ({misplaced})"
    close = difflib.get_close_matches(key, sorted(level), n=1, cutoff=0.8)
    return f" (did you mean `{close[0]}`?)" if close else ""


def _hit(pod: PodSpec, path: tuple[str | int, ...], said: str) -> Hit:
    return Hit(
        pod.resource,
        path,
        f"{said}: kubectl, oc and Helm refuse the object (unknown field), and a client that only warns drops the field, "
        "so the GPU pod runs without what it says",
        fix=FIX,
    )


RULE = Rule("GS070", "pod", check)
