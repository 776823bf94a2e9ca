"""GS006: ``nvidia.com/*`` extended resources with requests ≠ limits or non-integer counts.

Extended resources cannot be overcommitted: the API server requires a limit, requests equal
to it, and whole numbers (with limits alone, requests follow). A manifest
that breaks this is rejected at apply time, often deep inside a Helm release or an operator.
On GKE a request without a limit is info: Autopilot sets limits from requests and admits it
(https://cloud.google.com/kubernetes-engine/docs/concepts/autopilot-resource-requests).
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.lint.context import LintContext
from gpustack.lint.facts.consumers import is_gpu_workload
from gpustack.lint.facts.podspec import subject
from gpustack.lint.facts.quantities import NVIDIA_PREFIX, ResourceAmount, is_template_placeholder, resource_amounts
from gpustack.lint.facts.managed import pod_cloud, set_cloud
from gpustack.lint.model import Container, Edit, Hit, PodSpec, SetValue, Severity
from gpustack.lint.registry import Rule

FIX = "Set the GPU resource under `limits` only, as a whole number (requests default to limits)."
WITHOUT_LIMIT = " without a limit"


def _problems(container: Container) -> Iterator[tuple[ResourceAmount, str, tuple[Edit, ...]]]:
    """Each problem with the edits that fix it: a missing or different limit becomes the
    request; a value that is no whole number needs a person."""
    amounts = [a for a in resource_amounts(container) if a.name.startswith(NVIDIA_PREFIX)]
    limits = {a.name: a for a in amounts if a.section == "limits"}
    for amount in amounts:
        if is_template_placeholder(amount.raw):
            continue  # an unrendered template: the value is not known yet
        if amount.quantity is None:
            yield amount, f"{amount.section} {amount.name}: {amount.raw!r} is not a quantity", ()
        elif amount.quantity.denominator != 1:
            yield amount, f"{amount.section} {amount.name}: {amount.raw} is not a whole number", ()
        elif amount.section == "requests":
            limit = limits.get(amount.name)
            same_limit = (SetValue((*container.path, "resources", "limits", amount.name), amount.raw),)
            if limit is None:
                yield amount, f"requests {amount.name}{WITHOUT_LIMIT}", same_limit
            elif limit.quantity is not None and limit.quantity != amount.quantity:
                yield amount, f"requests {amount.name} {amount.raw} but limits it to {limit.raw}", same_limit


def check(pod: PodSpec, ctx: LintContext) -> Iterator[Hit]:
    if not is_gpu_workload(pod):
        return
    gke = (pod_cloud(pod) or ctx.distribution or ctx.set_fact(set_cloud)) == "gke"
    for container in pod.containers():
        for amount, what, edits in _problems(container):
            if gke and what.endswith(WITHOUT_LIMIT):
                yield Hit(
                    pod.resource,
                    amount.path,
                    f"{subject(pod, container)} {what}: GKE Autopilot sets limits from requests and admits it, a "
                    "GKE Standard cluster's API server rejects the pod (extended resources need equal requests and "
                    "limits)",
                    severity=Severity.INFO,
                    fix=FIX,
                    edits=edits,
                )
                continue
            yield Hit(
                pod.resource,
                amount.path,
                f"{subject(pod, container)} {what}: extended resources need equal, whole "
                "requests and limits and the API server rejects the pod",
                fix=FIX,
                edits=edits,
            )


RULE = Rule("GS006", "pod", check, set_fact=set_cloud)
