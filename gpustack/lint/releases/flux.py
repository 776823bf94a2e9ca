"""Flux ``HelmRelease``: the chart from ``spec.chart.spec``, or from the source ``spec.chartRef`` names.

The release is named ``spec.releaseName``, else ``<targetNamespace>-<name>``; its values are
``spec.values``. ``chartRef: {kind: OCIRepository | HelmChart, name, namespace}`` (the default
in current Flux templates) says nothing of the chart itself: the OCIRepository's ``spec.url``
ends in the chart name and its ``spec.ref`` pins the version (``digest`` over ``semver`` over
``tag``, per https://fluxcd.io/flux/components/source/ocirepositories/#reference); a HelmChart
names ``spec.chart`` and ``spec.version``. The version is passed on as written (a tag, a
semver range, or None); resolving it to what gpustack knows is the chart-key lookup's job.

A release whose source is not in the linted set, or whose version cannot be told, still counts:
``SourceIndex.resolve`` says so in a note, so that no release is skipped without the user knowing.

``spec.valuesFrom`` ConfigMaps of the set add values below ``spec.values``, in their order, as
helm-controller merges them (https://fluxcd.io/flux/components/helm/helmreleases/#values-references),
each positioned inside the ConfigMap's values text. Secrets are not read, nor a reference with a
``targetPath`` (it sets one value, not a values file).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from gpustack.lint.model import Resource, nonempty_text
from gpustack.lint.releases.helmvalues import ValuesLayer, mapping, text_layer
from gpustack.lint.releases.release import HelmChartRelease, WholeSet, new_release, spec_of, with_layers

KINDS = frozenset({"HelmRelease"})
CHART_REF_PATH = ("spec", "chartRef", "name")  # where a release with a chartRef names its chart
SOURCE_GROUP = "source.toolkit.fluxcd.io/"
SOURCE_KINDS = frozenset({"OCIRepository", "HelmChart"})
DEFAULT_VALUES_KEY = "values.yaml"  # helm-controller's default valuesKey
# Mirrors that republish an upstream chart under another repository name (the chart inside is
# the upstream one): the name gpustack's chart knowledge uses.
MIRRORED_NAMES: Mapping[str, str] = {"nvidia-gpu-operator": "gpu-operator", "bjw-s-app-template": "app-template"}



def releases_of(resource: Resource) -> Iterator[HelmChartRelease]:
    spec = spec_of(resource, "helm.toolkit.fluxcd.io")
    if spec is None:
        return
    name = resource.ref.name
    chart = spec.get("chart")
    chart_spec = mapping(chart.get("spec") if isinstance(chart, Mapping) else None)
    target = nonempty_text(spec.get("targetNamespace"))
    release = nonempty_text(spec.get("releaseName")) or (f"{target}-{name}" if target and name else name)
    layers = [ValuesLayer(resource, ("spec", "values"), mapping(spec.get("values")))]
    if not chart_spec and chart_ref(resource, spec):
        yield new_release(resource, CHART_REF_PATH, None, release, layers)
        return
    yield new_release(
        resource, ("spec", "chart", "spec", "chart"), chart_spec.get("chart"), release, layers,
        repo=nonempty_text(mapping(chart_spec.get("sourceRef")).get("name")), version=chart_spec.get("version"),
    )


def settle(release: HelmChartRelease, whole: WholeSet) -> HelmChartRelease:
    """The release with its ``valuesFrom`` ConfigMaps' values; a chartRef release with the chart,
    version and repository its source object names."""
    release = _with_values_from(release, whole)
    if release.path != CHART_REF_PATH:
        return release
    ref = chart_ref(release.resource, release.resource.get(("spec",)))
    assert ref is not None
    sources = whole.memo.get("flux-sources")
    if sources is None:
        sources = whole.memo["flux-sources"] = SourceIndex(whole.resources)
    source = sources.resolve(ref, str(release.resource.ref), release.resource.ref.name)
    return replace(release, chart=source.chart, version=source.version, repo=source.repo, note=source.note)


def _with_values_from(release: HelmChartRelease, whole: WholeSet) -> HelmChartRelease:
    references = release.resource.get(("spec", "valuesFrom"))
    if not isinstance(references, list) or not references:
        return release
    config_maps = whole.memo.get("flux-configmaps")
    if config_maps is None:
        config_maps = whole.memo["flux-configmaps"] = _config_maps(whole.resources)
    layers = []
    for reference in references:
        if not isinstance(reference, Mapping) or reference.get("kind") != "ConfigMap" or reference.get("targetPath"):
            continue
        candidates = config_maps.get(str(reference.get("name")), [])
        namespace = release.resource.ref.namespace
        found = [c for c in candidates if namespace is None or c.ref.namespace in (None, namespace)]
        key = nonempty_text(reference.get("valuesKey")) or DEFAULT_VALUES_KEY
        layer = text_layer(found[0], ("data", key)) if found else None
        if layer is not None:
            layers.append(layer)
    return with_layers(release, (*layers, *release.layers)) if layers else release


def _config_maps(resources: Iterable[Resource]) -> dict[str, list[Resource]]:
    found: dict[str, list[Resource]] = {}
    for resource in resources:
        if resource.kind == "ConfigMap" and resource.ref.name:
            found.setdefault(resource.ref.name, []).append(resource)
    return found


def set_releases(whole: WholeSet) -> Iterator[HelmChartRelease]:
    return iter(())


def patches_resource_claims(release: HelmChartRelease) -> bool:
    """A Flux HelmRelease whose post-renderers patch ``resourceClaims`` into what the chart
    renders: the DaemonSet gets its GPUs through DRA (CDI), not the runtime."""
    renderers = release.resource.get(("spec", "postRenderers")) if release.resource.kind == "HelmRelease" else None
    return _mentions(renderers, "resourceClaims")


def _mentions(value: object, word: str) -> bool:
    if isinstance(value, str):
        return word in value
    if isinstance(value, Mapping):
        return any(word in str(key) or _mentions(item, word) for key, item in value.items())
    return isinstance(value, list) and any(_mentions(item, word) for item in value)


@dataclass(frozen=True)
class ChartRef:
    """A HelmRelease's ``spec.chartRef``; ``namespace`` defaults to the release's own."""

    kind: str
    name: str
    namespace: str | None

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace + '/' if self.namespace else ''}{self.name}"


@dataclass(frozen=True)
class ChartSource:
    """What a source object says of the chart: name, version as written, repository."""

    chart: str
    version: str | None
    repo: str | None
    note: str | None = None  # why the chart or its version stays unknown


def chart_ref(resource: Resource, spec: Mapping[str, Any]) -> ChartRef | None:
    ref = spec.get("chartRef")
    if not isinstance(ref, Mapping) or not isinstance(ref.get("name"), str):
        return None
    namespace = ref.get("namespace") if isinstance(ref.get("namespace"), str) else resource.ref.namespace
    return ChartRef(str(ref.get("kind") or "OCIRepository"), ref["name"], namespace)


class SourceIndex:
    """The set's Flux OCIRepositories and HelmCharts by kind and name."""

    def __init__(self, resources: Iterable[Resource]) -> None:
        self._by_name: dict[tuple[str, str], list[Resource]] = {}
        for resource in resources:
            if resource.kind in SOURCE_KINDS and (resource.api_version or "").startswith(SOURCE_GROUP):
                if resource.ref.name:
                    self._by_name.setdefault((resource.kind, resource.ref.name), []).append(resource)

    def find(self, ref: ChartRef) -> Resource | None:
        """The source ``ref`` names. A side without a namespace (kustomize often sets it for a
        whole folder) matches any; a source in the same namespace wins over one without."""
        candidates = self._by_name.get((ref.kind, ref.name), [])
        matching = [c for c in candidates if ref.namespace is None or c.ref.namespace in (None, ref.namespace)]
        matching.sort(key=lambda c: c.ref.namespace != ref.namespace)
        return matching[0] if matching else None

    def resolve(self, ref: ChartRef, release: str, release_name: str | None) -> ChartSource:
        source = self.find(ref)
        if source is None and ref.name == release_name:
            # A source named after its release says nothing of its chart (bjw-s repositories give
            # each app an OCIRepository of its own name that pulls app-template).
            return ChartSource(
                "", None, None,
                f"{release}: its chartRef {ref}, named after the release, is not among the linted files, so its "
                "chart is unknown and its values are not checked; lint the source with the release",
            )
        if source is None:  # a source shared by several releases is commonly named after its chart
            return ChartSource(
                MIRRORED_NAMES.get(ref.name, ref.name), None, None,
                f"{release}: its chartRef {ref} is not among the linted files: taken to install chart "
                f"{ref.name} (the source's name), version unknown; lint the source with the release",
            )
        if source.kind == "HelmChart":
            return _helm_chart(source, release)
        return _oci_repository(source, release)


def _oci_repository(source: Resource, release: str) -> ChartSource:
    url = source.get(("spec", "url"))
    if not isinstance(url, str) or not url.strip():
        return ChartSource("", None, None, f"{release}: {source.ref} has no spec.url, so its chart is unknown")
    chart = url.rstrip("/").rsplit("/", 1)[-1]
    chart = MIRRORED_NAMES.get(chart, chart)
    ref = source.get(("spec", "ref"))
    ref = ref if isinstance(ref, Mapping) else {}
    semver, tag = _source_text(ref.get("semver")), _source_text(ref.get("tag"))
    # semver wins over tag; a digest wins over both, but a tag written beside it (as Renovate
    # pins) names the same artifact.
    version = semver or tag
    note = None
    if version is None:
        pinned = "a digest only" if _source_text(ref.get("digest")) else "no tag (Flux pulls `latest`)"
        note = f"{release}: {source.ref} pins {pinned}, so the chart version of {chart} is unknown"
    return ChartSource(chart, version, url, note)


def _helm_chart(source: Resource, release: str) -> ChartSource:
    chart = source.get(("spec", "chart"))
    if not isinstance(chart, str) or not chart.strip():
        return ChartSource("", None, None, f"{release}: {source.ref} has no spec.chart, so its chart is unknown")
    name = chart.rstrip("/").rsplit("/", 1)[-1]
    repo = source.get(("spec", "sourceRef", "name"))
    return ChartSource(name, _source_text(source.get(("spec", "version"))), repo if isinstance(repo, str) else None)


def _source_text(value: Any) -> str | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return value.strip() or None if isinstance(value, str) else None
