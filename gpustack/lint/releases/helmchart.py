"""Helm chart folders kept in Git: a ``Chart.yaml`` and the ``values.yaml`` beside it.

Helm installs such a folder with its own ``values.yaml``. So the folder's values are a release
of the chart its ``Chart.yaml`` names, at the version it gives; and each dependency's part of
them, under the dependency's ``alias`` or name, with ``global`` shared by every subchart
(https://helm.sh/docs/chart_template_guide/subcharts_and_globals/), is a release of that
dependency at the version it names. A GPU Operator pinned as a dependency of a team's umbrella
chart is checked like one a HelmRelease installs. A dependency that its ``condition`` or
``tags`` turn off is not installed (https://helm.sh/docs/topics/charts/#tags-and-condition-fields-in-dependencies)
and is no release.

A subchart unpacked under the parent's ``charts/`` folder is not installed on its own: its
``values.yaml`` is the lowest layer of the parent's dependency of that name.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator, Mapping
from typing import Any

from gpustack.lint.model import Resource, get_value, nonempty_text
from gpustack.lint.releases.helmvalues import ValuesLayer, coalesce, mapping
from gpustack.lint.releases.kustomize import posix_path
from gpustack.lint.releases.release import HelmChartRelease, WholeSet, new_release

# Chart.yaml has an apiVersion (v1, v2) and no kind: read from the whole set, no kind of its own.
KINDS: frozenset[str | None] = frozenset()
CHART_FILE = "Chart.yaml"
VALUES_FILE = "values.yaml"  # the only values file Helm reads from a chart folder
CHART_API_VERSIONS = frozenset({"v1", "v2"})


def is_chart_metadata(resource: Resource) -> bool:
    """A chart's ``Chart.yaml``: that file name, apiVersion v1 or v2, no kind, a name."""
    return (
        resource.kind is None
        and posixpath.basename(posix_path(resource.file)) == CHART_FILE
        and resource.api_version in CHART_API_VERSIONS
        and isinstance(resource.data.get("name"), str)
    )


def releases_of(resource: Resource) -> Iterator[HelmChartRelease]:
    return iter(())


def settle(release: HelmChartRelease, whole: WholeSet) -> HelmChartRelease:
    return release


def set_releases(whole: WholeSet) -> Iterator[HelmChartRelease]:
    charts = {posixpath.dirname(posix_path(chart.file)): chart for chart in _charts(whole)}
    if not charts:
        return
    files = {posix_path(file): resources for file, resources in whole.by_file.items()}
    for folder, chart in charts.items():
        values = _values(files, folder)
        if _parent_folder(folder) not in charts:  # a subchart: the parent's dependency release
            yield _own_release(chart, values)
        yield from _dependency_releases(files, folder, chart, values)


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


def _own_release(chart: Resource, values: list[Resource]) -> HelmChartRelease:
    layers = [ValuesLayer(resource, (), resource.data) for resource in values]
    return new_release(chart, ("name",), chart.data["name"], None, layers, version=chart.data.get("version"))


def _dependency_releases(
    files: Mapping[str, list[Resource]], folder: str, chart: Resource, values: list[Resource]
) -> Iterator[HelmChartRelease]:
    merged: Mapping[str, Any] = {}
    for resource in values:
        merged = coalesce(merged, resource.data)
    dependencies = chart.data.get("dependencies")
    for index, dependency in enumerate(dependencies if isinstance(dependencies, list) else ()):
        name = dependency.get("name") if isinstance(dependency, Mapping) else None
        if not isinstance(name, str) or not _enabled(dependency, merged):
            continue
        key = nonempty_text(dependency.get("alias")) or name
        layers = [ValuesLayer(r, (), r.data) for r in _values(files, posixpath.join(folder, "charts", name))]
        for resource in values:
            if shared := mapping(resource.data.get("global")):
                layers.append(ValuesLayer(resource, (), {"global": shared}))
            if own := mapping(resource.data.get(key)):
                layers.append(ValuesLayer(resource, (key,), own))
        yield new_release(
            chart, ("dependencies", index, "name"), name, key, layers,
            repo=nonempty_text(dependency.get("repository")), version=dependency.get("version"),
        )


def _enabled(dependency: Mapping[str, Any], values: Mapping[str, Any]) -> bool:
    """Helm's rule: the first ``condition`` path that holds a boolean decides; else any of the
    ``tags`` set true enables and all of them set false disable; else enabled."""
    condition = dependency.get("condition")
    for path in condition.split(",") if isinstance(condition, str) else ():
        value = get_value(values, *path.strip().split("."))
        if isinstance(value, bool):
            return value
    tags = dependency.get("tags")
    settings = [get_value(values, "tags", tag) for tag in (tags if isinstance(tags, list) else ()) if isinstance(tag, str)]
    decided = [setting for setting in settings if isinstance(setting, bool)]
    return any(decided) if decided else True
