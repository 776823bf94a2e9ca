"""Roots: the parts of the input that are linted apart, each as a whole set.

Rules that judge the whole set (GS014 "no Prometheus selects this rule", GS015 "no XID
alert anywhere", GS009 "two device plugins") and the cross-object indexes other rules read
(chart releases, node pools, pinned workloads) must never mix two repositories, or two
clusters of one repository: one repository's kube-prometheus-stack would silence another's
GS014, one XID alert would satisfy GS015 for all. So the run is split into roots and every
rule runs over each root's objects alone:

- each git repository that holds linted files (the nearest folder above a file with a
  ``.git`` folder or file: a clone, a worktree, a submodule);
- each folder named with ``--set-root`` or in the config's ``roots:``;
- each folder holding lint settings (``.gpustack.yaml``) of its own, other than the run's
  config: a stack ``gpustack render`` wrote (it writes one into every output folder), so that
  ``gpustack lint out/`` over several rendered stacks never pairs one stack's device plugin
  with another's (``stacks``; the report's note names them).

A file belongs to the deepest root folder that holds it; the files in none form the top root.
Within a root, each cluster its Flux Kustomizations and Argo CD Applications deploy is linted
apart when there are two or more (``clusters``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace

from gpustack.lint.model import Note, Resource

GIT = ".git"


@dataclass(frozen=True)
class Root:
    """A part of the input linted as a whole set: the resources of ``folder`` (None: the
    top root, the files in no root folder). ``entry``: the folder of the GitOps objects that
    deploy the rest (``clusters``), when the root has one; the report names the root by it."""

    folder: str | None
    resources: tuple[Resource, ...]
    entry: str | None = None

    @property
    def label(self) -> str | None:
        """The entry (else the folder) as the report shows it: relative to the working folder
        when inside it."""
        shown = self.entry or self.folder
        if shown is None:
            return None
        relative = os.path.relpath(shown)
        return shown if relative == ".." or relative.startswith(".." + os.sep) else relative


def repositories(files: Iterable[str]) -> tuple[str, ...]:
    """The git repositories (absolute folders) that hold ``files``: for each, the nearest
    folder at or above its own that holds ``.git``."""
    return _holding(files, GIT)


def repository_of(folder: str) -> str | None:
    """The git repository (absolute folder) that holds ``folder``, if any."""
    return _nearest(os.path.abspath(folder), GIT, {})


def stacks(files: Iterable[str], settings: str, config: str | None) -> tuple[str, ...]:
    """The folders (absolute) that hold ``files`` and a settings file (``settings``: the
    config's name, policy/config.py) of their own, other than the folder of the run's
    ``config``: separate stacks."""
    own = os.path.dirname(os.path.abspath(config)) if config else None
    return tuple(folder for folder in _holding(files, settings) if folder != own)


def stacks_note(folders: Sequence[str], settings: str) -> list[Note]:
    """What the report says when separate stacks were linted apart."""
    if not folders:
        return []
    named = ", ".join(Root(folder, ()).label or folder for folder in folders)
    return [
        Note(
            f"linted apart, each as a stack of its own (each holds its own {settings}, whose settings apply "
            f"when it is linted alone): {named}"
        )
    ]


def _holding(files: Iterable[str], marker: str) -> tuple[str, ...]:
    """For each of ``files``, the nearest folder at or above its own that holds ``marker``."""
    nearest: dict[str, str | None] = {}
    for file in files:
        _nearest(os.path.dirname(os.path.abspath(file)), marker, nearest)
    return tuple(sorted({folder for folder in nearest.values() if folder is not None}))


def _nearest(folder: str, marker: str, nearest: dict[str, str | None]) -> str | None:
    """The nearest folder at or above ``folder`` that holds ``marker`` (memoised per folder,
    and for every folder passed on the way up: the files of a tree share their ancestors)."""
    passed: list[str] = []
    found: str | None = None
    while True:
        if folder in nearest:
            found = nearest[folder]
            break
        passed.append(folder)
        if os.path.exists(os.path.join(folder, marker)):
            found = folder
            break
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    for seen in passed:
        nearest[seen] = found
    return found


def split(resources: Sequence[Resource], folders: Iterable[str]) -> list[Root]:
    """The roots of ``resources``: each resource in the deepest of ``folders`` holding its
    file (the rest in the top root), each of those split into its clusters (``clusters``).
    One root (the common case) keeps the input as it is."""
    absolute = {os.path.abspath(folder) for folder in folders}
    members: dict[str | None, list[Resource]] = {}
    if absolute:
        owner: dict[str, str | None] = {}  # file -> its root folder
        for resource in resources:
            file = resource.file
            if file not in owner:
                owner[file] = _deepest(os.path.abspath(file), absolute)
            members.setdefault(owner[file], []).append(resource)
    else:
        members[None] = list(resources)
    roots = []
    for folder in sorted(members, key=lambda f: f or ""):
        found = tuple(resources) if len(members) == 1 else tuple(members[folder])
        roots += clusters(Root(folder, found))
    return roots


def clusters(root: Root) -> list[Root]:
    """``root`` split into the clusters its GitOps objects deploy, when it holds two or more.

    A Flux ``Kustomization`` (``spec.path``) or an Argo CD ``Application`` (``spec.source.path``,
    ``spec.sources[].path``) whose path lies outside its own folder deploys that path from
    where it sits: the folder holding such objects is a cluster's entry (``clusters/prod``),
    unless another entry's paths hold it. Paths are the repository's (the root's folder; the
    working folder for the top root), and count only when they hold linted files. A cluster is
    its entry folder and the paths its objects name, with the paths named by objects inside
    those in turn. A file in the paths of several clusters (an ``infrastructure/`` each
    deploys) is linted with each of them; a file in none of them (``talos/``, a kustomize base
    the paths reach through ``resources``) with every one. A path inside its object's own
    folder (``apps/x/ks.yaml`` deploying ``apps/x/app``) deploys what sits beside it: it
    splits nothing, so the usual one-cluster repository stays one set, named by its one entry."""
    base = root.folder or os.getcwd()
    pointers = [
        (home, target)
        for resource in root.resources
        if (paths := gitops_paths(resource))
        for home in (os.path.dirname(os.path.abspath(resource.file)),)
        for path in paths
        if not _within(target := os.path.normpath(os.path.join(base, path.lstrip("/"))), {home})
    ]
    if not pointers:
        return [root]
    files = {resource.file: os.path.abspath(resource.file) for resource in root.resources}
    held = {folder for path in files.values() for folder in _ancestors(path, base)}
    pointers = [(home, target) for home, target in pointers if target in held]
    homes = sorted({home for home, _ in pointers})
    reach = {home: _closure(home, pointers) for home in homes}
    entries = [home for home in homes if not any(other != home and _within(home, reach[other]) for other in homes)]
    if len(entries) < 2:
        return [replace(root, entry=entries[0] if entries else None)]
    members: dict[str, list[Resource]] = {entry: [] for entry in entries}
    for resource in root.resources:
        path = files[resource.file]
        for entry in [entry for entry in entries if _within(path, reach[entry])] or entries:
            members[entry].append(resource)
    return [Root(entry, tuple(members[entry]), entry) for entry in entries]


def gitops_paths(resource: Resource) -> list[str]:
    """The repository paths a Flux Kustomization or an Argo CD Application deploys."""
    if resource.kind not in ("Kustomization", "Application"):  # before ``ref``: most objects are neither
        return []
    group = resource.api_group
    if resource.kind == "Kustomization" and group == "kustomize.toolkit.fluxcd.io":
        sources = [resource.get(("spec",))]
    elif resource.kind == "Application" and group == "argoproj.io":
        listed = resource.get(("spec", "sources"))
        sources = [resource.get(("spec", "source")), *(listed if isinstance(listed, list) else ())]
    else:
        return []
    return [source["path"] for source in sources if isinstance(source, dict) and isinstance(source.get("path"), str)]


def _closure(home: str, pointers: list[tuple[str, str]]) -> set[str]:
    """The folders a cluster entry deploys: its own, its objects' paths, and theirs in turn."""
    reached = {home}
    grown = True
    while grown:
        grown = False
        for where, target in pointers:
            if target not in reached and _within(where, reached):
                reached.add(target)
                grown = True
    return reached


def _within(path: str, folders: set[str]) -> bool:
    """Whether ``path`` is one of ``folders`` or lies below one."""
    return any(path == folder or path.startswith(folder.rstrip(os.sep) + os.sep) for folder in folders)


def _ancestors(path: str, base: str) -> Iterator[str]:
    """The folders above ``path`` up to ``base``."""
    folder = os.path.dirname(path)
    while folder != base and _within(folder, {base}):
        yield folder
        folder = os.path.dirname(folder)
    yield base


def _deepest(path: str, folders: set[str]) -> str | None:
    folder = os.path.dirname(path)
    while True:
        if folder in folders:
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent
