"""Every Helm chart release of the input set, whichever GitOps format declares it.

Each delivery format is one module (``k3s``, ``argocd``, ``flux``, ``kustomize``, ``helmchart``, ``fleet``, ``zarf``,
``helmfile``, and ``commands``: helm commands in scripts and notes) with the same
four parts: ``KINDS`` (the kinds it reads: no two formats share one), ``releases_of`` (the
releases one object declares; none for another API group), ``settle`` (a release completed with
what the whole set holds) and ``set_releases`` (releases only the whole set declares). This
module sends each object to its format, adds the values files ``.gpustack.yaml`` maps to a
chart, then those whose chart their path and keys tell (``inferred``), and keeps the result
once per run. A new format is a new module and one entry in
``FORMATS``.
"""

from __future__ import annotations

import weakref
from dataclasses import replace
from collections.abc import Iterator
from typing import TYPE_CHECKING, Protocol

from gpustack.lint.model import Path, Resource
from gpustack.lint.releases import argocd, commands, fleet, flux, helmchart, helmfile, inferred, k3s, kustomize, zarf
from gpustack.lint.releases.helmvalues import ValuesLayer
from gpustack.lint.releases.release import HelmChartRelease, WholeSet, new_release

if TYPE_CHECKING:
    from gpustack.lint.context import LintContext


class Format(Protocol):
    KINDS: frozenset[str | None]

    def releases_of(self, resource: Resource) -> Iterator[HelmChartRelease]: ...
    def settle(self, release: HelmChartRelease, whole: WholeSet) -> HelmChartRelease: ...
    def set_releases(self, whole: WholeSet) -> Iterator[HelmChartRelease]: ...


FORMATS: tuple[Format, ...] = (k3s, argocd, flux, kustomize, helmchart, fleet, zarf, helmfile, commands)
# The kinds any format reads.
_RELEASE_KINDS = frozenset().union(*(delivery.KINDS for delivery in FORMATS))


def format_of(resource: Resource) -> Format | None:
    """The GitOps format that reads ``resource``'s kind, if any."""
    if resource.kind not in _RELEASE_KINDS:  # before ``ref``: most objects of a large set are none of these
        return None
    return next(delivery for delivery in FORMATS if resource.kind in delivery.KINDS)


def releases(ctx: LintContext) -> tuple[HelmChartRelease, ...]:
    """Every chart release of the set, once: what objects declare (each format's ``releases_of``),
    with K3s HelmChartConfigs merged into their HelmChart, kustomize ``valuesFile``s, and the
    values files that ``.gpustack.yaml`` maps to a chart (``ctx.values_files``). Computed once
    per run."""
    cached = _RELEASES.get(id(ctx))
    if cached is not None and cached[0]() is ctx:
        return cached[1]
    found = _releases(ctx)
    for key in [key for key, (ref, _) in _RELEASES.items() if ref() is None]:
        del _RELEASES[key]
    _RELEASES[id(ctx)] = (weakref.ref(ctx), found)
    return found


_RELEASES: dict[int, tuple[weakref.ref[LintContext], tuple[HelmChartRelease, ...]]] = {}


def same_releases(ctx: LintContext, other: LintContext) -> LintContext:
    """``other`` (``ctx`` with more pod specs, the same resources) sharing its releases."""
    _RELEASES[id(other)] = (weakref.ref(other), releases(ctx))
    return other


def _releases(ctx: LintContext) -> tuple[HelmChartRelease, ...]:
    whole = WholeSet(ctx.resources)
    found: list[HelmChartRelease] = []
    for resource in ctx.resources:
        delivery = format_of(resource)
        if delivery is not None:
            found.extend(delivery.settle(release, whole) for release in delivery.releases_of(resource))
    for delivery in FORMATS:
        found.extend(delivery.set_releases(whole))
    installed = helmfile.installed_chart_files(whole)
    if installed:  # a chart folder a helmfile installs is that release, not one of its own
        found = [r for r in found if not (r.resource.file in installed and helmchart.is_chart_metadata(r.resource))]
    # A values file a helm command of the set installs is judged as part of that release.
    commanded = {layer.resource.file for r in found if commands.command_of(r) is not None for layer in r.layers}
    for file, chart in ctx.values_files.items():
        if file in commanded:
            continue
        name, _, version = chart.partition("@")
        for resource in whole.by_file.get(file, ()):
            layers = [ValuesLayer(resource, (), resource.data)]
            found.append(new_release(resource, (), name, None, layers, version=version))
    found.extend(_inferred_releases(ctx, whole, found))
    return tuple(found)


def _inferred_releases(ctx: LintContext, whole: WholeSet, found: list[HelmChartRelease]) -> Iterator[HelmChartRelease]:
    """Releases of the object-less files no release takes, whose path and keys tell their chart
    (``inferred``): no version, so rules check the newest key data and say so. Not where an
    object of the set declares a release of that chart: a values file it does not take is a
    copy or an alternative, not what it installs (the file's note says so)."""
    from gpustack.lint.unread import objectless

    taken = {layer.resource.file for release in found for layer in release.layers}
    taken |= helmchart.chart_values_files(whole.by_file)
    declared = {name for release in found for name in inferred.data_names(release.chart)}
    for file, resources in whole.by_file.items():
        if file in taken or file in ctx.values_files or not objectless(resources):
            continue
        chart = inferred.inferred_chart(file, resources)
        if chart is not None and chart not in declared:
            label = f"values file {file} (chart {chart} inferred from its path and keys)"
            release = new_release(resources[0], (), chart, None, [ValuesLayer(resources[0], (), resources[0].data)])
            yield replace(release, label=label, inferred=True)


def release_notes(ctx: LintContext) -> Iterator[tuple[Resource, Path, str]]:
    """Why a release's chart or version is unknown (the rules that need it pass it by)."""
    for release in releases(ctx):
        if release.note:
            yield release.resource, release.path, release.note
