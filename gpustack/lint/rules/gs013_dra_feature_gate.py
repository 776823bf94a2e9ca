"""GS013: DRA fields whose feature gate is off at the cluster's version and gates.

Each field below is dropped by the API server (or never honoured by the scheduler) while its
gate is off: the object applies, the claim never gets what it asks for.
HAMi's DRA demo turns ``DRAConsumableCapacity`` on by hand for its capacity claim
(``capacity.requests: {cores: "30", memory: 4Gi}``); the gate is alpha and off in 1.34 and
1.35, beta and on from 1.36. Which ``resource.k8s.io`` versions the cluster serves is GS060's.

Needs the cluster's version and gates (``--spec``): without them nothing is reported.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gpustack.lint.context import LintContext
from gpustack.lint.facts.pools import ClusterFacts
from gpustack.lint.model import Hit, Path, Resource
from gpustack.lint.registry import Rule

if TYPE_CHECKING:
    from gpustack.spec.featuregates import Gate

GROUP = "resource.k8s.io"


@dataclass(frozen=True)
class Use:
    """A field that needs a gate, and where it is written."""

    gate: str
    what: str
    path: Path


def _request_uses(request: Mapping[str, Any], path: Path) -> Iterator[Use]:
    """One device request: v1/v1beta2 put the fields under ``exactly`` (and subrequests under
    ``firstAvailable``), v1beta1 on the request itself."""
    alternatives = request.get("firstAvailable")
    if isinstance(alternatives, list):
        yield Use("DRAPrioritizedList", "a prioritized list of devices (firstAvailable)", (*path, "firstAvailable"))
        for index, sub in enumerate(alternatives):
            if isinstance(sub, Mapping):
                yield from _device_uses(sub, (*path, "firstAvailable", index))
    exactly = request.get("exactly")
    if isinstance(exactly, Mapping):
        yield from _device_uses(exactly, (*path, "exactly"))
    else:
        yield from _device_uses(request, path)


def _device_uses(device: Mapping[str, Any], path: Path) -> Iterator[Use]:
    capacity = device.get("capacity")
    if isinstance(capacity, Mapping) and capacity:
        requests = capacity.get("requests")
        names = ", ".join(map(str, requests)) if isinstance(requests, Mapping) else "capacity"
        yield Use("DRAConsumableCapacity", f"consumable capacity ({names})", (*path, "capacity"))
    if device.get("adminAccess") is True:
        yield Use("DRAAdminAccess", "admin access", (*path, "adminAccess"))
    if isinstance(device.get("tolerations"), list) and device["tolerations"]:
        yield Use("DRADeviceTaints", "device taint tolerations", (*path, "tolerations"))


def _claim_uses(spec: Any, path: Path) -> Iterator[Use]:
    devices = spec.get("devices") if isinstance(spec, Mapping) else None
    if not isinstance(devices, Mapping):
        return
    requests = devices.get("requests")
    for index, request in enumerate(requests if isinstance(requests, list) else ()):
        if isinstance(request, Mapping):
            yield from _request_uses(request, (*path, "devices", "requests", index))
    constraints = devices.get("constraints")
    for index, constraint in enumerate(constraints if isinstance(constraints, list) else ()):
        if isinstance(constraint, Mapping) and "distinctAttribute" in constraint:
            where = (*path, "devices", "constraints", index, "distinctAttribute")
            yield Use("DRAConsumableCapacity", "a distinctAttribute constraint", where)


def uses(resource: Resource) -> Iterator[Use]:
    """The gated DRA fields of a ResourceClaim, ResourceClaimTemplate or DeviceClass."""
    if resource.kind == "ResourceClaim":
        yield from _claim_uses(resource.get(("spec",)), ("spec",))
    elif resource.kind == "ResourceClaimTemplate":
        yield from _claim_uses(resource.get(("spec", "spec")), ("spec", "spec"))
    elif resource.kind == "DeviceClass" and resource.get(("spec", "extendedResourceName")):
        yield Use("DRAExtendedResource", "an extended resource name", ("spec", "extendedResourceName"))


def _why_off(gate: Gate, cluster: ClusterFacts) -> str:
    state = gate.state(cluster.minor)
    version = f"Kubernetes {cluster.kubernetes_version}"
    if state is None:
        return f"it does not exist in {version}"
    if state.default:
        return f"the spec's cluster.featureGates turns it off ({version} has it on by default)"
    return f"it is {state.stage} and off by default in {version}, and the spec does not turn it on"


def _fix(gate: Gate, cluster: ClusterFacts) -> str:
    later = sorted(m for m, state in gate.states.items() if m > cluster.minor and state.default)
    upgrade = f", or run Kubernetes 1.{later[0]}, where it is on by default" if later else ""
    return (
        f"Set `{gate.name}: true` in the spec's cluster.featureGates (gpustack passes it to the components "
        f"that read it){upgrade}; or drop the field."
    )


def check(resource: Resource, ctx: LintContext) -> Iterator[Hit]:
    cluster = ctx.cluster
    api_version = resource.api_version or ""
    if cluster is None or not api_version.startswith(GROUP + "/"):
        return
    from gpustack.spec.featuregates import GATES  # only with a spec: not loaded by a plain lint

    for use in uses(resource):
        gate = GATES.get(use.gate)
        if gate is not None and not cluster.gate(use.gate):
            yield Hit(
                resource,
                use.path,
                f"{resource.ref} asks for {use.what}, which needs feature gate {use.gate}: "
                f"{_why_off(gate, cluster)}",
                fix=_fix(gate, cluster),
            )


RULE = Rule("GS013", "object", check, frozenset({"ResourceClaim", "ResourceClaimTemplate", "DeviceClass"}))
