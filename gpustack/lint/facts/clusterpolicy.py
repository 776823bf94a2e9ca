"""The GPU Operator's ``ClusterPolicy``: which objects are one, and the set's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpustack.lint.model import Resource

if TYPE_CHECKING:
    from gpustack.lint.context import LintContext


def is_cluster_policy(resource: Resource) -> bool:
    """The GPU Operator's ``ClusterPolicy`` (``nvidia.com/``), which configures its operands."""
    return resource.kind == "ClusterPolicy" and (resource.api_version or "").startswith("nvidia.com/")


def cluster_policies(ctx: LintContext) -> list[Resource]:
    """The set's GPU Operator ``ClusterPolicy`` objects, in input order."""
    return [resource for resource in ctx.of_kind("ClusterPolicy") if is_cluster_policy(resource)]
