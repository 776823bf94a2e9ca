"""A Helm chart release as the set declares it, whichever GitOps format delivers it.

``HelmChartRelease``: chart, repository, version, and the user's values layer by layer with
their positions; ``new_release`` builds one from its layers, ``WholeSet`` is what a format
reads of the whole input set to complete its releases (``dispatch.releases``).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from gpustack.lint.model import Path, Resource, nonempty_text, posix_path, resources_by_file
from gpustack.lint.releases.helmvalues import ValuesLayer, coalesce


@dataclass(frozen=True)
class HelmChartRelease:
    """A chart release declared in the set; ``path`` is its chart reference. ``values`` are the
    user's, merged as Helm merges ``layers`` (lowest precedence first), without chart defaults."""

    resource: Resource
    path: Path
    chart: str  # chart name without repository or version, e.g. "kube-prometheus-stack"
    release: str | None
    values: Mapping[str, Any]
    repo: str | None = None
    version: str | None = None  # as written: "2.10.0", "v26.7.0", a range, a Git revision
    layers: tuple[ValuesLayer, ...] = ()
    note: str | None = None  # why the chart or its version could not be told
    label: str | None = None  # what declares it, where its object's kind does not tell (a chart folder)
    inferred: bool = False  # a values file whose chart its path and keys tell (``inferred``), not one named

    def where(self, *keys: str) -> tuple[Resource, Path]:
        """The object and path of the highest-precedence layer that sets ``keys``; the chart
        reference when only the chart's defaults do."""
        for layer in reversed(self.layers):
            path = layer.where(keys)
            if path is not None:
                return layer.resource, path
        return self.resource, self.path

    @property
    def owner(self) -> str:
        """What declares the release: ``HelmChart kube-system/hami``, ``values file helm/hami.values.yaml``,
        ``dependency hami of charts/hami/Chart.yaml``."""
        if self.label:
            return self.label
        return str(self.resource.ref) if self.resource.kind else f"values file {self.resource.file}"

    def __str__(self) -> str:
        version = f" {self.version}" if self.version else ""
        return f"chart {self.chart}{version} ({self.owner})"


def new_release(
    resource: Resource, path: Path, chart: Any, release: str | None, layers: list[ValuesLayer], **identity: Any
) -> HelmChartRelease:
    values: Mapping[str, Any] = {}
    for layer in layers:
        values = coalesce(values, layer.values)
    name, version = chart_name(chart)
    version = nonempty_text(identity.pop("version", None)) or version
    return HelmChartRelease(resource, path, name, release, values, version=version, layers=tuple(layers), **identity)


def with_layers(release: HelmChartRelease, layers: tuple[ValuesLayer, ...]) -> HelmChartRelease:
    values: Mapping[str, Any] = {}
    for layer in layers:
        values = coalesce(values, layer.values)
    return replace(release, values=values, layers=layers)


def chart_name(chart: Any) -> tuple[str, str | None]:
    """``prometheus-community/kube-prometheus-stack``, ``oci://…/hami``, ``…/hami-2.6.0.tgz`` →
    the name, and the version a packaged chart's file name carries."""
    if not isinstance(chart, str):
        return "", None
    name = chart.rstrip("/").rsplit("/", 1)[-1]
    if name.endswith(".tgz"):
        name, _, version = name[: -len(".tgz")].rpartition("-")
        return name, version or None
    return name, None


def no_object_releases(resource: Resource) -> Iterator[HelmChartRelease]:
    """``releases_of`` of a format whose declarations have no kind (chart folders, Fleet bundles,
    helmfiles): no object declares a release; ``set_releases`` finds them in the whole set."""
    return iter(())


def settled(release: HelmChartRelease, whole: WholeSet) -> HelmChartRelease:
    """``settle`` of such a format: its releases are whole when found."""
    return release


def spec_of(resource: Resource, api_group: str) -> Mapping[str, Any] | None:
    """The ``spec`` of a release object of ``api_group``; None for another group, or a spec
    that is no mapping (no release then)."""
    spec = resource.get(("spec",))
    return spec if resource.api_group == api_group and isinstance(spec, Mapping) else None


@dataclass
class WholeSet:
    """The input set's resources, by file too, and what formats derive from them once per
    run (``memo``: K3s's HelmChartConfigs, Flux's sources)."""

    resources: Sequence[Resource]
    by_file: dict[str, list[Resource]] = field(default_factory=dict)
    memo: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.by_file.update(resources_by_file(self.resources))

    def values_files(self, folder: str, names: Any) -> list[ValuesLayer]:
        """The values layers of files a release lists by path relative to ``folder`` (Fleet's
        and Zarf's ``valuesFiles``): the object-less documents of those files in the set."""
        layers = []
        for name in names if isinstance(names, list) else ():
            if not isinstance(name, str):
                continue
            wanted = posixpath.normpath(posixpath.join(folder, name))
            layers += [
                ValuesLayer(resource, (), resource.data)
                for file, resources in self.by_file.items()
                if posixpath.normpath(posix_path(file)) == wanted
                for resource in resources
                if resource.kind is None
            ]
        return layers
