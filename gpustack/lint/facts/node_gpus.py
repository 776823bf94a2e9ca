"""How many GPUs the nodes a pod may land on have, where the set says so without a spec.

A rule that claims a container reaches "every GPU of its node", more than it was given, needs
evidence that the node has more. A spec or a live cluster gives it per node pool
(``Pool.gpus``, weighed by the rules themselves); without one, the set may still say:

- the pod's own required node selection: GFD's ``nvidia.com/gpu.count``, Karpenter's
  ``karpenter.k8s.aws/instance-gpu-count``, GKE's ``cloud.google.com/gke-accelerator-count``,
  or an instance type whose GPU count is known (``node.kubernetes.io/instance-type``);
- the set's GPU node groups (``node_groups``): a Karpenter NodePool whose requirements name the
  GPU count or instance types, an OpenShift MachineSet's instance type; each with its taints,
  so that a pod that cannot land there is not judged by it.

Each is the largest node the pod (or group) may get: evidence that such nodes exist, not that
every node is that large. Instance types: AWS's accelerated-computing types with NVIDIA GPUs
(https://docs.aws.amazon.com/ec2/latest/instancetypes/ac.html) and GCP's GPU machine types,
whose GPU count is part of the name (https://cloud.google.com/compute/docs/gpus).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from gpustack.lint.facts.node_groups import PlainTaint, karpenter_gpu
from gpustack.lint.facts.podspec import LabelTest, node_label_tests
from gpustack.lint.model import PodSpec, Resource, get_value

if TYPE_CHECKING:
    from gpustack.lint.context import LintContext

GFD_COUNT = "nvidia.com/gpu.count"
KARPENTER_COUNT = "karpenter.k8s.aws/instance-gpu-count"
GKE_COUNT = "cloud.google.com/gke-accelerator-count"
INSTANCE_TYPE = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
_COUNT_LABELS = (GFD_COUNT, KARPENTER_COUNT, GKE_COUNT)

# AWS: GPUs per size where a family has more than one; the families' other sizes have one GPU.
_AWS_SINGLE = ("xlarge", "2xlarge", "4xlarge", "8xlarge", "16xlarge")
_AWS: Mapping[str, Mapping[str, int]] = {
    "p2": {"xlarge": 1, "8xlarge": 8, "16xlarge": 16},
    "p3": {"2xlarge": 1, "8xlarge": 4, "16xlarge": 8},
    "p3dn": {"24xlarge": 8},
    "p4d": {"24xlarge": 8},
    "p4de": {"24xlarge": 8},
    "p5": {"4xlarge": 1, "48xlarge": 8},
    "p5e": {"48xlarge": 8},
    "p5en": {"48xlarge": 8},
    "g3": {"4xlarge": 1, "8xlarge": 2, "16xlarge": 4},
    "g3s": {"xlarge": 1},
    "g4dn": {**dict.fromkeys(_AWS_SINGLE, 1), "12xlarge": 4, "metal": 8},
    "g5": {**dict.fromkeys(_AWS_SINGLE, 1), "12xlarge": 4, "24xlarge": 4, "48xlarge": 8},
    "g5g": {**dict.fromkeys(_AWS_SINGLE[:4], 1), "16xlarge": 2, "metal": 2},
    "g6": {**dict.fromkeys(_AWS_SINGLE, 1), "12xlarge": 4, "24xlarge": 4, "48xlarge": 8},
    "g6e": {**dict.fromkeys(_AWS_SINGLE, 1), "12xlarge": 4, "24xlarge": 4, "48xlarge": 8},
}
_GCP_A = re.compile(r"^a\d+-[a-z]+gpu-(\d+)g$")  # a2-highgpu-8g, a3-megagpu-8g, a2-ultragpu-1g
_GCP_G2 = {"4": 1, "8": 1, "12": 1, "16": 1, "32": 1, "24": 2, "48": 4, "96": 8}  # g2-standard-N: L4s

# (what, GPUs per node of its largest node, its taints): plain data, a rule's ``set_fact``.
SizedGroup = tuple[str, int, tuple[PlainTaint, ...]]


def instance_gpus(instance_type: str) -> int | None:
    """NVIDIA GPUs of a cloud instance type, or None where it is not known."""
    name = instance_type.strip().lower()
    family, _, size = name.partition(".")
    if size:
        return _AWS.get(family, {}).get(size)
    if match := _GCP_A.match(name):
        return int(match.group(1))
    if name.startswith("g2-standard-"):
        return _GCP_G2.get(name.removeprefix("g2-standard-"))
    return None


def _largest(key: str, operator: str, values: Iterable[str]) -> int | None:
    """The most GPUs a node satisfying ``key operator values`` may have, where it says."""
    values = list(values)
    if key in INSTANCE_TYPE and operator == "In":
        counts = [count for value in values if (count := instance_gpus(value)) is not None]
        return max(counts) if counts else None
    if key not in _COUNT_LABELS:
        return None
    numbers = [int(value) for value in values if value.strip().isdigit()]
    if operator == "In" and numbers:
        return max(numbers)
    if operator == "Gt" and len(numbers) == 1:
        return numbers[0] + 1  # at least that many: more nodes than one GPU, at the least
    return None


def selected_gpus(pod: PodSpec) -> tuple[int, LabelTest] | None:
    """The most GPUs a node the pod's required selection names may have, with the test that
    says it; None where the selection names no GPU count or known instance type."""
    found: tuple[int, LabelTest] | None = None
    for test in node_label_tests(pod):
        if not test.required:
            continue
        count = _largest(test.key, test.operator, test.values)
        if count is not None and (found is None or count > found[0]):
            found = count, test
    return found


def sized_groups(ctx: LintContext) -> tuple[SizedGroup, ...]:
    """The set's GPU node groups whose nodes' GPU count it names, largest node first."""
    groups = [group for resource in ctx.resources if (group := _sized(resource)) is not None]
    return tuple(sorted(groups, key=lambda group: -group[1]))


def _sized(resource: Resource) -> SizedGroup | None:
    data = resource.data
    if resource.kind == "NodePool" and karpenter_gpu(data):
        requirements = get_value(data, "spec", "template", "spec", "requirements")
        counts = [
            count
            for item in (requirements if isinstance(requirements, list) else ())
            if isinstance(item, Mapping)
            and (count := _largest(str(item.get("key")), str(item.get("operator")), map(str, item.get("values") or ()))) is not None
        ]
        taints = get_value(data, "spec", "template", "spec", "taints")
        return (f"Karpenter NodePool {resource.ref.name}", max(counts), _plain_taints(taints)) if counts else None
    if resource.kind == "MachineSet":
        instance = get_value(data, "spec", "template", "spec", "providerSpec", "value", "instanceType")
        count = instance_gpus(instance) if isinstance(instance, str) else None
        taints = get_value(data, "spec", "template", "spec", "taints")
        return (f"MachineSet {resource.ref.name} ({instance})", count, _plain_taints(taints)) if count else None
    return None


def _plain_taints(taints: Any) -> tuple[PlainTaint, ...]:
    return tuple(
        (str(t["key"]), str(t["value"]) if t.get("value") is not None else None, str(t["effect"]))
        for t in (taints if isinstance(taints, list) else ())
        if isinstance(t, Mapping) and t.get("key") and t.get("effect")
    )
