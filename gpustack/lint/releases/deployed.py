"""Which files of the set nothing deploys, by the set's own evidence.

kustomize applies only what a ``kustomization.yaml`` names: the files it lists, and the
folders it lists (each built the same way). Flux's kustomize-controller and Argo CD apply the
folder a ``Kustomization`` (``spec.path``) or an ``Application`` (``source.path``) points at,
through that folder's kustomization when it has one
(https://fluxcd.io/flux/components/kustomize/kustomizations/#path). So a file is not deployed
when, walking up from it, a folder's kustomization does not name it (nor a folder holding it)
before a GitOps object that is itself deployed points at a folder on the way. That covers a
backup copy beside the live file, an app whose ``ks.yaml`` line is commented out of its
parent, and everything that app's Flux Kustomization would have deployed.

Only evidence counts: a file with no kustomization above it, one in a folder where a
kustomization names a file the input lacks (a ``ks.yaml`` not given, or empty), or one under a
folder that a path names in a form that cannot be told (``${VARS}`` are matched as any one
folder name), is taken as deployed. ``lower_not_deployed`` lowers findings on files nothing deploys to
info, with a note per file.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import replace
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from gpustack.lint.facts.containerdconfig import is_config_file as is_containerd_config
from gpustack.lint.facts.hostscripts import is_host_script
from gpustack.lint.input.roots import gitops_paths
from gpustack.lint.model import Finding, Note, Resource, Severity, posix_path
from gpustack.lint.releases.kustomize import KUSTOMIZATION_FILES, is_kustomization

if TYPE_CHECKING:
    from gpustack.lint.context import LintContext

T = TypeVar("T")
_VARIABLE = re.compile(r"\\\$\\\{[^}]*\\\}")  # an escaped ${VAR} in a path pattern


def left_out(ctx: LintContext) -> Mapping[str, str]:
    """The files of the set that nothing deploys, each with the kustomization that leaves it
    out (computed once per context)."""
    return ctx.memo(("not-deployed",), lambda: _Deployment(ctx.resources).left_out())


def lower_not_deployed(ctx: LintContext, found: list[tuple[T, Finding]]) -> tuple[list[tuple[T, Finding]], list[Note]]:
    """``found`` with the findings on files nothing deploys lowered to info, and one note per
    such file: the cluster does not have those pitfalls, but the file is there to be applied
    (by hand, from a ``manual/`` folder, or once listed), and then it would."""
    skipped = left_out(ctx)
    files = sorted({finding.file for _, finding in found if finding.file in skipped})
    notes = [
        Note(
            f"not linted as deployed: {skipped[file]} does not list it (nor a folder holding it), and no deployed"
            " Flux Kustomization or Argo CD Application points at its folder, so its findings are info (list it"
            " there if it is meant to be applied)",
            file,
        )
        for file in files
    ]
    return [(hit, _as_not_deployed(finding, skipped)) for hit, finding in found], notes


def _as_not_deployed(finding: Finding, skipped: Mapping[str, str]) -> Finding:
    """The finding as info when its file is not deployed (no autofix: the file may be a copy
    kept on purpose)."""
    if finding.file not in skipped:
        return finding
    return replace(
        finding,
        severity=Severity.INFO,
        message=f"{finding.message} (the file is not deployed: {skipped[finding.file]} does not list it)",
        fixable=False,
        edits=(),
    )


class _Deployment:
    """The set's kustomizations and GitOps paths, and the walk that tells a file's fate."""

    def __init__(self, resources: Iterable[Resource]) -> None:
        self.named: dict[str, set[str]] = {}  # folder -> the paths its kustomization names
        self.kustomizations: dict[str, str] = {}  # folder -> its kustomization file, as the input names it
        self.files: dict[str, str] = {}  # posix path -> the file as the input names it
        self.pointers: list[tuple[str, re.Pattern[str]]] = []  # (file of the object, folder pattern)
        for resource in resources:
            if is_containerd_config(resource) or is_host_script(resource):
                continue  # a node's file: no kustomization applies it, none leaves it out
            file = posix_path(resource.file)
            self.files.setdefault(file, resource.file)
            folder, name = posixpath.split(file)
            if name in KUSTOMIZATION_FILES and is_kustomization(resource):
                self.kustomizations.setdefault(folder, resource.file)
                named = self.named.setdefault(folder, set())
                named.update(posixpath.normpath(posixpath.join(folder, text)) for text in _paths(resource.data))
            for path in gitops_paths(resource):
                self.pointers.append((file, folder_pattern(path)))
        self._verdicts: dict[str, str | None] = {}

    def left_out(self) -> dict[str, str]:
        if not self.named:
            return {}
        found = {file: self.excluder(file) for file in self.files}
        return {self.files[file]: self.kustomizations[folder] for file, folder in found.items() if folder is not None}

    def excluder(self, file: str) -> str | None:
        """The folder whose kustomization leaves ``file`` out; None: deployed, or no evidence."""
        if file not in self._verdicts:
            self._verdicts[file] = None  # a cycle of GitOps objects: no evidence either way
            self._verdicts[file] = self._walk(file)
        return self._verdicts[file]

    def _walk(self, file: str) -> str | None:
        # A kustomization file stands for its folder: kustomize builds the folder through it.
        subject = posixpath.dirname(file) if posixpath.basename(file) in KUSTOMIZATION_FILES else file
        path = file
        while True:
            folder = posixpath.dirname(path)
            if folder == path:
                return None  # reached the top: nothing says it is not deployed
            names = self.named.get(folder) if folder != subject else None
            if names is not None and not _names(names, subject) and not self._unseen_on_the_way(folder, subject):
                return folder
            if self._pointed_at(folder):
                return None
            path = folder

    def _unseen_on_the_way(self, folder: str, subject: str) -> bool:
        """Whether the kustomization of ``folder`` names a file that is not in the set (or holds
        nothing) in a subfolder holding ``subject``: a ``ks.yaml`` left out of the input may
        deploy it."""
        return any(
            (home := posixpath.dirname(target)) != folder and subject.startswith(home + "/") and target not in self.files
            for target in self.named[folder]
        )

    def _pointed_at(self, folder: str) -> bool:
        return any(pattern.search(folder) and self.excluder(source) is None for source, pattern in self.pointers)


def folder_pattern(path: str) -> re.Pattern[str]:
    """A repository path as a pattern for the end of a linted folder's path (the repository's
    own root is not known here): ``./apps/x/app`` matches ``…/apps/x/app``."""
    relative = posixpath.normpath(path.strip().lstrip("/")).removeprefix("./")
    if relative in ("", "."):
        return re.compile(r"(?!)")  # the repository's root: every folder's ancestor, no evidence
    return re.compile(r"(?:^|/)" + _VARIABLE.sub("[^/]+", re.escape(relative)) + "$")


def _names(named: set[str], path: str) -> bool:
    """Whether a kustomization names ``path`` or a folder holding it."""
    return any(path == target or path.startswith(target + "/") for target in named)


def _paths(value: Any) -> Iterator[str]:
    """Every string of a kustomization, and the file of a generator's ``key=file`` entry."""
    if isinstance(value, str):
        yield value
        if "=" in value:
            yield value.split("=", 1)[1]
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _paths(item)
    elif isinstance(value, list):
        for item in value:
            yield from _paths(item)
