"""The value keys a Helm chart has, per version, and whether its templates read them.

Helm ignores a value key that no template reads (setting HAMi's
``scheduler.kubeScheduler.imageTag``, a key chart v2.7.0 renamed, gives a kube-scheduler of
another version than intended). GS031 (keys the chart does not read) and GS042 (keys the chart
declares but never reads) compare values with the data below.

Each key path of a chart has, per version, one state:

- ``r`` read: a template reads it (``.Values.a.b``, ``index .Values "a" "b"``, a ``with``
  scope, a named template; see ``gotemplate``), or it is a dependency's condition;
- ``p`` passthrough: a template uses the whole subtree (``toYaml``, ``range``, ``tpl``…), so
  anything below it is taken; ``global`` is passthrough in every chart;
- ``d`` declared only: ``values.yaml`` sets it or shows it in a comment, and no template reads it;
- ``-`` absent.

Subcharts sit under their alias, their templates read as their own. The shipped data,
``data/chart-keys/<chart>.json`` (one file per chart, every version in it: each key maps to one
state letter per version; ``kinds``: the kind of value a key wants where its default tells (a
list the templates take whole, a map, a scalar: ``chartfiles.value_kinds``), GS051; ``defaults``: the values.yaml defaults of the
declared-only keys, GS042), is made by ``python -m gpustack.lint.charts.generate_keys`` from the packaged
charts; a test (tests/lint/test_chart_keys.py) regenerates it and compares. ``--chart-values`` reads a chart
folder or ``.tgz`` the same way at run time. ``data/chart-keys/renames.yaml`` lists keys a
chart renamed, with the version.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from gpustack.shipped import lint_data

KeyPath = tuple[str, ...]
READ, PASSTHROUGH, DECLARED, ABSENT = "r", "p", "d", "-"
# The kind a chart wants a value in (``chartfiles.value_kinds``, kept as the key data's
# ``kinds``): a list, a map its templates read keys below, a map they take whole (an object), a scalar.
LIST, MAP, OBJECT, SCALAR = "l", "m", "o", "s"
# Node of the stored tree: the states string, or [states, {child: node}].
Node = Any
_DATA = "data/chart-keys"


@dataclass(frozen=True)
class ChartData:
    """One chart's key tree over the versions it was generated from (oldest first)."""

    chart: str
    versions: tuple[str, ...]
    tree: Mapping[str, Node]
    source: str = ""
    kinds: tuple[Any, ...] = ()  # [[step, …], "ll-m"]: the kind of value a key wants, per version (one letter: all)
    defaults: tuple[Any, ...] = ()  # [[step, …], [value or None per version]]: declared-only keys' defaults

    def at(self, version: str) -> ChartKeys:
        return ChartKeys(self, self.versions.index(version))

    def top_keys(self) -> frozenset[str]:
        """The top-level keys of the chart at any of its versions."""
        return frozenset(key for key, node in self.tree.items() if _states(node).strip(ABSENT))


def _states(node: Node) -> str:
    return node if isinstance(node, str) else node[0]


def _children(node: Node) -> Mapping[str, Node]:
    return {} if isinstance(node, str) else node[1]


@dataclass(frozen=True)
class ChartKeys:
    """The keys of one chart version (a column of its ``ChartData``)."""

    data: ChartData
    column: int

    @property
    def chart(self) -> str:
        return self.data.chart

    @property
    def version(self) -> str:
        return self.data.versions[self.column]

    @property
    def source(self) -> str:
        return self.data.source or f"gpustack's data for {self.chart} {self.version}"

    def state(self, path: KeyPath) -> tuple[str, int]:
        """(state, steps walked): ``p`` as soon as a step is passthrough, ``-`` at the first
        step the version lacks, else the last step's state."""
        children: Mapping[str, Node] = self.data.tree
        state = READ
        for index, step in enumerate(path):
            node = children.get(step)
            state = _states(node)[self.column] if node is not None else ABSENT
            if state in (ABSENT, PASSTHROUGH):
                return state, index
            children = _children(node)
        return state, len(path) - 1

    def value_kinds(self) -> tuple[tuple[KeyPath, str], ...]:
        """Key paths with the kind of value this version's templates want there (``l`` list,
        ``m`` map, ``s`` scalar: ``chartfiles.value_kinds``)."""
        column = self.column
        found = ((tuple(path), marks[column] if len(marks) > 1 else marks) for path, marks in self.data.kinds)
        return tuple((path, kind) for path, kind in found if kind != ABSENT)

    def declared_default(self, path: KeyPath) -> Any:
        """The scalar default of a declared-only key in this version's ``values.yaml``; None
        when it has none (or is read)."""
        for steps, values in self.data.defaults:
            if tuple(steps) == path:
                return values[self.column]
        return None

    def reads(self, path: KeyPath) -> bool:
        """Whether this version's templates read ``path`` (or take a subtree above it whole)."""
        return self.state(path)[0] in (READ, PASSTHROUGH)

    def lookup(self, path: KeyPath) -> int | None:
        """None when ``path`` is a key of this version (read, declared, or below a passthrough
        key); else the index of its first step the version does not have."""
        state, index = self.state(path)
        return index if state == ABSENT else None

    def versions_reading(self, path: KeyPath) -> list[str]:
        """The versions whose templates read ``path`` (or take a subtree above it)."""
        return [v for v in self.data.versions if self.data.at(v).reads(path)]

    def siblings(self, parent: KeyPath) -> list[KeyPath]:
        """Every key path below ``parent`` (relative to it) that this version's templates read:
        the candidates for a "did you mean"."""
        children: Mapping[str, Node] = self.data.tree
        for step in parent:
            node = children.get(step)
            if node is None:
                return []
            children = _children(node)
        return list(self._read_paths(children, ()))

    def _read_paths(self, children: Mapping[str, Node], prefix: KeyPath) -> Iterator[KeyPath]:
        for key, node in children.items():
            state = _states(node)[self.column]
            if state in (READ, PASSTHROUGH):
                yield (*prefix, key)
                if state == READ:
                    yield from self._read_paths(_children(node), (*prefix, key))


# --- reading a chart ----------------------------------------------------------------------


def normalise_version(version: str) -> str:
    return version.strip().removeprefix("v")


@cache
def _shipped(chart: str) -> ChartData | None:
    entry = resources.files("gpustack.lint").joinpath(_DATA, f"{chart}.json")
    if not entry.is_file():
        return None
    data = json.loads(entry.read_text("utf-8"))
    return ChartData(
        data["chart"], tuple(data["versions"]), data["keys"], kinds=tuple(data.get("kinds", ())),
        defaults=tuple(data.get("defaults", ())),
    )


@cache
def shipped_charts() -> tuple[str, ...]:
    """The charts gpustack has key data for."""
    folder = resources.files("gpustack.lint").joinpath(_DATA)
    return tuple(sorted(e.name[: -len(".json")] for e in folder.iterdir() if e.name.endswith(".json")))


def versions(chart: str) -> tuple[str, ...]:
    """The versions of ``chart`` gpustack has key data for, as the data writes them."""
    data = _shipped(chart) if chart in shipped_charts() else None
    return data.versions if data else ()


def chart_keys(chart: str, version: str, extra: tuple[ChartKeys, ...] = ()) -> ChartKeys | None:
    """The keys of ``chart`` at exactly ``version`` (``v`` prefix or not): a chart given with
    ``--chart-values`` first, then gpustack's data. Ranges, patch releases without data and
    missing versions: ``gpustack.lint.charts.chartversions.resolve``."""
    wanted = normalise_version(version)
    for keys in extra:
        if keys.chart == chart and normalise_version(keys.version) == wanted:
            return keys
    data = _shipped(chart) if chart in shipped_charts() else None
    match = [v for v in data.versions if normalise_version(v) == wanted] if data else []
    return data.at(match[0]) if data and match else None


def version_key(version: str) -> tuple[int, ...]:
    """``2.10.0`` → (2, 10, 0); anything that is not a number sorts first."""
    return tuple(int(part) if part.isdigit() else -1 for part in re.split(r"[.+-]", normalise_version(version)))


@dataclass(frozen=True)
class Rename:
    old: tuple[str, ...]
    new: tuple[str, ...]
    since: str  # the first chart version with ``new``


@cache
def renames(chart: str) -> tuple[Rename, ...]:
    data = lint_data("chart-keys/renames.yaml")
    return tuple(
        Rename(tuple(item["old"].split(".")), tuple(item["new"].split(".")), str(item["since"]))
        for item in data.get(chart) or ()
    )
