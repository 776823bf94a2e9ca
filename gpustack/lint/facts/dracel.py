"""DRA CEL selectors: whether one compiles, and the attribute and capacity names it reads that
its driver does not publish (``data/dra-drivers.yaml``). GS030 checks rendered and written
DeviceClasses and claims with it; ``gpustack validate`` checks the spec's selectors with it
before anything is rendered (``gpustack.spec.dra_checks``).
"""

from __future__ import annotations

import difflib
import fnmatch
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache

from gpustack.shipped import lint_data

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
