"""GS068: a GPU size its cloud has retired, where the set creates nodes of it or selects them.

Clouds retire old GPU sizes: Azure's NC, NCv2, ND and NV series (K80, P100, P40, M60) on
6 September 2023 and the NCv3 sizes (V100) on 30 September 2025, Google Cloud's K80
accelerators on 1 May 2024 (``data/retired-gpu-sizes.yaml``, each with its notice). A node pool
of such a size can no longer be created or scaled, so the GPU pods meant for it stay Pending.

Read where a set names node sizes: host scripts, setup notes, Terraform and Bicep
(``input/hostscripts``: the size set as a value, ``--node-vm-size Standard_NC6``); the node
objects of cluster APIs (Karpenter NodePools, eksctl ClusterConfigs, Azure Service Operator
and Cluster API machine pools, Config Connector node pools, OpenShift MachineSets), any string
of which is a retired size; and the node selectors and required node affinity of pods.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from gpustack.lint.context import LintContext
from gpustack.lint.facts.hostscripts import RETIRED_KEY, says
from gpustack.lint.facts.retiredsizes import RetiredSize, retired
from gpustack.lint.model import Hit, Path, Resource
from gpustack.lint.registry import Rule

# Kinds that create or describe nodes; any of their strings that is a retired size is one.
NODE_KINDS = frozenset({
    "NodePool", "EC2NodeClass", "ClusterConfig", "ManagedClustersAgentPool", "ManagedCluster", "AgentPool",
    "ContainerNodePool", "MachineSet", "MachinePool", "AzureMachineTemplate", "AzureManagedMachinePool",
    "AzureASOManagedMachinePool", "GCPMachineTemplate", "GCPManagedMachinePool", "NodeGroup",
})
_REQUIRED = ("affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")


def check(resource: Resource, ctx: LintContext) -> Iterator[Hit]:
    if resource.kind is None:
        if says(resource, RETIRED_KEY):
            found = resource.data[RETIRED_KEY]
            size = retired(str(found.get("size")))
            if size is not None:
                yield _hit(resource, (RETIRED_KEY,), f"`{found.get('says')}` sets {size.name}", size, "node pool")
        return
    if resource.kind in NODE_KINDS:
        for path, size in _sizes(resource.data, ()):
            yield _hit(resource, path, f"{resource.ref} names {size.name}", size, "node pool")
    for pod in ctx.pods_of(resource):
        for path, size in _selected(pod.spec):
            yield _hit(resource, (*pod.path, *path), f"{pod.resource.ref} selects nodes of {size.name}", size,
                       "node")


def _hit(resource: Resource, path: Path, what: str, size: RetiredSize, made: str) -> Hit:
    return Hit(
        resource,
        path,
        f"{what}, a size {size.cloud} retired on {size.date} ({size.series}, {size.gpu}): no {made} of it can be "
        "created any more, so the GPU pods meant for it stay Pending",
        fix=f"Use a current GPU size instead, {size.instead} ({size.source}).",
    )


def _sizes(value: Any, path: Path) -> Iterator[tuple[Path, RetiredSize]]:
    if isinstance(value, str):
        size = retired(value)
        if size is not None:
            yield path, size
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _sizes(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _sizes(item, (*path, index))


def _selected(spec: Mapping[str, Any]) -> Iterator[tuple[Path, RetiredSize]]:
    """Retired sizes among a pod's node selector values and its required node affinity's values."""
    selector = spec.get("nodeSelector")
    for key, value in selector.items() if isinstance(selector, Mapping) else ():
        if isinstance(value, str) and (size := retired(value)) is not None:
            yield ("nodeSelector", key), size
    terms: Any = spec
    for step in _REQUIRED:
        terms = terms.get(step) if isinstance(terms, Mapping) else None
    for number, term in enumerate(terms if isinstance(terms, list) else ()):
        expressions = term.get("matchExpressions") if isinstance(term, Mapping) else None
        for index, expression in enumerate(expressions if isinstance(expressions, list) else ()):
            values = expression.get("values") if isinstance(expression, Mapping) else None
            for at, value in enumerate(values if isinstance(values, list) else ()):
                if isinstance(value, str) and (size := retired(value)) is not None:
                    yield (*_REQUIRED, number, "matchExpressions", index, "values", at), size


RULE = Rule("GS068", "object", check)
