"""The value keys a Helm chart has, per version, and whether its templates read them.

Helm ignores a value key that no template reads (seed 001 §11 set HAMi's
``scheduler.kubeScheduler.imageTag``, a key chart v2.7.0 renamed, and got a kube-scheduler of
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
state letter per version), is made by ``python -m gpustack.lint.charts.chartkeys`` from the packaged
charts; a test regenerates it when ../shared is present. ``--chart-values`` reads a chart
folder or ``.tgz`` the same way at run time. ``data/chart-keys/renames.yaml`` lists keys a
chart renamed, with the version.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from gpustack.shipped import lint_data

KeyPath = tuple[str, ...]
READ, PASSTHROUGH, DECLARED, ABSENT = "r", "p", "d", "-"
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

    def at(self, version: str) -> ChartKeys:
        return ChartKeys(self, self.versions.index(version))


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


@dataclass(frozen=True)
class _Chart:
    meta: Mapping[str, Any]
    values_text: str
    templates: Mapping[str, str] = field(default_factory=dict)
    subcharts: Mapping[str, _Chart] = field(default_factory=dict)  # by folder or archive name

    @property
    def values(self) -> Any:
        return _yaml(self.values_text) or {}


def read_chart(path: Path) -> ChartKeys:
    """The keys of a chart folder or packaged chart (``.tgz``), templates and subcharts included."""
    chart = _read_tgz(path) if path.is_file() else _read_folder(path)
    name, version = str(chart.meta.get("name", "")), str(chart.meta.get("version", ""))
    return ChartData(name, (version,), encode([states(chart)]), str(path)).at(version)


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


def states(chart: _Chart) -> dict[KeyPath, str]:
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


def _yaml(text: str) -> Any:
    import yaml

    return yaml.load(text, Loader=yaml.CSafeLoader)


def _read_folder(folder: Path) -> _Chart:
    values = folder / "values.yaml"
    templates = {
        str(p.relative_to(folder)): p.read_text("utf-8", "replace")
        for p in sorted((folder / "templates").rglob("*")) if p.is_file()
    }
    subcharts: dict[str, _Chart] = {}
    charts = folder / "charts"
    for sub in sorted(charts.iterdir()) if charts.is_dir() else ():
        if sub.is_dir() and (sub / "Chart.yaml").is_file():
            subcharts[sub.name] = _read_folder(sub)
        elif sub.name.endswith(".tgz"):
            subcharts[sub.name] = _read_tgz(sub)
    return _Chart(
        _yaml((folder / "Chart.yaml").read_text("utf-8")) or {},
        values.read_text("utf-8") if values.is_file() else "",
        templates,
        subcharts,
    )


def _read_tgz(path: Path | io.BytesIO) -> _Chart:
    """A packaged chart: ``<name>/Chart.yaml``, ``<name>/values.yaml``, ``<name>/charts/*``."""
    import tarfile

    with tarfile.open(fileobj=path, mode="r:gz") if isinstance(path, io.BytesIO) else tarfile.open(path, "r:gz") as tar:
        files: dict[str, bytes] = {}
        for member in tar.getmembers():
            if member.isfile() and (stream := tar.extractfile(member)) is not None:
                files[member.name] = stream.read()
    return _chart_of(files)


def _chart_of(files: Mapping[str, bytes]) -> _Chart:
    root = min((name.split("/", 1)[0] for name in files if name.endswith("/Chart.yaml")), key=len, default="")
    prefix = f"{root}/"

    def text(name: str) -> str | None:
        data = files.get(prefix + name)
        return data.decode("utf-8", "replace") if data is not None else None

    nested: dict[str, dict[str, bytes]] = {}
    subcharts: dict[str, _Chart] = {}
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
    return _Chart(_yaml(text("Chart.yaml") or "") or {}, text("values.yaml") or "", templates, subcharts)


# --- shipped data -------------------------------------------------------------------------


def normalise_version(version: str) -> str:
    return version.strip().removeprefix("v")


@cache
def _shipped(chart: str) -> ChartData | None:
    entry = resources.files("gpustack.lint").joinpath(_DATA, f"{chart}.json")
    if not entry.is_file():
        return None
    data = json.loads(entry.read_text("utf-8"))
    return ChartData(data["chart"], tuple(data["versions"]), data["keys"])


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


def newest_version(chart: str) -> str | None:
    """The newest version gpustack has key data for."""
    known = versions(chart)
    return max(known, key=version_key) if known else None


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


# --- the generator ------------------------------------------------------------------------


def generate(packages: list[Path]) -> dict[str, dict[str, Any]]:
    """chart name -> its data file's content, from packaged charts (any versions, any order)."""
    by_chart: dict[str, list[tuple[str, _Chart]]] = {}
    for package in packages:
        chart = _read_tgz(package) if package.is_file() else _read_folder(package)
        by_chart.setdefault(str(chart.meta["name"]), []).append((str(chart.meta["version"]), chart))
    generated = {}
    for name, found in sorted(by_chart.items()):
        found.sort(key=lambda item: version_key(item[0]))
        generated[name] = {
            "chart": name,
            "versions": [version for version, _ in found],
            "keys": encode([states(chart) for _, chart in found]),
        }
    return generated


def generate_values_only(values: Path, name: str, version: str) -> dict[str, Any]:
    """The data of a chart gpustack has only the ``values.yaml`` of."""
    return {"chart": name, "versions": [version], "keys": encode([values_only(_yaml(values.read_text("utf-8")))])}


def dump(data: Mapping[str, Any]) -> str:
    """Compact JSON, one top-level key per line (small, and diffs stay readable)."""
    keys = ",\n".join(f"{json.dumps(k)}:{json.dumps(v, separators=(',', ':'))}" for k, v in data["keys"].items())
    return f'{{"chart":{json.dumps(data["chart"])},"versions":{json.dumps(data["versions"])},"keys":{{\n{keys}}}}}\n'


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m gpustack.lint.charts.chartkeys",
        description="Write gpustack's chart key data (one JSON file per chart, every version in it) from packaged"
        " charts (.tgz) or chart folders; or from a values.yaml alone (--values-only NAME VERSION).",
    )
    parser.add_argument("charts", nargs="+", type=Path, help="packaged charts (.tgz) or chart folders; or one values.yaml")
    parser.add_argument("--out", type=Path, required=True, help="the folder to write <chart>.json into")
    parser.add_argument("--values-only", nargs=2, metavar=("NAME", "VERSION"), help="read CHARTS[0] as a values.yaml")
    args = parser.parse_args(argv)
    if args.values_only:
        generated = {args.values_only[0]: generate_values_only(args.charts[0], *args.values_only)}
    else:
        generated = generate(args.charts)
    args.out.mkdir(parents=True, exist_ok=True)
    for name, data in generated.items():
        (args.out / f"{name}.json").write_text(dump(data), "utf-8")
        print(f"{args.out / (name + '.json')}: {len(data['versions'])} versions")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
