"""DRA claims: whether a pod's ``resourceClaims`` hand out GPUs.

``ClaimIndex`` holds the input set's ResourceClaims, ResourceClaimTemplates and DeviceClasses,
and tells whether a claim resolves to a GPU DeviceClass, or cannot be resolved (which counts).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from gpustack.lint.facts.quantities import is_gpu_resource
from gpustack.lint.facts.registered import gpu_device_classes, gpu_dra_drivers, non_gpu_device_classes
from gpustack.lint.model import Resource

DRA_GROUP = "resource.k8s.io/"  # the API group of DeviceClasses, ResourceClaims and their templates
# DeviceClasses that hand out no GPUs besides the DRA driver charts' own
# (``registered.non_gpu_device_classes``): GKE's network devices (DRANET).
OTHER_NON_GPU_DEVICE_CLASSES = frozenset({"netdev.google.com"})


@dataclass(frozen=True)
class ClaimIndex:
    """ResourceClaims, ResourceClaimTemplates and DeviceClasses of the input set."""

    claims: Mapping[tuple[str | None, str], frozenset[str | None]]  # (ns, name) -> device classes
    templates: Mapping[tuple[str | None, str], frozenset[str | None]]
    classes: Mapping[str, bool]  # DeviceClass name -> hands out GPUs

    @classmethod
    def from_resources(cls, resources: Iterable[Resource]) -> ClaimIndex:
        claims: dict[tuple[str | None, str], frozenset[str | None]] = {}
        templates: dict[tuple[str | None, str], frozenset[str | None]] = {}
        classes: dict[str, bool] = {}
        for resource in resources:
            if resource.kind not in ("ResourceClaim", "ResourceClaimTemplate", "DeviceClass"):
                continue  # before ``ref``, which most objects of a large set never need
            ref = resource.ref
            if not ref.name or not (ref.api_version or "").startswith(DRA_GROUP):
                continue
            if ref.kind == "ResourceClaim":
                claims[(ref.namespace, ref.name)] = _device_classes(resource.get(("spec",)))
            elif ref.kind == "ResourceClaimTemplate":
                templates[(ref.namespace, ref.name)] = _device_classes(resource.get(("spec", "spec")))
            elif ref.kind == "DeviceClass":
                classes[ref.name] = _is_gpu_device_class(ref.name, resource.get(("spec",)))
        return cls(claims, templates, classes)

    def claim_is_gpu(self, namespace: str | None, entry: Any) -> bool:
        """Whether a pod's ``resourceClaims`` entry hands out a GPU, or cannot be resolved."""
        if not isinstance(entry, Mapping):
            return True
        source = entry.get("source") if isinstance(entry.get("source"), Mapping) else entry
        for key, table in (("resourceClaimName", self.claims), ("resourceClaimTemplateName", self.templates)):
            name = source.get(key)
            if isinstance(name, str):
                found = _lookup(table, namespace, name)
                return found is None or any(self._class_is_gpu(c) for c in found)
        return True

    def _class_is_gpu(self, name: str | None) -> bool:
        if name is None or name in gpu_device_classes():
            return True
        if name in non_gpu_device_classes() or name in OTHER_NON_GPU_DEVICE_CLASSES:
            return False
        return self.classes.get(name, True)  # unknown class: cannot be resolved


def _lookup(
    table: Mapping[tuple[str | None, str], frozenset[str | None]], namespace: str | None, name: str
) -> frozenset[str | None] | None:
    if (namespace, name) in table:
        return table[(namespace, name)]
    # One side without a namespace (a bare manifest applied with -n): match by name.
    for (other_ns, other_name), found in table.items():
        if other_name == name and (namespace is None or other_ns is None):
            return found
    return None


def _device_classes(claim_spec: Any) -> frozenset[str | None]:
    """Device class names a claim spec asks for; None stands for a request without one."""
    devices = claim_spec.get("devices") if isinstance(claim_spec, Mapping) else None
    requests = devices.get("requests") if isinstance(devices, Mapping) else None
    if not isinstance(requests, list) or not requests:
        return frozenset({None})
    names: set[str | None] = set()
    for request in requests:
        if not isinstance(request, Mapping):
            continue
        exactly = request.get("exactly")
        alternatives = request.get("firstAvailable")
        if isinstance(exactly, Mapping):  # resource.k8s.io/v1
            names.add(_text(exactly.get("deviceClassName")))
        elif isinstance(alternatives, list):
            names.update(_text(a.get("deviceClassName")) for a in alternatives if isinstance(a, Mapping))
        else:  # v1beta1 and earlier
            names.add(_text(request.get("deviceClassName")))
    return frozenset(names or {None})


def _is_gpu_device_class(name: str, spec: Any) -> bool:
    if name in gpu_device_classes():
        return True
    spec = spec if isinstance(spec, Mapping) else {}
    extended = spec.get("extendedResourceName")
    if isinstance(extended, str) and is_gpu_resource(extended):
        return True
    text = repr(spec.get("selectors"))
    return any(f"'{driver}'" in text or f'"{driver}"' in text for driver in gpu_dra_drivers())


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
