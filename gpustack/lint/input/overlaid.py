"""A root's objects as its kustomizations deploy them: overlays built before rules run.

Each kustomization of the root that no other kustomization of the root lists (``resources``,
``bases``, ``components``) is built: by ``kustomize build`` when the binary is there
(``kustomizebin``), else by the built-in builder (``overlays``). Then, so that a user reads
each pitfall once, where it can be fixed:

- an object that every build deploying it leaves unchanged is linted as itself;
- an object a build changes (a patch, a namespace, an image tag) is linted as each distinct
  result instead of itself, and a finding at the same place with the same message is reported
  once (``engine``); when some build deploys it unchanged, the object itself is one of those
  results;
- a strategic merge patch file is no object of its own: it is linted inside what it patches
  (as itself only when what it patches is not in the set);
- an object a patch deletes (``$patch: delete``) in every build that reaches it is not linted.

A built object's fields point where they were written (``provenance``): into the patch that
set them or the base. ``--fix`` edits a built object only at fields written in its base,
where the finding is (``Resource.origin``); a field a patch wrote is left to the user.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from gpustack.lint.model import Hit, InputError, Note, Path, PodSpec, Resource, copied

if TYPE_CHECKING:
    from gpustack.lint.input.overlays import Build, Built
    from gpustack.lint.input.provenance import Place, Provenance
    from gpustack.lint.input.setfiles import SetFiles


@dataclass(frozen=True)
class Overlaid:
    """A root's objects with built objects in place of those they replace."""

    resources: tuple[Resource, ...]
    built: tuple[Resource, ...] = ()
    replaced: frozenset[Resource] = field(default_factory=frozenset)
    notes: tuple[Note, ...] = ()

    def keeps(self, resource: Resource) -> bool:
        """Whether findings on an input object stand (it is not replaced by what was built)."""
        return resource not in self.replaced

    def pods(self, pods: Iterable[PodSpec]) -> tuple[PodSpec, ...]:
        """``pods`` (the files' pod specs) without those of replaced objects."""
        return tuple(pod for pod in pods if pod.resource not in self.replaced)

    def built_pods(self, errors: list[InputError]) -> tuple[PodSpec, ...]:
        """The pod specs of the built objects, DRA claims resolved over the root's objects."""
        if not self.built:
            return ()
        from gpustack.lint.facts.claims import ClaimIndex
        from gpustack.lint.input.units import pod_specs

        return pod_specs(self.built, ClaimIndex.from_resources(self.resources), errors)


def overlaid(resources: Sequence[Resource], texts: Mapping[str, str]) -> Overlaid:
    """``resources`` as the root's kustomizations deploy them."""
    if not any(resource.kind in (None, "Kustomization", "Component") for resource in resources):
        return Overlaid(tuple(resources))  # no kustomization: the builder is not even imported
    from gpustack.lint.input.setfiles import SetFiles

    files = SetFiles.of(resources, texts)
    tops = _tops(files)
    if not tops:
        return Overlaid(tuple(resources))
    from gpustack.lint.input import kustomizebin
    from gpustack.lint.input.overlays import build

    builds, failed = [], []
    for folder in tops:
        try:
            builds.append(kustomizebin.built(folder, files, build(folder, files)))
        except Exception as exc:  # a bug must cost this overlay (linted as written), never the run
            file = files.kustomizations[folder].file
            failed.append(Note(f"internal error: building {file} failed ({exc!r}); please report it", file))
    overlay = _replacing(resources, builds)
    return replace(overlay, notes=(*overlay.notes, *failed))


def _tops(files: SetFiles) -> list[str]:
    """The kustomization folders no other kustomization of the set lists."""
    listed = set()
    for folder, kustomization in files.kustomizations.items():
        for key in ("resources", "bases", "components"):
            entries = kustomization.data.get(key)
            for entry in entries if isinstance(entries, list) else ():
                if isinstance(entry, str):
                    listed.add(posixpath.normpath(posixpath.join(folder, entry)))
    return sorted(folder for folder in files.kustomizations if folder not in listed)


def _replacing(resources: Sequence[Resource], builds: list[Build]) -> Overlaid:
    unchanged: set[Resource] = set()
    changed: dict[Resource, list[tuple[Built, Provenance]]] = {}
    patches: set[str] = set()
    notes: list[Note] = []
    reached: set[Resource] = set()
    for result in builds:
        patches |= result.patch_files
        notes += result.notes
        reached |= result.reached
        for made in result.objects:
            if made.data == made.base.data:
                unchanged.add(made.base)
            else:
                changed.setdefault(made.base, []).append((made, result.provenance))
    replaced = {base for base in reached if base not in unchanged}  # changed, or deleted by a patch
    replaced |= {resource for resource in resources if resource.file in patches and resource.kind is not None}
    built: list[Resource] = []
    for base, versions in changed.items():
        distinct: list[dict] = []
        for made, provenance in versions:
            if made.data not in distinct:
                distinct.append(made.data)
                built.append(built_resource(made, provenance.placer(made.walked or made.data)))
    kept = tuple(resource for resource in resources if resource not in replaced)
    return Overlaid((*kept, *built), tuple(built), frozenset(replaced), tuple(dict.fromkeys(notes)))


def built_resource(made: Built, written: Callable[[Path], Place]) -> Resource:
    """A built object as a ``Resource``, positioned where each field was written, in its
    base's file and document (``origin`` stays None: it marks objects built from chart values)."""
    base = made.base

    def locate(path: Path) -> tuple[int, int]:
        source, where = written(path)
        return source.locate(where)

    return copied(Resource, {
        "file": base.file, "data": made.data, "locator": locate, "document": base.document,
        "source_comment": base.source_comment, "document_path": base.document_path, "origin": None,
        "written": written,
    })


def found_at(hit: Hit) -> Place:
    """Where a finding points: where its field was written (``Resource.place``). On an
    overlay's object, a finding whose fix sets a field that a patch removed points at that
    patch: the base has the field, the patch is what to change."""
    resource = hit.resource
    if resource.written is not None:
        for edit in hit.edits:
            source, where = resource.place(edit.path)
            if source.file != resource.file and resource.get(edit.path) is None:
                return source, where
    return resource.place(hit.path)


def base_path(resource: Resource, path: Path) -> Path | None:
    """Where an edit at ``path`` of a built object goes: the same field in its base's document
    when the base wrote it; None when a patch or a transformer did (``--fix`` leaves it be)."""
    source, where = resource.place(path)
    same = source.file == resource.file and source.document == resource.document and source.written is None
    return where if same and source.origin is None else None
