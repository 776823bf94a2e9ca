"""Rancher Fleet: the ``helm`` section of a bundle's ``fleet.yaml`` is a release.

A folder with a ``fleet.yaml`` is a Fleet bundle (https://fleet.rancher.io/ref-fleet-yaml). Its
``helm.chart`` names the chart: a chart of ``helm.repo``, an ``oci://`` URL, or a path to a
chart folder relative to the bundle (the bundle's own folder when ``chart`` is left out and it
holds a ``Chart.yaml``); a chart folder of the set gives the name and version its
``Chart.yaml`` says. The values are, lowest precedence first, ``helm.valuesFrom`` ConfigMaps of
the set (Secrets' values are not known), the ``helm.valuesFiles`` (relative to the bundle), and
``helm.values``. Each ``targetCustomizations`` entry with ``helm`` settings deploys the bundle
to the clusters it selects with its values over those: one more release, under the bundle's
label too, so that a finding on the values they share is reported once. The raw manifests of a bundle are linted as the files they are.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator, Mapping
from typing import Any

from gpustack.lint.model import Path, Resource, nonempty_text, posix_path
from gpustack.lint.releases.helmchart import chart_folder_at
from gpustack.lint.releases.helmvalues import ValuesLayer, mapping, text_layer
from gpustack.lint.releases.release import HelmChartRelease, WholeSet, new_release, no_object_releases, settled

# fleet.yaml has neither apiVersion nor kind: read from the whole set, no kind of its own.
KINDS: frozenset[str | None] = frozenset()
FLEET_FILES = ("fleet.yaml", "fleet.yml")
_REMOTE = ("oci://", "http://", "https://")


def is_fleet_bundle(resource: Resource) -> bool:
    """A Fleet bundle's ``fleet.yaml``: that file name, no kind, a mapping."""
    return (
        resource.kind is None
        and resource.api_version is None
        and posixpath.basename(posix_path(resource.file)) in FLEET_FILES
    )


releases_of = no_object_releases
settle = settled


def set_releases(whole: WholeSet) -> Iterator[HelmChartRelease]:
    for resources in whole.by_file.values():
        for resource in resources:
            if is_fleet_bundle(resource) and isinstance(resource.data.get("helm"), Mapping):
                yield from _bundle_releases(resource, whole)


def _bundle_releases(bundle: Resource, whole: WholeSet) -> Iterator[HelmChartRelease]:
    helm = mapping(bundle.data.get("helm"))
    folder = posixpath.dirname(posix_path(bundle.file))
    chart, chart_path, version = _chart(bundle, helm, folder, whole)
    if not chart:
        return
    base = _values_layers(bundle, ("helm",), helm, folder, whole)
    release = nonempty_text(helm.get("releaseName"))
    identity = {"repo": nonempty_text(helm.get("repo")), "version": version}
    label = f"Fleet bundle {bundle.file}"
    yield new_release(bundle, chart_path, chart, release, base, label=label, **identity)
    customizations = bundle.data.get("targetCustomizations")
    for index, target in enumerate(customizations if isinstance(customizations, list) else ()):
        target_helm = mapping(mapping(target).get("helm"))
        if not target_helm:
            continue
        path = ("targetCustomizations", index, "helm")
        extra = _values_layers(bundle, path, target_helm, folder, whole)
        yield new_release(bundle, chart_path, chart, release, [*base, *extra], label=label, **identity)


def _chart(bundle: Resource, helm: Mapping[str, Any], folder: str, whole: WholeSet) -> tuple[str, Path, str | None]:
    """The chart's name, where it is written, and its version (``helm.version``, else a chart
    folder's ``Chart.yaml``)."""
    version = nonempty_text(helm.get("version"))
    written = nonempty_text(helm.get("chart"))
    if written is None or (not written.startswith(_REMOTE) and not nonempty_text(helm.get("repo"))):
        local = chart_folder_at(posixpath.normpath(posixpath.join(folder, written or ".")), whole)
        if local is not None:
            return local.data["name"], ("helm", "chart") if written else ("helm",), version or local.data.get("version")
    if written is None:
        return "", ("helm",), None
    return written, ("helm", "chart"), version


def _values_layers(
    bundle: Resource, path: Path, helm: Mapping[str, Any], folder: str, whole: WholeSet
) -> list[ValuesLayer]:
    """``valuesFrom`` ConfigMaps, ``valuesFiles``, then ``values`` (lowest precedence first)."""
    layers = [*_values_from(helm.get("valuesFrom"), whole), *whole.values_files(folder, helm.get("valuesFiles"))]
    layers.append(ValuesLayer(bundle, (*path, "values"), mapping(helm.get("values"))))
    return [layer for layer in layers if layer.values]


def _values_from(references: Any, whole: WholeSet) -> Iterator[ValuesLayer]:
    """``valuesFrom: [{configMapKeyRef: {name, namespace, key}}]`` read from the set's ConfigMaps."""
    for reference in references if isinstance(references, list) else ():
        ref = mapping(mapping(reference).get("configMapKeyRef"))
        name, key = nonempty_text(ref.get("name")), nonempty_text(ref.get("key")) or "values.yaml"
        namespace = nonempty_text(ref.get("namespace"))
        for resource in whole.resources:
            if resource.kind == "ConfigMap" and resource.ref.name == name and namespace in (None, resource.ref.namespace):
                layer = text_layer(resource, ("data", key))
                if layer is not None:
                    yield layer
                break
