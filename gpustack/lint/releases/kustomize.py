"""kustomize: ``helmCharts`` of a ``kustomization.yaml``, and the files a kustomization leaves out.

Each ``helmCharts`` item is a release (``valuesInline`` over its ``valuesFile``, a file beside
the kustomization). Which files a kustomization leaves undeployed is ``deployed``'s part.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator, Mapping

from gpustack.lint.model import Resource, nonempty_text, posix_path
from gpustack.lint.releases.helmvalues import ValuesLayer, mapping
from gpustack.lint.releases.release import HelmChartRelease, WholeSet, new_release, with_layers

# None: a kustomization.yaml without apiVersion and kind.
KINDS = frozenset({"Kustomization", None})
KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")


def is_kustomization(resource: Resource) -> bool:
    """A kustomize ``Kustomization``, or a kustomization file written without apiVersion and kind."""
    if resource.kind == "Kustomization":
        return (resource.api_version or "").startswith("kustomize.config.k8s.io/")
    return resource.kind is None and posixpath.basename(posix_path(resource.file)) in KUSTOMIZATION_FILES


def releases_of(resource: Resource) -> Iterator[HelmChartRelease]:
    if not is_kustomization(resource):
        return
    charts = resource.get(("helmCharts",))
    for index, item in enumerate(charts if isinstance(charts, list) else ()):
        if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
            continue
        path = ("helmCharts", index)
        layers = [ValuesLayer(resource, (*path, "valuesInline"), mapping(item.get("valuesInline")))]
        yield new_release(
            resource, (*path, "name"), item["name"], nonempty_text(item.get("releaseName")) or item["name"], layers,
            repo=nonempty_text(item.get("repo")), version=item.get("version"),
        )


def settle(release: HelmChartRelease, whole: WholeSet) -> HelmChartRelease:
    """kustomize's ``valuesFile`` (relative to the kustomization), below ``valuesInline``."""
    item = release.resource.get(release.path[:-1])
    values_file = item.get("valuesFile") if isinstance(item, Mapping) else None
    if not isinstance(values_file, str):
        return release
    folder = posixpath.dirname(posix_path(release.resource.file))
    wanted = posixpath.normpath(posixpath.join(folder, values_file))
    files = [r for file, rs in whole.by_file.items() if posixpath.normpath(posix_path(file)) == wanted for r in rs]
    return with_layers(release, tuple(ValuesLayer(r, (), r.data) for r in files) + release.layers)


def set_releases(whole: WholeSet) -> Iterator[HelmChartRelease]:
    return iter(())
