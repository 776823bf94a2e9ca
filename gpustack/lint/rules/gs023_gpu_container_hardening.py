"""GS023: a GPU container that keeps its capabilities and may escalate privileges.

The nvidia runtime needs neither: NVIDIA's own device plugin runs with
``allowPrivilegeEscalation: false`` and ``capabilities.drop: [ALL]`` and still reads every GPU
through NVML. A GPU container runs vendor libraries and large model code;
dropping what it does not need is cheap.

Opt-in (``optIn: true`` in policies/GS023.yaml): hardening is no GPU pitfall, and on public
repositories every finding of a default run was judged noise (first-contact batch 1: 13 of 13),
so the rule runs only when selected by id.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from gpustack.lint.context import LintContext
from gpustack.lint.facts.consumers import is_gpu_workload, uses_gpu
from gpustack.lint.facts.podspec import subject
from gpustack.lint.model import AppendItem, Container, Edit, Hit, PodSpec, SetValue
from gpustack.lint.registry import Rule

FIX = (
    "Set `securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}` "
    "on the container."
)
NO_ESCALATION = "allowPrivilegeEscalation: false"
DROP_ALL = "capabilities.drop: [ALL]"


def missing_hardening(container: Container) -> list[str]:
    context = container.data.get("securityContext")
    context = context if isinstance(context, Mapping) else {}
    capabilities = context.get("capabilities")
    dropped = capabilities.get("drop") if isinstance(capabilities, Mapping) else None
    missing = []
    if context.get("allowPrivilegeEscalation") is not False:
        missing.append(NO_ESCALATION)
    if not isinstance(dropped, list) or "ALL" not in {str(c).upper() for c in dropped}:
        missing.append(DROP_ALL)
    return missing


def hardening_edits(container: Container) -> tuple[Edit, ...]:
    """The missing fields, merged into the container's securityContext. None where a person
    decides: a privileged container (the API server rejects it with allowPrivilegeEscalation
    false; GS002 reports it) or one that asks for escalation explicitly."""
    context = container.data.get("securityContext")
    context = context if isinstance(context, Mapping) else {}
    if context.get("privileged") is True or context.get("allowPrivilegeEscalation") is True:
        return ()
    path = (*container.path, "securityContext")
    missing = missing_hardening(container)
    edits: list[Edit] = []
    if NO_ESCALATION in missing:
        edits.append(SetValue((*path, "allowPrivilegeEscalation"), False))
    if DROP_ALL in missing:
        edits.append(AppendItem((*path, "capabilities", "drop"), "ALL"))
    return tuple(edits)


def check(pod: PodSpec, ctx: LintContext) -> Iterator[Hit]:
    if not is_gpu_workload(pod):
        return
    for container in pod.containers():
        if not uses_gpu(container):
            continue
        missing = missing_hardening(container)
        if not missing:
            continue
        context = container.data.get("securityContext")
        path = (*container.path, "securityContext") if isinstance(context, Mapping) else container.path
        yield Hit(
            pod.resource,
            path,
            f"{subject(pod, container)} uses GPUs without {' and '.join(missing)}",
            fix=FIX,
            edits=hardening_edits(container),
        )


RULE = Rule("GS023", "pod", check)
