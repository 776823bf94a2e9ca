"""Test helper: the pod specs of a whole loaded input set, as the engine extracts them."""

from __future__ import annotations

from collections.abc import Iterable

from gpustack.lint.facts.claims import ClaimIndex
from gpustack.lint.facts.podspec import extract_pod_specs
from gpustack.lint.model import PodSpec, Resource


def extract_all(resources: Iterable[Resource]) -> tuple[PodSpec, ...]:
    """Pod specs of a whole input set, with claims resolved against that set."""
    resources = tuple(resources)
    claims = ClaimIndex.from_resources(resources)
    return tuple(pod for resource in resources for pod in extract_pod_specs(resource, claims))
