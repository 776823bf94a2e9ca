"""Flux's dependency graph: what ``spec.dependsOn`` names, and whether the set holds the whole tree.

A Flux ``Kustomization`` or ``HelmRelease`` waits until every object its ``spec.dependsOn``
names (an object of its own kind: ``name``, and ``namespace``, by default its own) is Ready
(https://fluxcd.io/flux/components/kustomize/kustomizations/#dependencies,
https://fluxcd.io/flux/components/helm/helmreleases/#dependencies). An object nobody deploys
is never Ready: the dependent never reconciles.

That a dependency is missing from the set says something only where the set holds the whole
Flux tree (``FluxTree.gap`` says why not): an entry Kustomization that deploys a folder beyond
its own or the repository's root (``flux-system``'s ``./clusters/prod``, a ``cluster-apps`` of ``./apps``), every path a
Flux Kustomization of the set names holding files of the set, and every file and folder a
kustomization of the set lists (``resources``, ``bases``, ``components``) present.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from gpustack.lint.input.roots import gitops_paths
from gpustack.lint.model import Path, Resource, nonempty_text, posix_path
from gpustack.lint.releases.deployed import folder_pattern
from gpustack.lint.releases.kustomize import is_kustomization

# The kinds whose dependsOn Flux reads, with their API group.
GROUPS: Mapping[str, str] = {"Kustomization": "kustomize.toolkit.fluxcd.io", "HelmRelease": "helm.toolkit.fluxcd.io"}
_LISTS = ("resources", "bases", "components")
_FILE_SUFFIXES = (".yaml", ".yml", ".json")


def is_flux_dependent(resource: Resource) -> bool:
    """A Flux Kustomization or HelmRelease."""
    return resource.kind in GROUPS and resource.api_group == GROUPS[resource.kind]


@dataclass(frozen=True)
class Dependency:
    """One ``spec.dependsOn`` entry: the object it names and where it is written."""

    dependent: Resource
    path: Path
    kind: str
    name: str
    namespace: str | None  # None: neither the entry nor the dependent says

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace + '/' if self.namespace else ''}{self.name}"


def dependencies(resource: Resource) -> Iterator[Dependency]:
    """The dependsOn entries of a Flux Kustomization or HelmRelease (an entry of another kind,
    where it names one, is passed by)."""
    if not is_flux_dependent(resource):
        return
    entries = resource.get(("spec", "dependsOn"))
    for index, entry in enumerate(entries if isinstance(entries, list) else ()):
        if not isinstance(entry, Mapping) or (name := nonempty_text(entry.get("name"))) is None:
            continue
        if entry.get("kind") not in (None, resource.kind):
            continue
        namespace = nonempty_text(entry.get("namespace")) or resource.ref.namespace
        yield Dependency(resource, ("spec", "dependsOn", index, "name"), resource.kind or "", name, namespace)


class FluxTree:
    """The set's Flux Kustomizations and HelmReleases, and what says the set holds them all."""

    def __init__(self, resources: Sequence[Resource], left_out: Mapping[str, str]) -> None:
        self.resources = resources
        self.deployed = [r for r in resources if is_flux_dependent(r) and r.file not in left_out]
        self._files = {posixpath.normpath(posix_path(r.file)) for r in resources}

    def find(self, dependency: Dependency) -> Resource | None:
        """The deployed object ``dependency`` names (a side without a namespace matches any)."""
        return next(
            (
                r for r in self.deployed
                if r.kind == dependency.kind and r.ref.name == dependency.name
                and (dependency.namespace is None or r.ref.namespace in (None, dependency.namespace))
            ),
            None,
        )

    def of_kind(self, kind: str) -> int:
        return sum(1 for r in self.deployed if r.kind == kind)

    @cached_property
    def entry(self) -> Resource | None:
        """A Flux Kustomization that deploys a folder of the set beyond its own: the tree's entry."""
        for resource in self.deployed:
            home = posixpath.dirname(posixpath.normpath(posix_path(resource.file)))
            for path in gitops_paths(resource):
                if _repository_root(path):
                    return resource
                if any(not _within(folder, home) for folder in self._deployed_folders(path)):
                    return resource
        return None

    @cached_property
    def gap(self) -> str | None:
        """Why the set may not hold the whole Flux tree; None when nothing says so."""
        if self.entry is None:
            return "no Flux Kustomization of the set deploys a folder beyond its own (the tree's entry)"
        for resource in self.deployed:
            for path in gitops_paths(resource):
                if not _repository_root(path) and not self._deployed_folders(path):
                    return f"{resource.ref} deploys {path}, which holds no file of the set"
        for resource in self.resources:
            if not is_kustomization(resource):
                continue
            folder = posixpath.dirname(posix_path(resource.file))
            for listed in _listed(resource.data):
                target = posixpath.normpath(posixpath.join(folder, listed))
                if target not in self._files and target not in self._folders:
                    return f"{resource.file} lists {listed}, which is not in the set"
        return None

    def _deployed_folders(self, path: str) -> list[str]:
        """The folders of the set a Flux path names (the repository's root is not known here:
        a folder whose path ends with it); by the last folder name first, a pattern only for
        the candidates (``${VARS}`` match any one folder name)."""
        pattern = folder_pattern(path)
        last = posixpath.basename(posixpath.normpath(path.strip()))
        candidates = self._folders if "$" in last else self._by_name.get(last, ())
        return [folder for folder in candidates if pattern.search(folder)]

    @cached_property
    def _by_name(self) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for folder in self._folders:
            found.setdefault(posixpath.basename(folder), []).append(folder)
        return found

    @cached_property
    def _folders(self) -> set[str]:
        """Every folder that holds a file of the set."""
        found: set[str] = set()
        for file in self._files:
            folder = posixpath.dirname(file)
            while folder and folder not in found and folder not in ("/", "."):
                found.add(folder)
                folder = posixpath.dirname(folder)
        return found


def _listed(data: Mapping[str, Any]) -> Iterator[str]:
    """The local files and folders a kustomization lists (URLs and remote bases are passed by)."""
    for key in _LISTS:
        items = data.get(key)
        for item in items if isinstance(items, list) else ():
            if isinstance(item, str) and "://" not in item and not item.startswith(("github.com/", "git@")):
                if "?" not in item and (item.endswith(_FILE_SUFFIXES) or "." not in posixpath.basename(item)):
                    yield item


def _repository_root(path: str) -> bool:
    """A Flux path of the repository's root (``./``): it deploys every folder."""
    return posixpath.normpath(path.strip().lstrip("/")) in (".", "")


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")
