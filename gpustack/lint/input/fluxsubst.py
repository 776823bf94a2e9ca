"""Flux post-build variable substitution: objects as a Flux Kustomization applies them.

A Flux ``Kustomization`` with ``spec.postBuild`` replaces ``${var}``, ``${var:=default}`` and
``${var:-default}`` in the objects it builds before applying them
(https://fluxcd.io/flux/components/kustomize/kustomizations/#post-build-variable-substitution):
from ``postBuild.substitute``, over the ConfigMaps and Secrets of ``postBuild.substituteFrom``
(a later one over an earlier one), else the default. It writes the result into the object's
YAML, so ``replicas: ${count:=4}`` becomes the number 4. ``$${var}`` is a literal ``${var}``,
and an object labelled or annotated ``kustomize.toolkit.fluxcd.io/substitute: disabled`` is
applied as written.

Here an object belongs to the Flux Kustomization whose ``spec.path`` is the deepest folder
above it. A variable is known when ``substitute`` or a ConfigMap of the set (in the
Kustomization's namespace) gives it, or when nothing could (its default then applies); a
Secret's values and a ConfigMap the set lacks are unknown, so a variable they may give stays
as written, and so does every value holding one: no rule reads it as a number or a name. An
object changed is linted as substituted in place of itself, at its own positions
(``Overlaid``: built objects replace their input objects).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from gpustack.lint.input.overlaid import Overlaid
from gpustack.lint.input.roots import gitops_paths
from gpustack.lint.input.yaml11 import MERGE, plain
from gpustack.lint.model import Resource, copied, nonempty_text, posix_path
from gpustack.lint.releases.deployed import folder_pattern

FLUX_GROUP = "kustomize.toolkit.fluxcd.io"
DISABLE_KEY = "kustomize.toolkit.fluxcd.io/substitute"
# ``$${var}`` (escaped), or ``${name}``, ``${name:=default}``, ``${name:-default}``; other
# operators (``${var:1}``, ``${var/a/b}``) are not read: their value stays unknown.
_VARIABLE = re.compile(r"\$\$\{[^}]*\}|\$\{([_a-zA-Z][_a-zA-Z0-9]*)(?:(:[=-])([^}]*))?\}|\$\{[^}]*\}")
_UNKNOWN = object()
_SPECIAL = re.compile(r"^[\[{'\"!&*|>%@`#]|: | #")  # a result that YAML would not read as one plain scalar


@dataclass(frozen=True)
class Variables:
    """What a Flux Kustomization's postBuild gives: its ``substitute`` values, and its
    ``substituteFrom`` sources in order, each a mapping (a ConfigMap of the set) or None (its
    values unknown)."""

    substitute: Mapping[str, str]
    sources: tuple[Mapping[str, Any] | None, ...]

    def value(self, name: str, default: str | None) -> Any:
        """The variable's value, its default when nothing gives it, else ``_UNKNOWN``."""
        if name in self.substitute:
            return str(self.substitute[name])
        for source in reversed(self.sources):
            if source is None:
                return _UNKNOWN
            if name in source:
                return str(source[name])
        return default if default is not None else _UNKNOWN


def substituted(overlay: Overlaid, texts: Mapping[str, str]) -> Overlaid:
    """``overlay`` with the objects that a Flux Kustomization's postBuild changes substituted
    (``texts``: the files' texts, to pass over the objects of files that hold no ``${``)."""
    owners = [r for r in overlay.resources if r.kind == "Kustomization" and r.api_group == FLUX_GROUP]
    if not any(isinstance(r.get(("spec", "postBuild")), Mapping) for r in owners):
        return overlay  # the common case: nothing to substitute
    variables_of = _VariablesOf(overlay.resources, owners)
    built = {id(r) for r in overlay.built}  # an overlay may have written a ``${`` from another file
    changed: dict[int, Resource] = {}
    for resource in overlay.resources:
        if resource.kind is None or (id(resource) not in built and "${" not in texts.get(resource.file, "${")):
            continue
        variables = variables_of(resource)
        if variables is None or _disabled(resource):
            continue
        data = _substitute(resource.data, variables)
        if data is not resource.data:
            changed[id(resource)] = _copy(resource, data)
    if not changed:
        return overlay
    resources = tuple(changed.get(id(r), r) for r in overlay.resources)
    return replace(
        overlay,
        resources=resources,
        built=tuple(changed.get(id(r), r) for r in overlay.built)
        + tuple(changed[key] for key in changed if key not in built),
        replaced=overlay.replaced | {r for r in overlay.resources if id(r) in changed and id(r) not in built},
    )


class _VariablesOf:
    """For an object, the Variables of the Flux Kustomization that applies it, if it has a postBuild."""

    def __init__(self, resources: Sequence[Resource], owners: list[Resource]) -> None:
        self._config_maps: dict[tuple[str | None, str], Mapping[str, Any]] = {}
        for resource in resources:
            data = resource.get(("data",))
            if resource.kind == "ConfigMap" and resource.ref.name and isinstance(data, Mapping):
                self._config_maps[(resource.ref.namespace, resource.ref.name)] = data
        self._paths = [(folder_pattern(path), owner) for owner in owners for path in gitops_paths(owner)]
        self._memo: dict[str, Variables | None] = {}
        self._owners: dict[str, Resource | None] = {}

    def __call__(self, resource: Resource) -> Variables | None:
        folder = posixpath.dirname(posixpath.normpath(posix_path(resource.file)))
        if folder not in self._memo:
            owner = self._owner(folder)
            self._memo[folder] = self._variables(owner) if owner is not None else None
        return self._memo[folder]

    def _owner(self, folder: str) -> Resource | None:
        """The Flux Kustomization whose path is the deepest folder at or above ``folder``
        (memoised per folder: the files of a tree share their ancestors)."""
        if folder in self._owners:
            return self._owners[folder]
        if not folder or folder in ("/", "."):
            return None
        matching = next((owner for pattern, owner in self._paths if pattern.search(folder)), None)
        found = matching if matching is not None else self._owner(posixpath.dirname(folder))
        self._owners[folder] = found
        return found

    def _variables(self, owner: Resource) -> Variables | None:
        post_build = owner.get(("spec", "postBuild"))
        if not isinstance(post_build, Mapping):
            return None
        substitute = post_build.get("substitute")
        sources: list[Mapping[str, Any] | None] = []
        listed = post_build.get("substituteFrom")
        for entry in listed if isinstance(listed, list) else ():
            entry = entry if isinstance(entry, Mapping) else {}
            name = nonempty_text(entry.get("name"))
            found = self._config_map(owner.ref.namespace, name) if entry.get("kind") == "ConfigMap" and name else None
            sources.append(found)
        return Variables(substitute if isinstance(substitute, Mapping) else {}, tuple(sources))

    def _config_map(self, namespace: str | None, name: str) -> Mapping[str, Any] | None:
        """The ConfigMap in the Kustomization's namespace; one side without a namespace (kustomize
        may set it later) matches the one ConfigMap of that name."""
        found = self._config_maps.get((namespace, name))
        if found is None:
            named = [data for (where, key), data in self._config_maps.items() if key == name and None in (where, namespace)]
            found = named[0] if len(named) == 1 else None
        return found


def _disabled(resource: Resource) -> bool:
    metadata = resource.get(("metadata",))
    metadata = metadata if isinstance(metadata, Mapping) else {}
    return any(
        isinstance(marks, Mapping) and marks.get(DISABLE_KEY) == "disabled"
        for marks in (metadata.get("labels"), metadata.get("annotations"))
    )


def _substitute(value: Any, variables: Variables) -> Any:
    """``value`` with its strings substituted; the same object where nothing changed."""
    if isinstance(value, str):
        return _string(value, variables) if "${" in value else value
    if isinstance(value, Mapping):
        items = {key: _substitute(item, variables) for key, item in value.items()}
        return items if any(items[key] is not value[key] for key in value) else value
    if isinstance(value, list):
        listed = [_substitute(item, variables) for item in value]
        return listed if any(new is not old for new, old in zip(listed, value, strict=True)) else value
    return value


def _string(text: str, variables: Variables) -> Any:
    """One substituted string, read back as the plain scalar Flux's YAML holds; ``text`` itself
    when a variable in it is unknown."""
    unknown = False

    def one(match: re.Match[str]) -> str:
        nonlocal unknown
        whole = match.group(0)
        if whole.startswith("$$"):
            return whole[1:]
        name, default = match.group(1), match.group(3)
        value = variables.value(name, default) if name else _UNKNOWN
        if value == "" and default is not None:  # ``:=`` and ``:-`` take the default for an empty value too
            value = default
        if value is _UNKNOWN:
            unknown = True
            return whole
        return str(value)

    result = _VARIABLE.sub(one, text)
    if unknown or result == text:
        return text
    read = plain(result) if not _SPECIAL.search(result) else result
    return result if read is MERGE else read


def _copy(resource: Resource, data: Any) -> Resource:
    """``resource`` with substituted ``data``, at the same positions."""
    fields: dict[str, Any] = {
        name: getattr(resource, name)
        for name in ("file", "locator", "document", "source_comment", "document_path", "origin", "written")
    }
    return copied(Resource, {**fields, "data": data})

