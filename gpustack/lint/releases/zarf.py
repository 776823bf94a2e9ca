"""Zarf packages: the Helm charts a ``zarf.yaml`` (``kind: ZarfPackageConfig``) deploys.

Each ``components[].charts[]`` entry is a release (https://docs.zarf.dev/ref/components/#charts):
``name`` is the chart's name (for a ``url`` of a Helm repository or an OCI registry; for a
``localPath`` chart its ``Chart.yaml``'s name, which ``name`` repeats by convention),
``version`` its version, ``releaseName`` the release (default ``name``), and ``valuesFiles``
its values, relative to the ``zarf.yaml``, lowest precedence first. Zarf's package variables
(``###ZARF_VAR_…###``) stay in the values as written.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator, Mapping

from gpustack.lint.model import Resource, nonempty_text, posix_path
from gpustack.lint.releases.helmvalues import mapping
from gpustack.lint.releases.release import HelmChartRelease, WholeSet, new_release, with_layers

KINDS = frozenset({"ZarfPackageConfig"})


def releases_of(resource: Resource) -> Iterator[HelmChartRelease]:
    components = resource.data.get("components")
    for c, component in enumerate(components if isinstance(components, list) else ()):
        charts = mapping(component).get("charts")
        for h, chart in enumerate(charts if isinstance(charts, list) else ()):
            chart = mapping(chart)
            name = nonempty_text(chart.get("name"))
            if name is None:
                continue
            yield new_release(
                resource, ("components", c, "charts", h, "name"), name,
                nonempty_text(chart.get("releaseName")) or name, [],
                repo=nonempty_text(chart.get("url")) or nonempty_text(chart.get("repoName")),
                version=nonempty_text(chart.get("version")), label=f"Zarf package {resource.file}, chart {name}",
            )


def settle(release: HelmChartRelease, whole: WholeSet) -> HelmChartRelease:
    """The release with its ``valuesFiles`` read from the set."""
    entry = release.resource.get(release.path[:-1])
    folder = posixpath.dirname(posix_path(release.resource.file))
    layers = whole.values_files(folder, entry.get("valuesFiles") if isinstance(entry, Mapping) else None)
    return with_layers(release, tuple(layers)) if layers else release


def set_releases(whole: WholeSet) -> Iterator[HelmChartRelease]:
    return iter(())
