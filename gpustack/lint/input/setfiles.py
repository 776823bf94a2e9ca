"""The set's files as a kustomize build reads them: kustomizations by folder, objects by
file, and every document of a file (a JSON 6902 patch file holds a list of operations, which
the loader does not make an object of), all by POSIX path."""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from gpustack.lint.input.parse import text_entry
from gpustack.lint.input.positions import Positions, Source
from gpustack.lint.model import Resource, copied, posix_path
from gpustack.lint.releases.kustomize import KUSTOMIZATION_FILES, is_kustomization

COMPONENT_GROUP = "kustomize.config.k8s.io/"


def is_component(resource: Resource) -> bool:
    """A kustomize ``Component`` (https://kubectl.docs.kubernetes.io/guides/config_management/components/)."""
    return resource.kind == "Component" and (resource.api_version or "").startswith(COMPONENT_GROUP)


@dataclass
class SetFiles:
    kustomizations: dict[str, Resource] = field(default_factory=dict)  # folder -> its kustomization
    objects: dict[str, list[Resource]] = field(default_factory=dict)  # file -> its objects
    names: dict[str, str] = field(default_factory=dict)  # file -> the file as the input names it
    texts: Mapping[str, str] = field(default_factory=dict)  # the input's texts, by the input's names
    _documents: dict[str, list[Resource]] = field(default_factory=dict)

    @classmethod
    def of(cls, resources: Iterable[Resource], texts: Mapping[str, str]) -> SetFiles:
        files = cls(texts=texts)
        for name in texts:
            files.names.setdefault(posixpath.normpath(posix_path(name)), name)
        for resource in resources:
            path = posixpath.normpath(posix_path(resource.file))
            files.names.setdefault(path, resource.file)
            folder, name = posixpath.split(path)
            if name in KUSTOMIZATION_FILES and (is_kustomization(resource) or is_component(resource)):
                files.kustomizations.setdefault(folder, resource)
            elif resource.kind is not None:
                files.objects.setdefault(path, []).append(resource)
        return files

    def documents(self, path: str) -> list[Resource]:
        """Every document of the file at ``path`` (lists included), positioned; [] when the
        set lacks it."""
        if path not in self._documents:
            name = self.names.get(path, path)
            text = self.texts.get(name)
            self._documents[path] = [] if text is None else _documents(name, text)
        return self._documents[path]


def _documents(name: str, text: str) -> list[Resource]:
    kind, items = text_entry(text)
    if kind == "errors":
        return []
    source = Source(name, text)
    found = []
    for index, data, _line, _column, comment, root, containers, wheres, _problems in items:
        if data is None:
            continue
        positions = copied(Positions, {"source": source, "document": index, "data": data, "root": root,
                                       "containers": containers, "wheres": wheres})
        found.append(source.resource(index, comment, data, (), positions))
    return found

