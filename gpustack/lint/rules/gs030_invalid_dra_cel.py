"""GS030: a DRA selector whose CEL does not compile, or names what the driver does not publish.

A DeviceClass (``spec.selectors``) and each request of a ResourceClaim or ResourceClaimTemplate
(``exactly.selectors``, ``firstAvailable[].selectors``; ``requests[].selectors`` in v1beta1)
select devices with CEL over ``device``. An expression that does not parse is
rejected by the API server; one that reads ``device.attributes["<domain>"].<name>`` or
``device.capacity["<domain>"].<name>`` that the driver never publishes fails at run time
(no such key) on every device of that driver, so the claim is never allocated. The published
names are data (``data/dra-drivers.yaml``, from the drivers' sources and the ResourceSlices they publish),
read by ``facts.dracel``, which ``gpustack validate`` uses on the spec's selectors too.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from gpustack.lint.context import LintContext
from gpustack.lint.facts.claims import DRA_GROUP
from gpustack.lint.facts.dracel import compile_error, unknown_names
from gpustack.lint.model import Hit, Path, Resource, Severity
from gpustack.lint.registry import Rule


def _selectors(node: Any, path: Path) -> Iterator[tuple[Path, str]]:
    """``(path of cel.expression, expression)`` of a ``selectors`` list."""
    for index, selector in enumerate(node if isinstance(node, list) else ()):
        cel = selector.get("cel") if isinstance(selector, Mapping) else None
        expression = cel.get("expression") if isinstance(cel, Mapping) else None
        if isinstance(expression, str):
            yield (*path, index, "cel", "expression"), expression


def expressions(resource: Resource) -> Iterator[tuple[Path, str]]:
    """Every selector expression of a DeviceClass, ResourceClaim or ResourceClaimTemplate."""
    if resource.kind == "DeviceClass":
        yield from _selectors(resource.get(("spec", "selectors")), ("spec", "selectors"))
        return
    devices: Path = ("spec", "spec", "devices") if resource.kind == "ResourceClaimTemplate" else ("spec", "devices")
    for index in range(_length(resource.get((*devices, "requests")))):
        path = (*devices, "requests", index)
        places = [(*path, "selectors"), (*path, "exactly", "selectors")]  # v1beta1, v1
        alternatives = _length(resource.get((*path, "firstAvailable")))
        places += [(*path, "firstAvailable", position, "selectors") for position in range(alternatives)]
        for place in places:
            yield from _selectors(resource.get(place), place)


def _length(items: Any) -> int:
    return len(items) if isinstance(items, list) else 0


def check(resource: Resource, ctx: LintContext) -> Iterator[Hit]:
    if not (resource.api_version or "").startswith(DRA_GROUP):
        return
    for path, expression in expressions(resource):
        error = compile_error(expression)
        if error is not None:
            yield Hit(resource, path, f"{resource.ref}: the CEL selector does not compile: {error}")
            continue
        for unknown in unknown_names(expression):
            closest = unknown.closest
            hint = f"did you mean {closest}?" if closest else f"it publishes {', '.join(unknown.published)}"
            yield Hit(
                resource,
                path,
                f"{resource.ref}: `{unknown.lookup}`: the {unknown.domain} driver publishes no {unknown.kind} "
                f"{unknown.name} ({hint}); the selector fails on its devices (no such key) and claims that use "
                "it are never allocated",
                severity=Severity.WARNING,
                fix=f"Use `{closest}`." if closest else f"Use a name the driver publishes: {', '.join(unknown.published)}.",
            )


RULE = Rule("GS030", "object", check, frozenset({"DeviceClass", "ResourceClaim", "ResourceClaimTemplate"}))
