"""GS030: a DRA selector whose CEL does not compile, or names what the driver does not publish.

A DeviceClass (``spec.selectors``) and each request of a ResourceClaim or ResourceClaimTemplate
(``exactly.selectors``, ``firstAvailable[].selectors``; ``requests[].selectors`` in v1beta1)
select devices with CEL over ``device``. An expression that does not parse is
rejected by the API server; one that reads ``device.attributes["<domain>"].<name>`` or
``device.capacity["<domain>"].<name>`` that the driver never publishes fails at run time
(no such key) on every device of that driver, so the claim is never allocated. The published
names are data (``data/dra-drivers.yaml``, from the drivers' sources and the ResourceSlices they publish).
"""

from __future__ import annotations

import difflib
import fnmatch
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from gpustack.lint.context import LintContext
from gpustack.lint.model import Hit, Path, Resource, Severity
from gpustack.lint.registry import Rule
from gpustack.shipped import lint_data

DRA_GROUP = "resource.k8s.io/"
# `device.attributes["gpu.nvidia.com"].productName` or `…["productName"]`; either quote.
_LOOKUP = re.compile(
    r"""device\s*\.\s*(?P<field>attributes|capacity)\s*\[\s*(?P<q>["'])(?P<domain>[^"']+)(?P=q)\s*\]\s*"""
    r"""(?:\.\s*(?P<name>[A-Za-z_][A-Za-z0-9_]*)|\[\s*(?P<q2>["'])(?P<quoted>[^"']+)(?P=q2)\s*\])"""
)
_ERROR = re.compile(r"ERROR: <input>:(\d+):(\d+): (.+)")


@dataclass(frozen=True)
class Driver:
    """What one DRA driver publishes: attribute and capacity names (shell-style ``*``)."""

    attributes: tuple[str, ...]
    capacities: tuple[str, ...] | None  # None: not known, not checked

    def names(self, field: str) -> tuple[str, ...] | None:
        return self.attributes if field == "attributes" else self.capacities


@cache
def drivers() -> Mapping[str, Driver]:
    data = lint_data("dra-drivers.yaml")
    return {
        domain: Driver(tuple(entry["attributes"]), tuple(entry["capacities"]) if "capacities" in entry else None)
        for domain, entry in data.items()
    }


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


def compile_error(expression: str) -> str | None:
    """The CEL parser's first complaint about ``expression``, or None when it compiles."""
    import cel  # lazily: only objects with DRA selectors pay for it

    try:
        cel.compile(expression)
    except ValueError as exc:
        match = _ERROR.search(str(exc))
        if match is None:
            return str(exc).splitlines()[0]
        line, column, message = match.groups()
        return f"{message} (line {line}, column {column} of the expression)"
    return None


@dataclass(frozen=True)
class Unknown:
    """A lookup of a name that a known driver does not publish."""

    lookup: str  # as written: device.attributes["gpu.nvidia.com"].productNam
    domain: str
    kind: str  # "attribute" | "capacity"
    name: str
    published: tuple[str, ...]

    @property
    def closest(self) -> str | None:
        close = difflib.get_close_matches(self.name, [p for p in self.published if "*" not in p], n=1)
        return close[0] if close else None


def unknown_names(expression: str) -> Iterator[Unknown]:
    """Each ``device.attributes``/``device.capacity`` lookup of a name its driver does not publish."""
    known = drivers()
    for match in _LOOKUP.finditer(expression):
        driver = known.get(match["domain"])
        published = driver.names(match["field"]) if driver else None
        name = match["name"] or match["quoted"]
        if published is not None and not any(fnmatch.fnmatchcase(name, pattern) for pattern in published):
            kind = "attribute" if match["field"] == "attributes" else "capacity"
            yield Unknown(match.group(0), match["domain"], kind, name, published)


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
