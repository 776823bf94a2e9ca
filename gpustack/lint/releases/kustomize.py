"""kustomize: ``helmCharts`` of a ``kustomization.yaml``, and the files a kustomization leaves out.

Each ``helmCharts`` item is a release (``valuesInline`` over its ``valuesFile``, a file beside
the kustomization). A kustomization applies only the files it names: ``left_out_by_kustomization``
tells the rules which files of its folder are never deployed, and ``deployed_only`` keeps
findings on them out of the report (a note per file says so instead).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from gpustack.lint.model import Finding, Note, Resource, nonempty_text
from gpustack.lint.releases.helmvalues import ValuesLayer, mapping
from gpustack.lint.releases.release import HelmChartRelease, WholeSet, new_release, with_layers

if TYPE_CHECKING:
    from gpustack.lint.context import LintContext

# None: a kustomization.yaml without apiVersion and kind.
KINDS = frozenset({"Kustomization", None})
KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
T = TypeVar("T")


def posix_path(file: str) -> str:
    """A linted file's name with forward slashes (Windows paths included), for posixpath."""
    return file.replace("\\", "/")


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


def left_out_by_kustomization(ctx: LintContext) -> frozenset[str]:
    """Files that a ``kustomization.yaml`` beside them does not name: kustomize (and Flux,
    which uses the folder's kustomization when there is one) applies only what it lists, so
    a release or DaemonSet kept in such a file (``resources: []``, entries commented out) is
    not deployed. A file counts as named when any string of the kustomization is its name
    (``resources``, ``patches``, generators alike), so nothing named is ever left out."""
    return ctx.memo(("left-out-by-kustomization",), lambda: _left_out(ctx.resources))


def deployed_only(ctx: LintContext, found: list[tuple[T, Finding]]) -> tuple[list[tuple[T, Finding]], list[Note]]:
    """``found`` without the findings on files that nothing deploys (``left_out_by_kustomization``:
    a backup copy, an entry commented out), and one note per such file: judging a file nothing
    applies as live reports pitfalls the cluster never has."""
    left_out = left_out_by_kustomization(ctx)
    skipped = dict.fromkeys(finding.file for _, finding in found if finding.file in left_out)
    notes = [
        Note("not linted as deployed: the kustomization.yaml beside it does not list it (list it there if it is meant"
             " to be applied)", file)
        for file in skipped
    ]
    return [item for item in found if item[1].file not in left_out], notes


def _left_out(resources: Iterable[Resource]) -> frozenset[str]:
    named: dict[str, set[str]] = {}
    for resource in resources:
        folder, name = posixpath.split(posix_path(resource.file))
        # kustomize reads a folder's kustomization under these names only: a Kustomization
        # object in a file of another name (a flattened copy) governs no folder.
        if name in KUSTOMIZATION_FILES and is_kustomization(resource):
            named.setdefault(folder, {name}).update(posixpath.normpath(text) for text in _strings(resource.data))
    if not named:
        return frozenset()
    left_out = set()
    for file in {resource.file for resource in resources}:
        folder, name = posixpath.split(posix_path(file))
        if folder in named and name not in named[folder]:
            left_out.add(file)
    return frozenset(left_out)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
