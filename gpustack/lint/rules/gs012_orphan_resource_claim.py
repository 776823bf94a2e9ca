"""GS012: a ResourceClaim that no pod in the set references.

DRA allocates a claim when the scheduler places a pod that uses it; a claim nobody
references stays pending forever and holds nothing.
Info by default: a claim may be meant for pods created elsewhere.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.lint.context import LintContext
from gpustack.lint.facts.claims import DRA_GROUP
from gpustack.lint.model import Hit, PodSpec
from gpustack.lint.registry import Rule


def _claim_names(pod: PodSpec) -> Iterator[str]:
    claims = pod.spec.get("resourceClaims")
    for claim in claims if isinstance(claims, list) else ():
        if isinstance(claim, dict) and isinstance(claim.get("resourceClaimName"), str):
            yield claim["resourceClaimName"]


def _same_namespace(a: str | None, b: str | None) -> bool:
    # An object without a namespace lands wherever it is applied (`kubectl apply -n`,
    # `helm template` output): it may share any namespace.
    return a is None or b is None or a == b


def check(ctx: LintContext) -> Iterator[Hit]:
    referenced = [
        (pod.resource.ref.namespace, name) for pod in ctx.pod_specs for name in _claim_names(pod)
    ]
    for resource in ctx.of_kind("ResourceClaim"):
        ref = resource.ref
        if not (ref.api_version or "").startswith(DRA_GROUP):
            continue
        if any(name == ref.name and _same_namespace(ns, ref.namespace) for ns, name in referenced):
            continue
        yield Hit(
            resource,
            ("metadata", "name"),
            f"no pod or pod template in the set references {ref}: it stays pending and "
            "allocates nothing",
            fix=f"Reference it from a pod (`spec.resourceClaims[].resourceClaimName: {ref.name}`), "
            "use a ResourceClaimTemplate, or delete it.",
        )


RULE = Rule("GS012", "set", check, frozenset({"ResourceClaim"}))
