"""GS063: a DRA claim whose request no node of the cluster's GPU pools can satisfy.

All devices of a ResourceClaim are allocated from one node's ResourceSlices (the pod runs
there), so a request for more whole GPUs than any node of the pools has, or for a GPU whose
product no pool has, is never allocated: every pod of the claim stays Pending ("cannot allocate
all claims", https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/).

Judged: requests (``exactly`` of resource.k8s.io/v1, the request itself in v1beta1) of whole
GPUs of NVIDIA's driver, through its ``gpu.nvidia.com`` class or a DeviceClass of the set whose
selectors admit a whole GPU and no MIG device; ``ExactCount`` against the GPUs per node of the
pools whose GPU the class's and request's selectors admit (``facts/dradevices.pool_gpu``),
``All`` against none admitted. NVIDIA's driver publishes at most one whole-GPU device per GPU
(a GPU split into MIG instances publishes those instead), so a pool's GPUs per node bound what
one node offers. ``firstAvailable`` alternatives, MIG classes and classes the set does not hold
stay open. The pools come from the spec or a live cluster; without them the rule is silent.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gpustack.lint.context import LintContext
from gpustack.lint.facts import dradevices
from gpustack.lint.facts.claims import DRA_GROUP
from gpustack.lint.facts.pools import Pool
from gpustack.lint.model import Hit, Path, Resource
from gpustack.lint.registry import Rule

_DEVICES = {"ResourceClaim": ("spec", "devices"), "ResourceClaimTemplate": ("spec", "spec", "devices")}


@dataclass(frozen=True)
class _Request:
    path: Path  # of the request's fields: ``exactly`` (v1) or the request (v1beta1)
    device_class: str
    all_devices: bool
    count: int
    selectors: tuple[str, ...]


def check(ctx: LintContext) -> Iterator[Hit]:
    cluster = ctx.cluster
    if cluster is None:
        return
    pools = [pool for pool in cluster.pools if pool.gpus]
    if not pools:
        return
    classes = {
        resource.ref.name: _expressions(resource.get(("spec", "selectors")))
        for resource in ctx.of_kind("DeviceClass")
        if (resource.api_version or "").startswith(DRA_GROUP)
    }
    for name, selectors in cluster.device_classes:  # the spec's, which render writes
        classes.setdefault(name, selectors)
    classes.setdefault(dradevices.DRIVER, (dradevices.GPU_CLASS_SELECTOR,))
    for kind, devices in _DEVICES.items():
        for resource in ctx.of_kind(kind):
            if (resource.api_version or "").startswith(DRA_GROUP):
                for request in _requests(resource, devices):
                    yield from _judge(resource, request, classes, pools)


def _judge(resource: Resource, request: _Request, classes: Mapping[str, tuple[str, ...]], pools: Sequence[Pool]) -> Iterator[Hit]:
    own = classes.get(request.device_class)
    if own is None or not _whole_gpus(own):
        return
    expressions = [*own, *request.selectors]
    # A pool's GPU is refused only where a GPU built from the selectors' own literals passes
    # them: then the pool's product is what fails (regular expressions, several tests of one
    # attribute and semver or quantity tests leave every pool open).
    witness, _ = dradevices.witnesses(expressions)
    judged = dradevices.admits(expressions, witness) is True
    admitted = [
        pool for pool in pools
        if not judged or dradevices.admits(expressions, dradevices.pool_gpu(pool.gpu.product, expressions)) is not False
    ]
    most = max((pool.gpus for pool in admitted), default=0)
    need = 1 if request.all_devices else request.count
    if most >= need:
        return
    offered = "; ".join(f"{pool.name}: {pool.gpus} × {pool.gpu.product}" for pool in pools)
    if not admitted:
        why = f"no GPU of the pools ({offered}) passes the selectors of class {request.device_class}" + (
            " and the request" if request.selectors else "")
        path = (*request.path, "selectors") if request.selectors else (*request.path, "deviceClassName")
    else:
        names = ", ".join(pool.name for pool in admitted)
        why = f"it asks for {request.count} devices of {request.device_class}, and the largest node of the pools whose " \
              f"GPUs it admits ({names}) has {most} ({offered})"
        path = (*request.path, "count")
    yield Hit(
        resource,
        path,
        f"{resource.ref}: {why}: every device of a claim comes from one node, so the claim is never allocated and "
        "its pods stay Pending",
        fix="Ask for at most as many GPUs as one node of a pool has, of a product a pool has.",
    )


def _whole_gpus(expressions: Sequence[str]) -> bool:
    """Whether a class's selectors admit a whole GPU and no MIG device (its devices are GPUs)."""
    gpu, mig = dradevices.witnesses(expressions)
    return dradevices.admits(expressions, gpu) is True and dradevices.admits(expressions, mig) is False


def _requests(resource: Resource, devices: Path) -> Iterator[_Request]:
    requests = resource.get((*devices, "requests"))
    for index, request in enumerate(requests if isinstance(requests, list) else ()):
        if not isinstance(request, Mapping):
            continue
        path: Path = (*devices, "requests", index)
        fields = request.get("exactly") if isinstance(request.get("exactly"), Mapping) else request
        if fields is request and "firstAvailable" in request:
            continue  # alternatives stay open
        if fields is not request:
            path = (*path, "exactly")
        name, mode, count = fields.get("deviceClassName"), fields.get("allocationMode", "ExactCount"), fields.get("count", 1)
        if not isinstance(name, str) or mode not in ("ExactCount", "All"):
            continue
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            continue
        yield _Request(path, name, mode == "All", count, _expressions(fields.get("selectors")))


def _expressions(selectors: Any) -> tuple[str, ...]:
    found = []
    for selector in selectors if isinstance(selectors, list) else ():
        cel = selector.get("cel") if isinstance(selector, Mapping) else None
        expression = cel.get("expression") if isinstance(cel, Mapping) else None
        if isinstance(expression, str):
            found.append(expression)
    return tuple(found)


RULE = Rule("GS063", "set", check, frozenset(_DEVICES))
