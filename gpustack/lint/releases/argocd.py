"""Argo CD ``Application``: a Helm source (``spec.source`` or each of ``spec.sources``) is a release.

A source is a Helm chart when it names a ``chart`` from a Helm repository, or a chart folder
in Git (``path``) with ``helm`` settings; its values are ``helm.valueFiles`` (in their order),
``helm.values`` (a YAML string), ``helm.valuesObject`` and ``helm.parameters``, lowest precedence
first. A values file is relative to the source's ``path``; ``$<ref>/<file>`` names a file of
the repository that the Application's source with ``ref: <ref>`` checks out
(https://argo-cd.readthedocs.io/en/stable/user-guide/multiple_sources/). Either is read when
the set holds that path (a linted file whose path ends with it, one only); a file of another
repository is not known.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator, Mapping
from typing import Any

from gpustack.lint.model import Path, Resource, nonempty_text, posix_path
from gpustack.lint.releases.helmvalues import ValuesLayer, mapping, parameters_layer, text_layer
from gpustack.lint.releases.release import HelmChartRelease, WholeSet, new_release, spec_of, with_layers

KINDS = frozenset({"Application"})



def releases_of(resource: Resource) -> Iterator[HelmChartRelease]:
    spec = spec_of(resource, "argoproj.io")
    if spec is None:
        return
    sources: list[tuple[Path, Any]] = [(("spec", "source"), spec.get("source"))]
    if isinstance(spec.get("sources"), list):
        sources += [(("spec", "sources", i), source) for i, source in enumerate(spec["sources"])]
    for path, source in sources:
        if isinstance(source, Mapping) and (release := _argo_release(resource, path, source)):
            yield release


def settle(release: HelmChartRelease, whole: WholeSet) -> HelmChartRelease:
    """The release with the ``helm.valueFiles`` the set holds, below its other values."""
    source = mapping(release.resource.get(release.path[:-1]))
    listed = mapping(source.get("helm")).get("valueFiles")
    if not isinstance(listed, list) or not listed:
        return release
    refs = _refs(release.resource)
    layers: list[ValuesLayer] = []
    for entry in listed:
        wanted = _repository_path(entry, source, refs)
        if wanted is not None:
            layers += [ValuesLayer(r, (), r.data) for r in _file_ending_with(wanted, whole) if r.kind is None]
    return with_layers(release, (*layers, *release.layers)) if layers else release


def _refs(resource: Resource) -> frozenset[str]:
    """The ``ref`` names of the Application's sources."""
    sources = resource.get(("spec", "sources"))
    return frozenset(
        source["ref"] for source in (sources if isinstance(sources, list) else ())
        if isinstance(source, Mapping) and isinstance(source.get("ref"), str)
    )


def _repository_path(entry: Any, source: Mapping[str, Any], refs: frozenset[str]) -> str | None:
    """A values file's path in its repository: ``$ref/…`` from the ref source's root, another
    relative to the Helm source's ``path``; None for a URL, an unknown ref or a chart's own file
    (a chart from a Helm repository: no folder of the set)."""
    if not isinstance(entry, str) or "://" in entry:
        return None
    if entry.startswith("$"):
        ref, _, rest = entry[1:].partition("/")
        return rest if ref in refs and rest else None
    folder = source.get("path")
    return posixpath.join(folder, entry) if isinstance(folder, str) else None


def _file_ending_with(path: str, whole: WholeSet) -> list[Resource]:
    """The documents of the one linted file whose path ends with the repository path ``path``
    (none when no file does, or several: the repository's root is not known here)."""
    wanted = posixpath.normpath(path.lstrip("/"))
    if wanted in (".", "") or wanted.startswith("../"):
        return []
    matches = [
        file for file in whole.by_file
        if (name := posixpath.normpath(posix_path(file))) == wanted or name.endswith("/" + wanted)
    ]
    return list(whole.by_file[matches[0]]) if len(matches) == 1 else []


def set_releases(whole: WholeSet) -> Iterator[HelmChartRelease]:
    return iter(())


def _argo_release(resource: Resource, path: Path, source: Mapping[str, Any]) -> HelmChartRelease | None:
    """A Helm source: a chart from a Helm repository, or a chart folder in Git (``path``)."""
    helm = mapping(source.get("helm"))
    if isinstance(source.get("chart"), str):
        chart, chart_path = source["chart"], (*path, "chart")
    elif isinstance(source.get("path"), str) and helm:
        chart, chart_path = source["path"], (*path, "path")
    else:
        return None
    # Precedence (Argo CD docs): valueFiles, values, valuesObject, parameters.
    layers = [
        text_layer(resource, (*path, "helm", "values")),
        ValuesLayer(resource, (*path, "helm", "valuesObject"), mapping(helm.get("valuesObject"))),
        parameters_layer(resource, (*path, "helm", "parameters"), helm.get("parameters")),
    ]
    release = nonempty_text(helm.get("releaseName")) or resource.ref.name
    return new_release(
        resource, chart_path, chart, release, [layer for layer in layers if layer and layer.values],
        repo=nonempty_text(source.get("repoURL")), version=source.get("targetRevision"),
    )
