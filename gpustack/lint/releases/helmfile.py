"""Helmfile: each ``releases[]`` entry of a ``helmfile.yaml`` is a release.

https://helmfile.readthedocs.io/en/latest/#configuration: ``chart`` is ``REPO/NAME`` (a
``repositories[]`` entry names the repository) or a path to a chart folder relative to the
helmfile (its ``Chart.yaml`` gives name and version); ``version``, ``name`` (the release) and
``namespace`` as written; ``values`` lists values files (relative to the helmfile) and inline
mappings, lowest precedence first. Files ending in ``.gotmpl`` are templates and not read.
``environments.<env>.values`` are values of the helmfile's own templating, not of any chart:
a file listed only there reaches no chart (``{{ .Values.x }}`` in the helmfile may still pass
parts of it on, which the linter does not follow). A release of a chart folder of the set takes
that folder's ``values.yaml`` first and stands for the folder's own release.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator, Mapping
from typing import Any

from gpustack.lint.model import Resource, nonempty_text, posix_path
from gpustack.lint.releases.helmchart import VALUES_FILE, chart_folder_at
from gpustack.lint.releases.helmvalues import ValuesLayer, mapping
from gpustack.lint.releases.release import HelmChartRelease, WholeSet, new_release, no_object_releases, settled

# helmfile.yaml has neither apiVersion nor kind: read from the whole set, no kind of its own.
KINDS: frozenset[str | None] = frozenset()
HELMFILE_NAMES = ("helmfile.yaml", "helmfile.yml")
_LOCAL = ("./", "../", "/")


def is_helmfile(resource: Resource) -> bool:
    """A helmfile: that file name (or a file of a ``helmfile.d`` folder), no kind, a
    ``releases`` list."""
    if resource.kind is not None or not isinstance(resource.data.get("releases"), list):
        return False
    path = posix_path(resource.file)
    return posixpath.basename(path) in HELMFILE_NAMES or posixpath.basename(posixpath.dirname(path)) == "helmfile.d"


releases_of = no_object_releases
settle = settled


def set_releases(whole: WholeSet) -> Iterator[HelmChartRelease]:
    for resources in whole.by_file.values():
        for resource in resources:
            if is_helmfile(resource):
                yield from _releases(resource, whole)


def _releases(helmfile: Resource, whole: WholeSet) -> Iterator[HelmChartRelease]:
    folder = posixpath.dirname(posix_path(helmfile.file)) or "."
    repositories = {
        nonempty_text(mapping(repo).get("name")): nonempty_text(mapping(repo).get("url"))
        for repo in helmfile.data.get("repositories") or () if isinstance(repo, Mapping)
    }
    for index, entry in enumerate(helmfile.data["releases"]):
        entry = mapping(entry)
        written = nonempty_text(entry.get("chart"))
        if written is None or "{{" in written:
            continue
        chart, version, repo, layers = written, nonempty_text(entry.get("version")), None, []
        if written.startswith(_LOCAL) or written == ".":
            chart_folder = posixpath.normpath(posixpath.join(folder, written))
            local = chart_folder_at(chart_folder, whole)
            if local is None:
                continue
            chart, version = local.data["name"], version or nonempty_text(local.data.get("version"))
            layers = whole.values_files(chart_folder, [VALUES_FILE])  # what the chart folder's release would read
        elif "/" in written and not written.startswith("oci://"):
            repo = repositories.get(written.split("/", 1)[0])
        layers += _values(helmfile, index, entry.get("values"), folder, whole)
        yield new_release(
            helmfile, ("releases", index, "chart"), chart, nonempty_text(entry.get("name")), layers,
            repo=repo, version=version, label=f"helmfile {helmfile.file}, release {entry.get('name') or chart}",
        )


def installed_chart_files(whole: WholeSet) -> set[str]:
    """The ``Chart.yaml`` files of the chart folders the set's helmfiles install: their
    releases stand for those folders' own."""
    found = set()
    for resources in whole.by_file.values():
        for helmfile in (resource for resource in resources if is_helmfile(resource)):
            folder = posixpath.dirname(posix_path(helmfile.file)) or "."
            for entry in helmfile.data["releases"]:
                written = nonempty_text(mapping(entry).get("chart"))
                if written and (written.startswith(_LOCAL) or written == "."):
                    local = chart_folder_at(posixpath.normpath(posixpath.join(folder, written)), whole)
                    if local is not None:
                        found.add(local.file)
    return found


def _values(helmfile: Resource, index: int, values: Any, folder: str, whole: WholeSet) -> Iterator[ValuesLayer]:
    """The release's ``values``, lowest precedence first: files of the set, and inline mappings."""
    for number, item in enumerate(values if isinstance(values, list) else ()):
        if isinstance(item, str) and not item.endswith(".gotmpl") and "{{" not in item:
            yield from whole.values_files(folder, [item])
        elif isinstance(item, Mapping):
            yield ValuesLayer(helmfile, ("releases", index, "values", number), item)
