"""Helm chart folders kept in Git: a ``Chart.yaml`` and the ``values.yaml`` beside it.

Helm installs such a folder with its own ``values.yaml``. So the folder's values are a release
of the chart its ``Chart.yaml`` names, at the version it gives; and each dependency's part of
them, under the dependency's ``alias`` or name, with ``global`` shared by every subchart
(https://helm.sh/docs/chart_template_guide/subcharts_and_globals/), is a release of that
dependency at the version the dependency entry pins, found at the values file's lines. A GPU
Operator pinned as a dependency of a team's umbrella chart is checked like one a HelmRelease
installs. A dependency that its ``condition`` or ``tags`` turn off is not installed
(https://helm.sh/docs/topics/charts/#tags-and-condition-fields-in-dependencies) and is no
release; the condition and tag keys are read by Helm itself, not by a template.

A wrapper chart, one that depends on a chart of its own name (``gpu-operator`` 1.0.0 wrapping
NVIDIA's ``gpu-operator`` v26.3.3), is not that chart: its folder is no release of its own,
only its dependencies are.

A subchart unpacked under the parent's ``charts/`` folder is not installed on its own: its
``values.yaml`` is the lowest layer of the parent's dependency of that name.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from gpustack.lint.model import Resource, get_value, nonempty_text, posix_path
from gpustack.lint.releases.helmvalues import ValuesLayer, coalesce, mapping
from gpustack.lint.releases.release import HelmChartRelease, WholeSet, new_release, no_object_releases, settled

# Chart.yaml has an apiVersion (v1, v2) and no kind: read from the whole set, no kind of its own.
KINDS: frozenset[str | None] = frozenset()
CHART_FILE = "Chart.yaml"
VALUES_FILE = "values.yaml"  # the only values file Helm reads from a chart folder
CHART_API_VERSIONS = frozenset({"v1", "v2"})
KeyPath = tuple[str, ...]


def is_chart_metadata(resource: Resource) -> bool:
    """A chart's ``Chart.yaml``: that file name, apiVersion v1 or v2, no kind, a name."""
    return (
        resource.kind is None
        and posixpath.basename(posix_path(resource.file)) == CHART_FILE
        and resource.api_version in CHART_API_VERSIONS
        and isinstance(resource.data.get("name"), str)
    )


def chart_values_files(by_file: Mapping[str, Sequence[Resource]]) -> set[str]:
    """The files of ``by_file`` that are a chart folder's ``values.yaml`` (Helm reads them, if
    only for a dependency's condition, when no release takes their values)."""
    folders = {
        posixpath.dirname(posix_path(file))
        for file, resources in by_file.items()
        if any(is_chart_metadata(resource) for resource in resources)
    }
    return {
        file for file in by_file
        if posixpath.basename(posix_path(file)) == VALUES_FILE and posixpath.dirname(posix_path(file)) in folders
    }


releases_of = no_object_releases
settle = settled


def set_releases(whole: WholeSet) -> Iterator[HelmChartRelease]:
    charts = {posixpath.dirname(posix_path(chart.file)): chart for chart in _charts(whole)}
    if not charts:
        return
    files = {posix_path(file): resources for file, resources in whole.by_file.items()}
    for folder, chart in charts.items():
        values = _values(files, folder)
        dependencies = chart_dependencies(chart)
        # An unpacked subchart is installed only as its parent's dependency; a wrapper is not
        # the chart it wraps.
        if _parent_folder(folder) not in charts and not _wraps(chart, dependencies):
            yield _own_release(chart, values, dependencies)
        yield from _dependency_releases(files, folder, chart, values, dependencies)


def _charts(whole: WholeSet) -> Iterator[Resource]:
    for resources in whole.by_file.values():
        yield from (resource for resource in resources if is_chart_metadata(resource))


def _values(files: Mapping[str, list[Resource]], folder: str) -> list[Resource]:
    """The documents of the chart folder's ``values.yaml`` (``files``: the set by POSIX path)."""
    return [resource for resource in files.get(posixpath.join(folder, VALUES_FILE), ()) if resource.kind is None]


def _parent_folder(folder: str) -> str:
    """The chart folder that would hold ``folder`` as an unpacked subchart (``<parent>/charts/<name>``)."""
    charts_folder = posixpath.dirname(folder)
    return posixpath.dirname(charts_folder) if posixpath.basename(charts_folder) == "charts" else ""


def chart_dependencies(chart: Resource) -> list[tuple[int, Mapping[str, Any]]]:
    """The entries of ``dependencies`` that name a chart, with their index."""
    entries = chart.data.get("dependencies")
    return [
        (index, entry)
        for index, entry in enumerate(entries if isinstance(entries, list) else ())
        if isinstance(entry, Mapping) and isinstance(entry.get("name"), str)
    ]


def _wraps(chart: Resource, dependencies: list[tuple[int, Mapping[str, Any]]]) -> bool:
    """The chart depends on a chart of its own name: a wrapper, not that chart."""
    return any(entry["name"] == chart.data["name"] for _, entry in dependencies)


def _key(entry: Mapping[str, Any]) -> str:
    """Where the parent's values configure the dependency: its alias, else its name."""
    return nonempty_text(entry.get("alias")) or entry["name"]


def _helm_keys(dependencies: list[tuple[int, Mapping[str, Any]]]) -> frozenset[KeyPath]:
    """The parent's value keys Helm reads itself: each dependency's ``condition`` paths and
    ``tags.<tag>`` (https://helm.sh/docs/topics/charts/#the-chart-file)."""
    keys: set[KeyPath] = set()
    for _, entry in dependencies:
        keys.update(_condition_paths(entry))
        tags = entry.get("tags")
        keys.update(("tags", tag) for tag in (tags if isinstance(tags, list) else ()) if isinstance(tag, str))
    return frozenset(keys)


def _condition_paths(entry: Mapping[str, Any]) -> list[KeyPath]:
    condition = entry.get("condition")
    paths = condition.split(",") if isinstance(condition, str) else ()
    return [tuple(path.strip().split(".")) for path in paths if path.strip()]


def _own_release(
    chart: Resource, values: list[Resource], dependencies: list[tuple[int, Mapping[str, Any]]]
) -> HelmChartRelease:
    read = _helm_keys(dependencies)
    layers = [ValuesLayer(resource, (), resource.data, helm_reads=read) for resource in values]
    label = f"chart folder {posixpath.dirname(chart.file) or '.'}"
    version = chart.data.get("version")
    return new_release(chart, ("name",), chart.data["name"], None, layers, version=version, label=label)


def _dependency_releases(
    files: Mapping[str, list[Resource]],
    folder: str,
    chart: Resource,
    values: list[Resource],
    dependencies: list[tuple[int, Mapping[str, Any]]],
) -> Iterator[HelmChartRelease]:
    defaults = {
        _key(entry): _values(files, posixpath.join(folder, "charts", entry["name"])) for _, entry in dependencies
    }
    # Helm tells conditions from the parent's values over its subcharts' own under their keys.
    merged: Mapping[str, Any] = {}
    for key, resources in defaults.items():
        for resource in resources:
            merged = coalesce(merged, {key: resource.data})
    for resource in values:
        merged = coalesce(merged, resource.data)
    read = _helm_keys(dependencies)
    for index, entry in dependencies:
        if not _enabled(entry, merged):
            continue
        key = _key(entry)
        own_keys = frozenset(path[1:] for path in read if len(path) > 1 and path[0] == key)
        layers = [ValuesLayer(r, (), r.data) for r in defaults[key]]
        for resource in values:
            if shared := mapping(resource.data.get("global")):
                layers.append(ValuesLayer(resource, (), {"global": shared}))
            if own := mapping(resource.data.get(key)):
                layers.append(ValuesLayer(resource, (key,), own, helm_reads=own_keys))
        yield new_release(
            chart, ("dependencies", index, "name"), entry["name"], key, layers,
            repo=nonempty_text(entry.get("repository")), version=entry.get("version"),
            label=f"dependency {key} of {chart.file}",
        )


def _enabled(dependency: Mapping[str, Any], values: Mapping[str, Any]) -> bool:
    """Helm's rule: the first ``condition`` path that holds a boolean decides; else any of the
    ``tags`` set true enables and all of them set false disable; else enabled."""
    for path in _condition_paths(dependency):
        value = get_value(values, *path)
        if isinstance(value, bool):
            return value
    tags = dependency.get("tags")
    names = [tag for tag in (tags if isinstance(tags, list) else ()) if isinstance(tag, str)]
    settings = [get_value(values, "tags", tag) for tag in names]
    decided = [setting for setting in settings if isinstance(setting, bool)]
    return any(decided) if decided else True


def chart_folder_at(folder: str, whole: WholeSet) -> Resource | None:
    """The ``Chart.yaml`` of the set's chart folder at ``folder`` (a path as the input names
    files, ``.`` for the top), if the set holds one."""
    wanted = posixpath.join(folder, CHART_FILE) if folder != "." else CHART_FILE
    for file, resources in whole.by_file.items():
        if posixpath.normpath(posix_path(file)) == wanted:
            return next((resource for resource in resources if is_chart_metadata(resource)), None)
    return None

