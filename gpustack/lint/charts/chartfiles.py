"""A chart's files (a folder or a packaged ``.tgz``, subcharts included) read into key states.

``states`` marks each key path of one chart version read, passthrough or declared (see
``chartkeys``), from its ``values.yaml`` and what ``gotemplate`` finds its templates read;
``encode`` packs states of several versions into the stored tree. ``read_charts`` is
``--chart-values``: charts read at run time the same way.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpustack.lint.charts.chartkeys import (
    ABSENT, DECLARED, LIST, MAP, OBJECT, PASSTHROUGH, READ, SCALAR, ChartData, ChartKeys, KeyPath, Node,
)


@dataclass(frozen=True)
class ChartFiles:
    """One chart version's files: Chart.yaml, values.yaml, templates, subcharts."""

    meta: Mapping[str, Any]
    values_text: str
    templates: Mapping[str, str] = field(default_factory=dict)
    subcharts: Mapping[str, ChartFiles] = field(default_factory=dict)  # by folder or archive name

    @property
    def values(self) -> Any:
        return load_yaml(self.values_text) or {}


def read_files(path: Path) -> ChartFiles:
    """A chart folder or packaged chart (``.tgz``)."""
    return _read_tgz(path) if path.is_file() else _read_folder(path)


def read_chart(path: Path) -> ChartKeys:
    """The keys of a chart folder or packaged chart (``.tgz``), templates and subcharts included."""
    chart = read_files(path)
    name, version = str(chart.meta.get("name", "")), str(chart.meta.get("version", ""))
    found = states(chart)
    return ChartData(
        name, (version,), encode([found]), str(path), encode_kinds([value_kinds(chart, found)]),
        encode_defaults([dead_defaults(chart, found)]),
    ).at(version)


def read_charts(paths: tuple[Path, ...]) -> tuple[ChartKeys, ...]:
    """``--chart-values``: each path's keys; a path that is no readable chart is a usage error."""
    import tarfile

    from gpustack.errors import GpustackError, Problem

    found = []
    for path in paths:
        try:
            keys = read_chart(path)
        except (OSError, tarfile.TarError, ValueError) as exc:
            raise GpustackError(Problem(f"cannot read the chart: {exc}", str(path))) from None
        if not keys.chart or not keys.version:
            raise GpustackError(Problem("not a chart: its Chart.yaml names no name and version", str(path)))
        found.append(keys)
    return tuple(found)


_RANK = {ABSENT: 0, DECLARED: 1, READ: 2, PASSTHROUGH: 3}


def states(chart: ChartFiles) -> dict[KeyPath, str]:
    """Each key path of ``chart`` (one version) with its state (see the module docstring)."""
    from gpustack.lint.charts import declaredkeys, gotemplate

    found: dict[KeyPath, str] = {}

    def mark(path: KeyPath, state: str) -> None:
        for end in range(1, len(path) + 1):
            prefix = path[:end]
            wanted = state if end == len(path) else (READ if state == PASSTHROUGH else state)
            if _RANK[wanted] > _RANK[found.get(prefix, ABSENT)]:
                found[prefix] = wanted

    for path in declaredkeys.set_keys(chart.values):
        mark(path, DECLARED)
    for path in declaredkeys.commented_keys(chart.values_text):
        mark(path, DECLARED)
    reads = gotemplate.reads(chart.templates)
    for path in reads.read:
        mark(path, READ)
    for path in reads.passthrough:
        mark(path, PASSTHROUGH)
    mark(("global",), PASSTHROUGH)
    dependencies = [d for d in chart.meta.get("dependencies") or () if isinstance(d, Mapping)]
    by_name = {str(sub.meta.get("name")): sub for sub in chart.subcharts.values()}
    for dependency in dependencies:
        alias = str(dependency.get("alias") or dependency.get("name"))
        for condition in str(dependency.get("condition") or "").split(","):
            if condition.strip():
                mark(tuple(condition.strip().split(".")), READ)
        sub = by_name.get(str(dependency.get("name")))
        if sub is None:
            mark((alias,), PASSTHROUGH)  # not vendored: its keys are unknown
            continue
        for path, state in states(sub).items():
            if path[:1] != ("global",):
                mark((alias, *path), state)
    return found


# Template functions that test a value's kind: a key tested with one may be given either way.
_KIND_TESTS = re.compile(r"\b(kindIs|typeIs|kindOf|typeOf|typeIsLike)\b")


def value_kinds(chart: ChartFiles, found: Mapping[KeyPath, str]) -> dict[KeyPath, str]:
    """Key paths of ``chart`` (its own values, not its subcharts') whose ``values.yaml``
    default tells the kind of value its templates want, and no template tests the kind of
    (``kindIs``, ``typeOf``: then either is taken), with that kind (``found``: its ``states``):

    - ``l``: the default is a list that the templates take whole (``toYaml``, ``range``:
      passthrough); a map there renders a mapping where Kubernetes wants a list;
    - ``m``: the default is a map that the templates read keys below (``.Values.gfd.enabled``);
      a list or a scalar there, ``false`` included, fails to render (``can't evaluate field``);
    - ``o``: the default is a map that the templates take whole (``toYaml .Values.affinity``);
      a list or a scalar there renders the wrong kind where Kubernetes wants an object;
    - ``s``: the default is a scalar that is not empty (a boolean, a number, a text), read as
      one (no template reads a key below it or takes it whole); a map or list there renders
      Go's ``map[…]`` into the manifest.

    A null or empty-text default tells nothing: charts use it for "unset" and take any kind."""
    tested = {
        match.group(1)
        for text in _all_templates(chart)
        for line in text.splitlines()
        if _KIND_TESTS.search(line)
        for match in re.finditer(r"\.Values(?:\.[A-Za-z0-9_]+)*\.([A-Za-z0-9_]+)", line)
    }
    below = {path[:-1] for path, state in found.items() if state != DECLARED}

    def kind(node: Any, path: KeyPath) -> str | None:
        state = found.get(path)
        if isinstance(node, list):
            return LIST if state == PASSTHROUGH else None
        if isinstance(node, Mapping):
            return {READ: MAP, PASSTHROUGH: OBJECT}.get(state or ABSENT)
        filled = isinstance(node, (bool, int, float)) or (isinstance(node, str) and node != "")
        return SCALAR if filled and state == READ and path not in below else None

    def walk(node: Any, prefix: KeyPath) -> Iterator[tuple[KeyPath, str]]:
        wanted = kind(node, prefix) if prefix and prefix[-1] not in tested else None
        if wanted is not None:
            yield prefix, wanted
        if isinstance(node, Mapping) and found.get(prefix) != PASSTHROUGH:
            for key, value in node.items():
                yield from walk(value, (*prefix, str(key)))

    return dict(walk(chart.values, ()))


def _all_templates(chart: ChartFiles) -> Iterator[str]:
    """The templates of ``chart`` and of its subcharts (whose sections its values.yaml sets)."""
    yield from chart.templates.values()
    for sub in chart.subcharts.values():
        yield from _all_templates(sub)


def dead_defaults(chart: ChartFiles, found: Mapping[KeyPath, str]) -> dict[KeyPath, Any]:
    """The scalar defaults (``values.yaml``, the chart's over its subcharts') of the keys that
    ``found`` (its ``states``) marks declared only: a release that sets one of them to its
    default asks for nothing, whether a template reads it or not (GS042)."""
    defaults: dict[KeyPath, Any] = {}
    aliases = {str(d.get("name")): str(d.get("alias") or d.get("name"))
               for d in chart.meta.get("dependencies") or () if isinstance(d, Mapping)}
    sources = [((), chart.values)] + [
        ((aliases[name],), sub.values)
        for sub in chart.subcharts.values() if (name := str(sub.meta.get("name"))) in aliases
    ]
    for path, state in found.items():
        if state != DECLARED:
            continue
        for prefix, values in sources:
            if path[: len(prefix)] != prefix:
                continue
            node = values
            for step in path[len(prefix):]:
                node = node.get(step) if isinstance(node, Mapping) else None
            if isinstance(node, (str, int, float, bool)):
                defaults[path] = node
                break
    return defaults


def encode_defaults(columns: list[Mapping[KeyPath, Any]]) -> list[list[Any]]:
    """The stored defaults of declared-only keys: ``[[step, …], [value or null per version]]``."""
    paths = sorted(set().union(*columns)) if columns else []
    return [[list(path), [column.get(path) for column in columns]] for path in paths]


def values_only(values: Any) -> dict[KeyPath, str]:
    """States from a ``values.yaml`` alone (a chart gpustack has no package of): every set key
    counts as read; empty maps and Kubernetes-typed keys (affinity, resources, …) pass through."""
    from gpustack.lint.charts import declaredkeys

    found: dict[KeyPath, str] = {("global",): PASSTHROUGH}
    for path in declaredkeys.set_keys(values):
        if any(step in FREE_FORM for step in path[:-1]) or any(found.get(path[:i]) == PASSTHROUGH for i in range(len(path))):
            continue
        node = values
        for step in path:
            node = node[step]
        free = path[-1] in FREE_FORM or node is None or (isinstance(node, Mapping) and not node)
        found[path] = PASSTHROUGH if free else READ
    return found


# Keys of a values.yaml read alone whose maps hold Kubernetes objects or user-chosen names.
FREE_FORM = frozenset(
    {
        "affinity", "nodeSelector", "tolerations", "resources", "securityContext", "podSecurityContext",
        "containerSecurityContext", "livenessProbe", "readinessProbe", "startupProbe",
        "topologySpreadConstraints", "annotations", "labels", "podAnnotations", "podLabels", "env", "extraEnv",
    }
)


def encode(columns: list[Mapping[KeyPath, str]]) -> dict[str, Node]:
    """The stored tree of per-version states (``columns``: one mapping per version, oldest first)."""
    root: dict[str, Any] = {}
    for column, found in enumerate(columns):
        for path, state in found.items():
            node = root
            for step in path[:-1]:
                node = node.setdefault(step, {"": [ABSENT] * len(columns), "/": {}})["/"]
            entry = node.setdefault(path[-1], {"": [ABSENT] * len(columns), "/": {}})
            entry[""][column] = state

    def pack(children: Mapping[str, Any]) -> dict[str, Node]:
        packed: dict[str, Node] = {}
        for key in sorted(children):
            entry = children[key]
            text = "".join(entry[""])
            packed[key] = [text, pack(entry["/"])] if entry["/"] else text
        return packed

    return pack(root)


def encode_kinds(columns: list[Mapping[KeyPath, str]]) -> list[list[Any]]:
    """The stored value kinds: ``[[step, …], "ll-m"]`` per key path, its ``value_kinds`` letter
    in the columns of the versions (oldest first) where it has one, ``-`` elsewhere; one letter
    where every version has the same."""
    paths = sorted(set().union(*columns)) if columns else []
    stored = []
    for path in paths:
        marks = "".join(column.get(path, ABSENT) for column in columns)
        stored.append([list(path), marks[0] if len(set(marks)) == 1 else marks])
    return stored


def load_yaml(text: str) -> Any:
    """YAML as Helm's chart files are read (libyaml)."""
    import yaml

    return yaml.load(text, Loader=yaml.CSafeLoader)


def _read_folder(folder: Path) -> ChartFiles:
    values = folder / "values.yaml"
    templates = {
        str(p.relative_to(folder)): p.read_text("utf-8", "replace")
        for p in sorted((folder / "templates").rglob("*")) if p.is_file()
    }
    subcharts: dict[str, ChartFiles] = {}
    charts = folder / "charts"
    for sub in sorted(charts.iterdir()) if charts.is_dir() else ():
        if sub.is_dir() and (sub / "Chart.yaml").is_file():
            subcharts[sub.name] = _read_folder(sub)
        elif sub.name.endswith(".tgz"):
            subcharts[sub.name] = _read_tgz(sub)
    return ChartFiles(
        load_yaml((folder / "Chart.yaml").read_text("utf-8")) or {},
        values.read_text("utf-8") if values.is_file() else "",
        templates,
        subcharts,
    )


def _read_tgz(path: Path | io.BytesIO) -> ChartFiles:
    """A packaged chart: ``<name>/Chart.yaml``, ``<name>/values.yaml``, ``<name>/charts/*``."""
    import tarfile

    with tarfile.open(fileobj=path, mode="r:gz") if isinstance(path, io.BytesIO) else tarfile.open(path, "r:gz") as tar:
        files: dict[str, bytes] = {}
        for member in tar.getmembers():
            if member.isfile() and (stream := tar.extractfile(member)) is not None:
                files[member.name] = stream.read()
    return _chart_of(files)


def _chart_of(files: Mapping[str, bytes]) -> ChartFiles:
    root = min((name.split("/", 1)[0] for name in files if name.endswith("/Chart.yaml")), key=len, default="")
    prefix = f"{root}/"

    def text(name: str) -> str | None:
        data = files.get(prefix + name)
        return data.decode("utf-8", "replace") if data is not None else None

    nested: dict[str, dict[str, bytes]] = {}
    subcharts: dict[str, ChartFiles] = {}
    for name, data in files.items():
        inner = name[len(prefix):] if name.startswith(prefix) else None
        if inner is None or not inner.startswith("charts/"):
            continue
        rest = inner[len("charts/"):]
        if "/" not in rest and rest.endswith(".tgz"):
            subcharts[rest] = _read_tgz(io.BytesIO(data))
        elif "/" in rest:
            nested.setdefault(rest.split("/", 1)[0], {})[rest] = data
    subcharts.update({name: _chart_of(sub) for name, sub in nested.items()})
    templates = {
        name: data.decode("utf-8", "replace") for name, data in sorted(files.items())
        if name.startswith(prefix + "templates/")
    }
    return ChartFiles(load_yaml(text("Chart.yaml") or "") or {}, text("values.yaml") or "", templates, subcharts)
