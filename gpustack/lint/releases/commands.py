"""Helm commands in scripts and notes, and Terraform's ``helm_release``: a GPU chart they install is a release.

Many clusters get their GPU stack from a README's or a script's ``helm upgrade --install
gpu-operator nvidia/gpu-operator --set driver.enabled=false`` rather than from a GitOps object.
``input/hostscripts`` keeps each such command of a GPU chart (``facts.hostscripts.helm_releases``);
this format makes it a release whose values are, lowest precedence first, its ``-f`` files
(relative to the script's folder, or to a folder above it: scripts are often run from the
repository's root) and its ``--set`` values, as Helm merges them
(https://helm.sh/docs/helm/helm_install/). A command whose values the set cannot tell (a values
file it does not hold, a shell variable in a value, ``--set-file``) is no release: its chart's
defaults would be judged where the user may have changed them. A Terraform ``helm_release``
(``input/terraform``) is read the same way: its ``values`` files and YAML literals in order,
then its ``set`` blocks, as the Helm provider merges them
(https://registry.terraform.io/providers/hashicorp/helm/latest/docs/resources/release); one
whose values Terraform computes (variables, ``templatefile``, ``yamlencode``) is no release.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from gpustack.lint.facts.hostscripts import RELEASE_PREFIX, helm_releases
from gpustack.lint.model import Resource, posix_path
from gpustack.lint.releases.helmchart import chart_folder_at
from gpustack.lint.releases.helmvalues import ValuesLayer
from gpustack.lint.releases.release import HelmChartRelease, WholeSet, new_release, no_object_releases, settled

# Scripts and notes have no kind: read from the whole set.
KINDS: frozenset[str | None] = frozenset()

releases_of = no_object_releases
settle = settled


def set_releases(whole: WholeSet) -> Iterator[HelmChartRelease]:
    for resource in whole.resources:
        for key, command in helm_releases(resource):
            release = _release(resource, key, command, whole)
            if release is not None:
                yield release


def command_of(release: HelmChartRelease) -> Mapping[str, Any] | None:
    """What the script's or note's helm command that declares ``release`` says; None for a
    release another format declares."""
    if release.resource.kind is not None or len(release.path) != 1:
        return None
    found = release.resource.data.get(release.path[0])
    return found if str(release.path[0]).startswith(RELEASE_PREFIX) and isinstance(found, Mapping) else None


def _release(resource: Resource, key: str, command: Mapping[str, Any], whole: WholeSet) -> HelmChartRelease | None:
    if command.get("unknown"):
        return None
    layers = []
    for name in command.get("values") or ():
        found = _values_file(resource.file, str(name), whole)
        if found is None:
            return None
        layers += found
    for index, values in enumerate(command.get("inline") or ()):  # Terraform's inline values
        if isinstance(values, Mapping):
            layers.append(ValuesLayer(resource, (key, "inline", index), values))
    if isinstance(command.get("set"), Mapping) and command["set"]:
        layers.append(ValuesLayer(resource, (key, "set"), command["set"]))
    line = command.get("line")
    chart, version = command.get("chart"), command.get("version")
    if isinstance(chart, str) and (local := _local_chart(resource.file, chart, whole)) is not None:
        chart, version = local.data.get("name"), version or local.data.get("version")
    return new_release(
        resource, (key,), chart, command.get("release"), layers, version=None if version is None else str(version),
        label=f"{command.get('what') or 'helm command'} at {resource.file}:{line}",
    )


def _local_chart(script: str, chart: str, whole: WholeSet) -> Resource | None:
    """The ``Chart.yaml`` of the set's chart folder that ``chart`` names as a path (``./gpu-operator``,
    or a bare name, which Helm reads as a path: a repository's chart is ``repo/chart``), beside the
    script or in a folder above it; None for a repository chart or a folder the set does not hold."""
    if chart.startswith(("oci://", "http://", "https://")) or ("/" in chart and not chart.startswith((".", "/"))):
        return None
    return next((found for path in _beside_or_above(script, chart) if (found := chart_folder_at(path, whole))), None)


def _values_file(script: str, name: str, whole: WholeSet) -> list[ValuesLayer] | None:
    """The values layers of a ``-f`` file: beside the script, else in a folder above it."""
    files: dict[str, Sequence[Resource]] = {}
    for file, resources in whole.by_file.items():
        files.setdefault(posixpath.normpath(posix_path(file)), resources)
    for path in _beside_or_above(script, name):
        if path in files:
            return [ValuesLayer(r, (), r.data) for r in files[path] if r.kind is None]
    return None


def _beside_or_above(script: str, name: str) -> Iterator[str]:
    """Where a path a script names may be, nearest first: beside the script, then in each folder
    above it (scripts are often run from the repository's root)."""
    folder = posixpath.dirname(posix_path(script))
    while True:
        yield posixpath.normpath(posixpath.join(folder, name))
        if not folder or folder == posixpath.dirname(folder):
            return
        folder = posixpath.dirname(folder)
