"""The value keys a Helm chart has, per version: gpustack's data, or a chart given at run time.

Helm ignores a value key that no template reads (seed 001 §11 set HAMi's
``scheduler.kubeScheduler.imageTag``, a key chart v2.7.0 renamed, and got a kube-scheduler of
another version than intended; upstream-facts §0). GS031 compares values with the keys below.

A key tree maps each key to its sub-keys; a leaf is ``None`` (a value of its own: scalar, list,
or a map gpustack does not check) or ``"*"`` (a free-form map or a subchart whose keys are not
known: anything goes below it). A tree is derived from a chart's default ``values.yaml``:

- a default ``{}`` or null, a key of ``FREE_FORM`` (Kubernetes types, label and annotation maps,
  Grafana's ini), ``global`` and subcharts without data are free-form;
- a chart's dependency conditions (``nfd.enabled``) are keys although values.yaml omits them;
- with a chart folder or ``.tgz``, keys that templates read (``.Values.a.b``) count too, and its
  subcharts' trees sit under their alias.

The shipped data, ``data/chart-keys/<chart>@<version>.yaml``, is made by this module's entry
point from the upstream files (``python -m gpustack.lint.chartkeys --help``); a test checks it
against them. ``data/chart-keys/renames.yaml`` lists keys a chart renamed, with the version.
"""

from __future__ import annotations

import io
import re
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

KeyTree = Mapping[str, Any]
FREE = "*"
# Keys whose maps hold Kubernetes objects or user-chosen names: never checked below.
FREE_FORM = frozenset(
    {
        "affinity", "nodeSelector", "tolerations", "resources", "securityContext", "podSecurityContext",
        "containerSecurityContext", "livenessProbe", "readinessProbe", "startupProbe",
        "topologySpreadConstraints", "annotations", "labels", "podAnnotations", "podLabels",
        "additionalLabels", "commonLabels", "extraLabels", "env", "extraEnv", "envFrom", "customMetrics",
        "dashboards", "dashboardProviders", "datasources", "grafana.ini", "global",
    }
)
_TEMPLATE_VALUE = re.compile(r"\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)")
_DATA = "data/chart-keys"


@dataclass(frozen=True)
class ChartKeys:
    chart: str
    version: str
    keys: KeyTree
    source: str = ""  # where the keys come from, for messages

    def lookup(self, path: tuple[str, ...]) -> int | None:
        """None when ``path`` is a key (or lies below a leaf); else the index of its first step
        that the chart does not have."""
        node: Any = self.keys
        for index, step in enumerate(path):
            if not isinstance(node, Mapping):
                return None  # below a leaf or a free-form map
            if step not in node:
                return index
            node = node[step]
        return None

    def siblings(self, parent: tuple[str, ...]) -> list[tuple[str, ...]]:
        """Every key path below ``parent`` (relative to it): candidates for a hint."""
        node: Any = self.keys
        for step in parent:
            node = node.get(step) if isinstance(node, Mapping) else None
        return list(_paths(node, ())) if isinstance(node, Mapping) else []


def _paths(tree: KeyTree, prefix: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
    for key, sub in tree.items():
        yield (*prefix, key)
        if isinstance(sub, Mapping):
            yield from _paths(sub, (*prefix, key))


# --- deriving a tree ---------------------------------------------------------------------


def derive(defaults: Any, *, conditions: tuple[str, ...] = (), subcharts: Mapping[str, Any] = {}) -> KeyTree:
    """The key tree of a chart's default values (see the module docstring)."""
    tree = _tree(defaults) if isinstance(defaults, Mapping) else {}
    for alias, sub in subcharts.items():
        tree[alias] = _union(tree.get(alias), sub)
    for condition in conditions:
        _add(tree, tuple(condition.split(".")))
    return tree


def _tree(values: Mapping[str, Any]) -> dict[str, Any]:
    tree: dict[str, Any] = {}
    for key, value in values.items():
        key = str(key)
        if _free_form(key) or value is None or (isinstance(value, Mapping) and not value):
            tree[key] = FREE
        elif isinstance(value, Mapping):
            tree[key] = _tree(value)
        else:
            tree[key] = None
    return tree


def _free_form(key: str) -> bool:
    """FREE_FORM, and node selectors, labels and annotations under any name (HAMi's
    ``nvidiaNodeSelector``, ``podLabels``, ``serviceAnnotations``)."""
    return key in FREE_FORM or key.lower().endswith(("nodeselector", "labels", "annotations"))


def _union(a: Any, b: Any) -> Any:
    if a == FREE or b == FREE:
        return FREE
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return {key: _union(a.get(key), b.get(key)) if key in a and key in b else a.get(key, b.get(key))
                for key in {**a, **b}}
    return a if isinstance(a, Mapping) else b


def _add(tree: dict[str, Any], path: tuple[str, ...]) -> None:
    node = tree
    for step in path[:-1]:
        if step not in node:
            node[step] = {}
        elif not isinstance(node[step], dict):
            return  # below a leaf or a free-form map: already allowed
        node = node[step]
    node.setdefault(path[-1], None)


# --- reading a chart ----------------------------------------------------------------------


@dataclass(frozen=True)
class _Chart:
    meta: Mapping[str, Any]
    values: Any
    templates: tuple[str, ...] = ()
    subcharts: Mapping[str, _Chart] = field(default_factory=dict)  # by folder or archive name


def read_chart(path: Path) -> ChartKeys:
    """The keys of a chart folder or packaged chart (``.tgz``), templates and subcharts included."""
    chart = _read_tgz(path) if path.is_file() else _read_folder(path)
    return ChartKeys(str(chart.meta.get("name", "")), str(chart.meta.get("version", "")), _chart_tree(chart), str(path))


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


def _chart_tree(chart: _Chart, known: frozenset[str] = frozenset()) -> KeyTree:
    """``known``: subchart aliases whose keys gpustack's data holds (nested when loaded)."""
    dependencies = [d for d in chart.meta.get("dependencies") or () if isinstance(d, Mapping)]
    by_name = {str(sub.meta.get("name")): sub for sub in chart.subcharts.values()}
    subcharts: dict[str, Any] = {}
    for dependency in dependencies:
        alias = str(dependency.get("alias") or dependency.get("name"))
        sub = by_name.get(str(dependency.get("name")))
        if sub is not None:
            subcharts[alias] = _chart_tree(sub)
        elif alias not in known:
            subcharts[alias] = FREE
    conditions = tuple(c.strip() for d in dependencies for c in str(d.get("condition") or "").split(",") if c.strip())
    referenced = tuple(m.group(1)[1:] for text in chart.templates for m in _TEMPLATE_VALUE.finditer(text))
    return derive(chart.values, conditions=conditions + referenced, subcharts=subcharts)


def _yaml(text: str) -> Any:
    import yaml

    return yaml.load(text, Loader=yaml.CSafeLoader)


def _read_folder(folder: Path) -> _Chart:
    values = folder / "values.yaml"
    templates = tuple(p.read_text("utf-8", "replace") for p in sorted((folder / "templates").rglob("*")) if p.is_file())
    subcharts: dict[str, _Chart] = {}
    charts = folder / "charts"
    for sub in sorted(charts.iterdir()) if charts.is_dir() else ():
        if sub.is_dir() and (sub / "Chart.yaml").is_file():
            subcharts[sub.name] = _read_folder(sub)
        elif sub.name.endswith(".tgz"):
            subcharts[sub.name] = _read_tgz(sub)
    return _Chart(
        _yaml((folder / "Chart.yaml").read_text("utf-8")) or {},
        _yaml(values.read_text("utf-8")) if values.is_file() else {},
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
    templates = tuple(
        data.decode("utf-8", "replace") for name, data in sorted(files.items()) if name.startswith(prefix + "templates/")
    )
    return _Chart(_yaml(text("Chart.yaml") or "") or {}, _yaml(text("values.yaml") or "") or {}, templates, subcharts)


# --- shipped data -------------------------------------------------------------------------


def _data_files() -> Iterator[Any]:
    folder = resources.files("gpustack.lint").joinpath(_DATA)
    return (entry for entry in folder.iterdir() if "@" in entry.name and entry.name.endswith(".yaml"))


def normalise_version(version: str) -> str:
    return version.strip().removeprefix("v")


@cache
def shipped() -> Mapping[str, Mapping[str, str]]:
    """chart → normalised version → data file name (read on demand)."""
    found: dict[str, dict[str, str]] = {}
    for entry in _data_files():
        chart, version = entry.name[: -len(".yaml")].split("@", 1)
        found.setdefault(chart, {})[normalise_version(version)] = entry.name
    return found


@cache
def _load(name: str) -> ChartKeys:
    data = _yaml(resources.files("gpustack.lint").joinpath(_DATA, name).read_text("utf-8"))
    keys = dict(data["keys"])
    for alias, ref in (data.get("subcharts") or {}).items():
        chart, version = ref.split("@", 1)
        sub = chart_keys(chart, version)
        keys[alias] = _union(keys.get(alias), sub.keys if sub else FREE)
    return ChartKeys(data["chart"], str(data["version"]), keys, f"gpustack's data for {data['chart']} {data['version']}")


def versions(chart: str) -> tuple[str, ...]:
    """The versions of ``chart`` gpustack has key data for, as the data writes them."""
    return tuple(_yaml_version(name) for name in shipped().get(chart, {}).values())


def _yaml_version(name: str) -> str:
    return name[: -len(".yaml")].split("@", 1)[1]


def chart_keys(chart: str, version: str, extra: tuple[ChartKeys, ...] = ()) -> ChartKeys | None:
    """The keys of ``chart`` at exactly ``version`` (``v`` prefix or not): a chart given with
    ``--chart-values`` first, then gpustack's data. Ranges, patch releases without data and
    missing versions: ``gpustack.lint.chartversions.resolve``."""
    wanted = normalise_version(version)
    for keys in extra:
        if keys.chart == chart and normalise_version(keys.version) == wanted:
            return keys
    name = shipped().get(chart, {}).get(wanted)
    return _load(name) if name else None


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
    data = _yaml(resources.files("gpustack.lint").joinpath(_DATA, "renames.yaml").read_text("utf-8"))
    return tuple(
        Rename(tuple(item["old"].split(".")), tuple(item["new"].split(".")), str(item["since"]))
        for item in data.get(chart) or ()
    )


# --- the generator ------------------------------------------------------------------------


def dump(keys: ChartKeys, *, source: str, subcharts: Mapping[str, str] = {}) -> str:
    """The data file of ``keys``: a header saying where they come from, then the tree."""
    import yaml

    header = (
        f"# Value keys of chart {keys.chart} {keys.version}, derived by `python -m gpustack.lint.chartkeys`\n"
        f"# from {source}.\n"
        "# A key maps to its sub-keys; null is a key with a value of its own, \"*\" a free-form map\n"
        "# (anything goes below it). Regenerate rather than edit.\n"
    )
    body = {"chart": keys.chart, "version": keys.version, "subcharts": dict(subcharts), "keys": _sorted(keys.keys)}
    return header + yaml.safe_dump(body, sort_keys=False, default_flow_style=False, width=120)


def _sorted(tree: Any) -> Any:
    return {key: _sorted(tree[key]) for key in sorted(tree)} if isinstance(tree, Mapping) else tree


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m gpustack.lint.chartkeys",
        description="Print the key data of a chart, from a chart folder, a .tgz, or a values.yaml and Chart.yaml.",
    )
    parser.add_argument("chart", type=Path, help="a chart folder, a packaged chart (.tgz), or a values.yaml")
    parser.add_argument("--chart-yaml", type=Path, help="the Chart.yaml beside a values.yaml (name, dependencies)")
    parser.add_argument("--name", help="the chart name (default: Chart.yaml's)")
    parser.add_argument("--version", help="the chart version (default: Chart.yaml's)")
    parser.add_argument("--source", default=None, help="where the files come from, for the header")
    parser.add_argument(
        "--subchart", action="append", default=[], metavar="ALIAS=CHART@VERSION",
        help="a subchart whose keys gpustack's data holds, nested under ALIAS",
    )
    parser.add_argument(
        "--read", action="append", default=[], metavar="KEY",
        help="a key the templates read that values.yaml only shows in a comment (a.b.c)",
    )
    args = parser.parse_args(argv)
    subcharts = dict(item.split("=", 1) for item in args.subchart)
    if args.chart.suffix in (".yaml", ".yml"):
        meta = _yaml(args.chart_yaml.read_text("utf-8")) if args.chart_yaml else {}
        chart = _Chart(meta, _yaml(args.chart.read_text("utf-8")), tuple(f".Values.{key}" for key in args.read))
        keys = ChartKeys(str(meta.get("name", "")), str(meta.get("version", "")), _chart_tree(chart, frozenset(subcharts)))
    else:
        keys = read_chart(args.chart)
    keys = ChartKeys(args.name or keys.chart, args.version or keys.version, keys.keys)
    sys.stdout.write(dump(keys, source=args.source or str(args.chart), subcharts=subcharts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
