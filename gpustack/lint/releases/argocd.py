"""Argo CD ``Application``: a Helm source (``spec.source`` or each of ``spec.sources``) is a release.

A source is a Helm chart when it names a ``chart`` from a Helm repository, or a chart folder
in Git (``path``) with ``helm`` settings; its values are ``helm.values`` (a YAML string),
``helm.valuesObject`` and ``helm.parameters``, in that precedence.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from gpustack.lint.model import Path, Resource, nonempty_text
from gpustack.lint.releases.helmvalues import ValuesLayer, mapping, parameters_layer, text_layer
from gpustack.lint.releases.release import HelmChartRelease, WholeSet, new_release, spec_of

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
    """An Application's release needs nothing else of the set."""
    return release


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
