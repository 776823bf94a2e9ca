"""GS019: selecting GPU nodes by instance type on K3s without a cloud provider.

Without a cloud controller, K3s (and RKE2) fill ``node.kubernetes.io/instance-type`` with their
own name: on an EC2 g6.2xlarge the label reads ``k3s``, so a selector on the
EC2 instance type never matches. GFD's ``nvidia.com/gpu.machine`` carries the machine type
(from DMI) on any distribution.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.lint.context import LintContext
from gpustack.lint.facts.podspec import node_label_tests, subject
from gpustack.lint.model import Hit, PodSpec
from gpustack.lint.registry import Rule

INSTANCE_TYPE_LABELS = frozenset({"node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type"})
# Distributions that label nodes with their own name when no cloud provider runs.
SELF_LABELLING = frozenset({"k3s", "rke2"})
FIX = (
    "Select the machine by GFD's `nvidia.com/gpu.machine` (e.g. `g6.2xlarge`) or by "
    "`nvidia.com/gpu.product`."
)


def check(pod: PodSpec, ctx: LintContext) -> Iterator[Hit]:
    distribution = ctx.distribution
    if distribution not in SELF_LABELLING or not (pod.gpu_consumer or pod.system_component):
        return
    for test in node_label_tests(pod):
        if not test.required or not test.selects or test.key not in INSTANCE_TYPE_LABELS:
            continue
        if test.operator == "In" and set(test.values) <= SELF_LABELLING:
            continue  # selects the distribution's own value on purpose
        wanted = ", ".join(test.values) or "any value"
        yield Hit(
            pod.resource,
            test.path,
            f"{subject(pod)} selects GPU nodes by {test.key} ({wanted}): on {distribution} "
            f"without a cloud provider every node's value is {distribution!r}",
            fix=FIX,
        )


RULE = Rule("GS019", "pod", check)
