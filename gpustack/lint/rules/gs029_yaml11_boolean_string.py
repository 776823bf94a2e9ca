"""GS029: an unquoted YAML 1.1 boolean (or a number) where Kubernetes expects a string.

The API server reads YAML 1.1 (``yaml11``): an unquoted ``on``/``off``/``yes``/``no``/``y``/``n``
is a boolean, ``1.10`` the number 1.1. Labels, annotations, node selectors, ``matchLabels``,
selector ``values``, env values and ConfigMap data are strings, so the apply fails:
HAMi's node label ``gpu=on`` must be written ``gpu: "on"``. The loader already
reads with those semantics, so a bool or number in such a place was written unquoted. Chart
values count too: a chart renders ``nvidiaNodeSelector: {gpu: on}`` into a node selector.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from gpustack.lint.context import LintContext
from gpustack.lint.input.yaml11 import plain
from gpustack.lint.model import Hit, Path, Resource
from gpustack.lint.registry import Rule
from gpustack.lint.releases import dispatch

# Mapping keys (lower-cased suffixes) whose values Kubernetes types as map[string]string:
# labels, matchLabels, podLabels, annotations, nodeSelector, chart values' nvidiaNodeSelector …
_STRING_MAPS = {"labels": "label", "annotations": "annotation", "nodeselector": "node selector"}
# String maps of core (v1) kinds, named by their place rather than their key.
_KIND_MAPS: dict[str, tuple[Path, str]] = {
    "ConfigMap": (("data",), "data key"),
    "Secret": (("stringData",), "stringData key"),
    "Service": (("spec", "selector"), "selector"),
}


@dataclass(frozen=True)
class Mistyped:
    """A bool or number where a string is required: its path and how a message names it."""

    path: Path
    what: str  # "label gpu", "env var DEBUG", …
    value: bool | int | float


def _bool_or_number(value: Any) -> bool:
    return isinstance(value, (bool, int, float))


@lru_cache(maxsize=4096)
def _string_map(key: str) -> str | None:
    """How a message names the entries of a string map under ``key``, or None."""
    lower = key.lower()
    return next((name for suffix, name in _STRING_MAPS.items() if lower.endswith(suffix)), None)


def mistyped(node: Any, path: Path = ()) -> list[Mistyped]:
    """Every bool or number in a place that needs a string, anywhere below ``node``."""
    found: list[Mistyped] = []
    if _suspect(node):  # nearly every document is clean: one cheap pass, no paths built
        _walk(node, path, found)
    return found


_NUMBERS = (bool, int, float)


def _suspect(node: Any) -> bool:
    """Whether ``_walk`` could find anything below ``node``: the same descent without paths or
    messages, true on any bool or number in a string map, in a list under ``values`` or at a
    key ``value`` (a toleration's, an env var's), a superset of what ``_walk`` reports."""
    if node.__class__ is list:
        for item in node:
            cls = item.__class__
            if (cls is dict or cls is list) and _suspect(item):
                return True
        return False
    for key, value in node.items():
        cls = value.__class__
        if cls is str:
            continue
        if cls is dict:
            if _string_map(key) is not None:
                for item in value.values():
                    if item.__class__ is not str and isinstance(item, _NUMBERS):
                        return True
            elif _suspect(value):
                return True
        elif cls is list:
            if key == "values":
                for item in value:
                    if item.__class__ is not str and isinstance(item, _NUMBERS):
                        return True
            if _suspect(value):
                return True
        elif key == "value" and isinstance(value, _NUMBERS):
            return True
    return False


def _walk(node: Any, path: Path, found: list[Mistyped]) -> None:
    # Runs over every node of the input: plain recursion, no generators, exact classes (the
    # loader gives dicts and lists; isinstance against the ABCs would double the time).
    if node.__class__ is list:
        for index, item in enumerate(node):
            if item.__class__ is dict or item.__class__ is list:
                _walk(item, (*path, index), found)
        return
    for key, value in node.items():
        cls = value.__class__
        if cls is dict:
            what = _string_map(key)
            if what is None:
                _walk(value, (*path, key), found)
            else:
                found.extend(_map_entries(value, (*path, key), what))
        elif cls is list:
            if key == "values" and "operator" in node:  # a matchExpressions / nodeSelectorTerms item
                found.extend(
                    Mistyped((*path, key, i), f"value of {node.get('key')}", item)
                    for i, item in enumerate(value)
                    if _bool_or_number(item)
                )
            elif key.lower().endswith("env"):
                found.extend(_env_values(value, (*path, key)))
            _walk(value, (*path, key), found)
        elif key == "value" and "operator" in node and _bool_or_number(value):  # a toleration
            found.append(Mistyped((*path, key), f"toleration value of {node.get('key')}", value))


def _map_entries(node: Mapping[str, Any], path: Path, what: str) -> Iterator[Mistyped]:
    for key, value in node.items():
        if _bool_or_number(value):
            yield Mistyped((*path, key), f"{what} {key}", value)


def _env_values(items: list[Any], path: Path) -> Iterator[Mistyped]:
    for index, item in enumerate(items):
        if isinstance(item, Mapping) and isinstance(item.get("name"), str) and _bool_or_number(item.get("value")):
            yield Mistyped((*path, index, "value"), f"env var {item['name']}", item["value"])


def _object_bool_or_number(resource: Resource) -> list[Mistyped]:
    document = resource.data
    if "status" in document:
        document = {key: value for key, value in document.items() if key != "status"}
    found = mistyped(document)
    place = _KIND_MAPS.get(resource.kind or "")
    if place is not None and resource.api_version == "v1":
        data = resource.get(place[0])
        if isinstance(data, Mapping):
            found.extend(_map_entries(data, place[0], place[1]))
    return found


# --- the value as written ---------------------------------------------------------------

_KEY = re.compile(r""""(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^\s,{}\[\]#][^,{}\[\]]*?(?=\s*:(?:\s|$))""")
_COLON = re.compile(r"\s*:\s*")
_TOKEN = re.compile(r"[^\s,{}\[\]#]+")


def _written(text: str | None, line: int, column: int, *, after_key: bool, value: Any) -> str | None:
    """The plain scalar at ``line``:``column`` of ``text`` (after the key there when
    ``after_key``), when it reads as ``value``: how the author spelled it."""
    lines = _lines(text) if text is not None else []
    if not 0 < line <= len(lines):
        return None
    source, start = lines[line - 1], column - 1
    if after_key:
        key = _KEY.match(source, start)
        colon = _COLON.match(source, key.end()) if key else None
        if colon is None:
            return None
        start = colon.end()
    token = _TOKEN.match(source, start)
    found = plain(token.group(0)) if token else None
    same = type(found) is type(value) and found == value
    return token.group(0) if token and same else None


@lru_cache(maxsize=4)
def _lines(text: str) -> list[str]:
    return text.splitlines()


def _seen(value: bool | int | float) -> str:
    """What the API server sees instead of a string."""
    if isinstance(value, bool):
        return f"the boolean {'true' if value else 'false'}"
    return f"the number {value:g}" if isinstance(value, float) and math.isfinite(value) else f"the number {value}"


def _hit(resource: Resource, found: Mistyped, ctx: LintContext, where: str) -> Hit:
    line, column = resource.locate(found.path)
    text = ctx.texts.get(resource.file)
    token = _written(text, line, column, after_key=isinstance(found.path[-1], str), value=found.value)
    spelled = f"unquoted `{token}`" if token else "an unquoted YAML 1.1 scalar"
    return Hit(
        resource,
        found.path,
        f"{where}: {found.what} is {spelled}, {_seen(found.value)} to the API server (YAML 1.1), "
        "where Kubernetes requires a string: the apply fails",
        fix=f'Quote it: `"{token}"`.' if token else 'Quote the value as written, e.g. `gpu: "on"`.',
    )


def check(resource: Resource, ctx: LintContext) -> Iterator[Hit]:
    if resource.api_version and resource.kind:  # values files are checked as chart values
        for found in _object_bool_or_number(resource):
            yield _hit(resource, found, ctx, str(resource.ref))


def check_values(ctx: LintContext) -> Iterator[Hit]:
    """Chart values kept outside objects' data: YAML strings (K3s ``valuesContent``, Argo CD
    ``helm.values``) and values files; a values tree inside an object is checked with it."""
    seen: set[tuple[int, Path]] = set()
    for release in dispatch.releases(ctx):
        for layer in release.layers:
            outside = layer.resource.kind is None or isinstance(layer.resource.get(layer.path), str)
            if layer.written is not None or not outside or (id(layer.resource), layer.path) in seen:
                continue
            seen.add((id(layer.resource), layer.path))
            for found in mistyped(layer.values, layer.path):
                yield _hit(layer.resource, found, ctx, f"{release} values")


RULE = Rule("GS029", "object", check, values=check_values)
