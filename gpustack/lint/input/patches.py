"""A kustomization's patches: read (``patches``, ``patchesStrategicMerge``, ``patchesJson6902``;
inline or from a file of the set), matched to their targets, and applied to built objects.

https://kubectl.docs.kubernetes.io/references/kustomize/kustomization/patches/: a ``patches``
item holds a ``patch`` (inline) or a ``path``, and an optional ``target`` selector (group,
version, kind, name and namespace as anchored regular expressions, ``labelSelector``,
``annotationSelector``). A patch that is a list of operations is a JSON 6902 patch
(RFC 6902, applied with the ``jsonpatch`` package), anything else a strategic merge patch
(``smpatch``); a strategic merge patch without a target applies to the object of its own kind,
name and namespace.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gpustack.lint.input.parse import text_entry
from gpustack.lint.input.provenance import Place, Provenance
from gpustack.lint.input.setfiles import SetFiles
from gpustack.lint.input.smpatch import merged
from gpustack.lint.model import Resource

if TYPE_CHECKING:
    from gpustack.lint.input.overlays import Built


@dataclass(frozen=True)
class Patch:
    """One patch item: its documents (data and where each is written), its target selector
    (None: by the strategic merge patch's own identity) and the files it was read from."""

    documents: tuple[tuple[Any, Place], ...]
    target: Mapping[str, Any] | None
    files: tuple[str, ...]


def patches_of(kustomization: Resource, key: str, folder: str, files: SetFiles) -> Iterator[Patch]:
    entries = kustomization.data.get(key)
    for index, entry in enumerate(entries if isinstance(entries, list) else ()):
        if isinstance(entry, str):  # patchesStrategicMerge: a file, or the patch itself
            if "\n" in entry or ":" in entry:
                yield Patch(_inline(entry, (kustomization, (key, index))), None, ())
            else:
                yield _from_file(folder, entry, None, files)
        elif isinstance(entry, Mapping):
            target = entry.get("target") if isinstance(entry.get("target"), Mapping) else None
            if isinstance(entry.get("patch"), str):
                yield Patch(_inline(entry["patch"], (kustomization, (key, index, "patch"))), target, ())
            elif isinstance(entry.get("path"), str):
                yield _from_file(folder, entry["path"], target, files)


def _inline(text: str, place: Place) -> tuple[tuple[Any, Place], ...]:
    """The documents of a patch written in the kustomization (positions: the string's)."""
    kind, items = text_entry(text)
    if kind == "errors":
        return ()
    documents = [item[1] for item in items if item[1] is not None]
    if len(documents) == 1:
        return ((documents[0], place),)
    return tuple((document, (place[0], (*place[1], number))) for number, document in enumerate(documents))


def _from_file(folder: str, path: str, target: Mapping[str, Any] | None, files: SetFiles) -> Patch:
    wanted = posixpath.normpath(posixpath.join(folder, path))
    documents = files.documents(wanted)
    return Patch(tuple((document.data, (document, ())) for document in documents), target,
                 (documents[0].file,) if documents else ())


def apply(patch: Patch, objects: list[Built], provenance: Provenance) -> tuple[list[Built], bool]:
    """``objects`` with ``patch`` applied (a strategic merge patch may delete one), and
    whether it applied to any (its target may be outside the set)."""
    applied = False
    for data, place in patch.documents:
        if isinstance(data, list):
            chosen = _selected(objects, patch.target) if patch.target else []
            for built in chosen:
                json6902(built.data, data, place, provenance)
        elif isinstance(data, dict):
            chosen = _selected(objects, patch.target) if patch.target else _same_object(objects, data)
            if patch.target:  # the target's identity stands, not the one the patch was written with
                data = {**data, "metadata": _unnamed(data.get("metadata"))}
            deleted = [built for built in chosen if not merged(provenance, built, data, place)]
            objects = [built for built in objects if built not in deleted]
        else:
            chosen = []
        applied = applied or bool(chosen)
    return objects, applied


def json6902(data: dict[str, Any], operations: list[Any], place: Place, provenance: Provenance) -> None:
    """RFC 6902 operations applied to ``data`` in place, each recorded where it is written; an
    operation that does not apply (a path the object lacks) is passed over, as the object is
    still judged."""
    import jsonpatch
    import jsonpointer

    resource, root = place
    for index, operation in enumerate(operations):
        if not isinstance(operation, Mapping) or not isinstance(operation.get("path"), str):
            continue
        where = (resource, (*root, index))
        try:
            jsonpatch.apply_patch(data, [dict(operation)], in_place=True)
            parent, key = jsonpointer.JsonPointer(operation["path"]).to_last(data)
        except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException, TypeError, ValueError):
            continue
        if isinstance(parent, list):
            key = len(parent) - 1 if key == "-" else int(key)
        op = operation.get("op")
        if op == "remove":
            provenance.removed(parent, key, where)
        elif op in ("add", "replace") and "value" in operation:
            valued = (resource, (*root, index, "value"))
            parent[key] = provenance.copy(operation["value"], *valued)
            provenance.wrote(parent, key, valued)
        elif op in ("copy", "move"):
            provenance.wrote(parent, key, where)


def _unnamed(metadata: Any) -> Any:
    if not isinstance(metadata, Mapping):
        return metadata
    return {key: value for key, value in metadata.items() if key not in ("name", "namespace")}


def _same_object(objects: list[Built], patch: Mapping[str, Any]) -> list[Built]:
    """The object a strategic merge patch without a target names: its kind and name, its
    namespace when it gives one (current or original names count, as kustomize's ids do)."""
    metadata = patch.get("metadata") if isinstance(patch.get("metadata"), Mapping) else {}
    name, namespace = metadata.get("name"), metadata.get("namespace")
    return [
        built for built in objects
        if built.data.get("kind") == patch.get("kind") and name in built.names
        and (namespace is None or namespace in built.namespaces)
    ]


def _selected(objects: list[Built], target: Mapping[str, Any]) -> list[Built]:
    return [built for built in objects if _matches(built, target)]


def _matches(built: Built, target: Mapping[str, Any]) -> bool:
    api_version = str(built.data.get("apiVersion") or "")
    group, _, version = api_version.rpartition("/")
    metadata = built.data.get("metadata") if isinstance(built.data.get("metadata"), dict) else {}
    checks = (
        ("group", [group]), ("version", [version]), ("kind", [built.data.get("kind")]),
        ("name", built.names), ("namespace", built.namespaces),
    )
    for key, values in checks:
        wanted = target.get(key)
        if isinstance(wanted, str) and wanted and not any(_anchored(wanted, value) for value in values):
            return False
    return all(
        _selects(target.get(selector), metadata.get(field))
        for selector, field in (("labelSelector", "labels"), ("annotationSelector", "annotations"))
    )


def _anchored(pattern: str, value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        return re.fullmatch(pattern, value) is not None
    except re.error:
        return pattern == value


def _selects(selector: Any, labels: Any) -> bool:
    """An equality-based label selector (``a=b,c!=d,e,!f``) over ``labels``."""
    if not isinstance(selector, str) or not selector.strip():
        return True
    labels = labels if isinstance(labels, Mapping) else {}
    for term in (part.strip() for part in selector.split(",")):
        if "!=" in term:
            key, value = (side.strip() for side in term.split("!=", 1))
            ok = str(labels.get(key)) != value if key in labels else True
        elif "=" in term:
            key, value = (side.strip() for side in term.split("=", 1))
            ok = key in labels and str(labels[key]) == value.lstrip("=").strip()
        elif term.startswith("!"):
            ok = term[1:].strip() not in labels
        else:
            ok = term in labels
        if not ok:
            return False
    return True
