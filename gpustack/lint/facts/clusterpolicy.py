"""The GPU Operator's ``ClusterPolicy``: which objects are one, and the set's; and the operator
installed from OpenShift's OperatorHub."""

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


def operatorhub_operator(ctx: LintContext) -> bool:
    """Whether the set subscribes to the GPU Operator on OperatorHub (an OLM ``Subscription`` of
    ``gpu-operator-certified``): the operator installed without a chart release."""
    return any("gpu-operator" in str(resource.get(("spec", "name"), "")) for resource in ctx.of_kind("Subscription"))
