"""The built-in overlay builder: what ``kustomize build`` makes of a kustomization in the set.

For one kustomization (https://kubectl.docs.kubernetes.io/references/kustomize/kustomization/)
it gathers ``resources`` (and the older ``bases``): files of the set, and folders with a
kustomization of their own, built the same way; then adds each of ``components``
(a ``Component`` kustomization: its resources, then its patches and transformers over
everything gathered so far); then runs the transformers in kustomize's order
(``configureBuiltinTransformers`` in kustomize's api/internal/target): ``patchesStrategicMerge``,
``patches``, ``namespace``, ``namePrefix``/``nameSuffix``, ``commonLabels``/``labels``,
``commonAnnotations``, ``patchesJson6902``, ``replicas``, ``images``.

Only the set's own files are read (what a kustomization names outside it is left out) and
remote resources (URLs) are skipped with a note. Generators (``configMapGenerator``,
``secretGenerator``) and ``helmCharts`` (read by ``releases.kustomize``) make no objects here.
Every built object keeps its base (the input object it was built from) and a ``Provenance``
of its fields.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gpustack.lint.input import transformers
from gpustack.lint.input.patches import apply, patches_of
from gpustack.lint.input.provenance import Provenance
from gpustack.lint.input.setfiles import SetFiles
from gpustack.lint.model import Note, Resource


@dataclass
class Built:
    """One object a build makes: its data (the build's own copy), the input object it was
    built from, and the names it had (a patch may target any of them). ``walked``: the data
    whose provenance places its fields, when that is not its own (``kustomizebin``)."""

    data: dict[str, Any]
    base: Resource
    walked: dict[str, Any] | None = None
    names: set[str] = field(default_factory=set)
    namespaces: set[str | None] = field(default_factory=set)

    def remember(self) -> None:
        metadata = self.data.get("metadata")
        metadata = metadata if isinstance(metadata, dict) else {}
        self.names.add(metadata.get("name"))
        self.namespaces.add(metadata.get("namespace"))


@dataclass
class Build:
    """What building one kustomization made: the objects, the provenance of their fields,
    the files whose patches applied, the input objects gathered, and notes (remote resources
    skipped)."""

    provenance: Provenance = field(default_factory=Provenance)
    objects: list[Built] = field(default_factory=list)
    patch_files: set[str] = field(default_factory=set)
    reached: set[Resource] = field(default_factory=set)  # the input objects it gathered
    notes: list[Note] = field(default_factory=list)


def build(folder: str, files: SetFiles) -> Build:
    """Build the kustomization of ``folder`` (a POSIX path as ``SetFiles`` keys them)."""
    result = Build()
    result.objects = _kustomize(folder, files, result, [], (folder,))
    return result


def _kustomize(folder: str, files: SetFiles, result: Build, gathered: list[Built], seen: tuple[str, ...]) -> list[Built]:
    kustomization = files.kustomizations[folder]
    data = kustomization.data
    objects = list(gathered)
    for key in ("resources", "bases"):
        for entry in _strings(data.get(key)):
            objects += _resource(folder, entry, kustomization, files, result, seen)
    for entry in _strings(data.get("components")):
        target = posixpath.normpath(posixpath.join(folder, entry))
        if target in files.kustomizations and target not in seen:
            objects = _kustomize(target, files, result, objects, (*seen, target))
    _transform(kustomization, folder, objects, files, result)
    return objects


def _resource(folder: str, entry: str, kustomization: Resource, files: SetFiles, result: Build,
              seen: tuple[str, ...]) -> list[Built]:
    if "://" in entry or entry.startswith(("github.com/", "git@")):
        result.notes.append(Note(f"kustomize resource {entry} is remote: built without it", kustomization.file))
        return []
    target = posixpath.normpath(posixpath.join(folder, entry))
    if target in files.kustomizations:
        return [] if target in seen else _kustomize(target, files, result, [], (*seen, target))
    made = []
    for resource in files.objects.get(target, ()):
        result.reached.add(resource)
        built = Built(result.provenance.copy(dict(resource.data), resource, ()), resource)
        built.remember()
        made.append(built)
    return made


def _transform(kustomization: Resource, folder: str, objects: list[Built], files: SetFiles, result: Build) -> None:
    data, provenance = kustomization.data, result.provenance

    def place(*path: str | int) -> tuple[Resource, tuple[str | int, ...]]:
        return kustomization, path

    def patched(key: str) -> None:
        for patch in patches_of(kustomization, key, folder, files):
            objects[:], applied = apply(patch, objects, provenance)
            if applied:  # a patch whose target is outside the set is linted as what it is
                result.patch_files.update(patch.files)

    patched("patchesStrategicMerge")
    patched("patches")
    if isinstance(data.get("namespace"), str) and data["namespace"]:
        transformers.namespace(objects, data["namespace"], place("namespace"), provenance)
    prefix, suffix = data.get("namePrefix"), data.get("nameSuffix")
    if isinstance(prefix, str) or isinstance(suffix, str):
        transformers.affix(objects, prefix if isinstance(prefix, str) else "", suffix if isinstance(suffix, str) else "",
                           place("namePrefix" if isinstance(prefix, str) else "nameSuffix"), provenance)
    if isinstance(data.get("commonLabels"), Mapping):
        transformers.labels(objects, data["commonLabels"], place("commonLabels"), provenance, selectors=True, templates=True)
    for index, entry in enumerate(data.get("labels") or ()):
        if isinstance(entry, Mapping) and isinstance(entry.get("pairs"), Mapping):
            transformers.labels(objects, entry["pairs"], place("labels", index, "pairs"), provenance,
                                selectors=bool(entry.get("includeSelectors")), templates=bool(entry.get("includeTemplates")))
    if isinstance(data.get("commonAnnotations"), Mapping):
        transformers.annotations(objects, data["commonAnnotations"], place("commonAnnotations"), provenance)
    patched("patchesJson6902")
    if isinstance(data.get("replicas"), list):
        transformers.replicas(objects, data["replicas"], place("replicas"), provenance)
    if isinstance(data.get("images"), list):
        transformers.images(objects, data["images"], place("images"), provenance)
    for built in objects:
        built.remember()


def _strings(value: Any) -> list[str]:
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []
