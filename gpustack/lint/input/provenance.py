"""Provenance: where each part of an object that kustomize builds was written.

An overlay's object is its base object with patches and transformers applied
(``overlays``); a finding on it must point where the user can act: at the patch line that
set (or removed) the field, else at the base. ``Provenance`` copies every input it takes in
(``copy``) and remembers, by the identity of each mapping and list, the input object and the
path there that it came from; a patch that writes or removes one key records it (``wrote``,
``removed``). ``place`` then walks a path of the built object to the input object and path
that wrote it. Containers copied here stay referenced (``kept``) until the build is done, so
no identity is reused.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpustack.lint.model import Path, Resource

Place = tuple[Resource, Path]  # an input object (a base, a patch, a kustomization) and a path in it


class Provenance:
    """The places of the containers and keys of the objects one overlay builds."""

    def __init__(self) -> None:
        self.nodes: dict[int, Place] = {}  # id(container) -> where it was written
        self.keys: dict[tuple[int, str | int], Place] = {}  # (id(container), key) -> where a patch set it
        self.gone: dict[tuple[int, str | int], Place] = {}  # (id(mapping), key) -> where a patch removed it
        self.kept: list[Any] = []

    def copy(self, value: Any, resource: Resource, path: Path) -> Any:
        """A deep copy of plain data ``value`` whose containers remember ``resource`` and ``path``."""
        if isinstance(value, dict):
            made: Any = {key: self.copy(item, resource, (*path, key)) for key, item in value.items()}
        elif isinstance(value, list):
            made = [self.copy(item, resource, (*path, index)) for index, item in enumerate(value)]
        else:
            return value
        self.nodes[id(made)] = (resource, path)
        self.kept.append(made)
        return made

    def rooted(self, data: Any, place: Place) -> None:
        """``data`` (not copied here) was written at ``place``, its parts below it."""
        self.nodes[id(data)] = place
        self.kept.append(data)

    def wrote(self, container: Any, key: str | int, place: Place) -> None:
        """A patch set ``container[key]`` at ``place``."""
        self.keys[(id(container), key)] = place
        self.gone.pop((id(container), key), None)

    def removed(self, container: Any, key: str | int, place: Place) -> None:
        """A patch removed ``container[key]`` at ``place``."""
        self.gone[(id(container), key)] = place
        self.keys.pop((id(container), key), None)

    def place(self, data: Any, path: Path) -> Place:
        """The input object and path where ``path`` of the built object ``data`` was written;
        for a path that does not exist, where a patch removed it, else its nearest ancestor's
        place with the rest of the path (``Resource.locate`` finds the nearest existing key)."""
        node, where = data, self.nodes[id(data)]
        for index, step in enumerate(path):
            present = (
                step in node if isinstance(node, dict) and isinstance(step, str)
                else isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node)
            )
            if not present:
                return self.gone.get((id(node), step)) or (where[0], (*where[1], *path[index:]))
            child = node[step]
            written = self.nodes.get(id(child)) if isinstance(child, (dict, list)) else None
            where = written or self.keys.get((id(node), step)) or (where[0], (*where[1], step))
            node = child
        return where

    def placer(self, data: Any) -> Callable[[Path], Place]:
        return lambda path: self.place(data, path)
