"""The real ``kustomize build``, when the binary is there: ``$KUSTOMIZE``, else ``kustomize``
on PATH. Without it (the usual case, and the fast one: no process is started) the built-in
builder's objects stand.

kustomize's output says nothing of where a field was written, so each of its objects is
matched to the built-in builder's object of the same kind, namespace and name, whose
provenance places the fields (by path: where the two agree, exactly); an object the built-in
builder did not make is placed in the input object of its kind and name, if any. Objects
with neither (a generated ConfigMap) are not linted. A build that fails (a file outside the
set, a generator the binary needs plugins for) falls back to the built-in builder, with a note.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from functools import cache
from typing import Any

from gpustack.lint.input.overlays import Build, Built
from gpustack.lint.input.parse import text_entry
from gpustack.lint.input.setfiles import SetFiles
from gpustack.lint.model import Note, Resource

TIMEOUT_S = 60


@cache
def binary() -> str | None:
    return os.environ.get("KUSTOMIZE") or shutil.which("kustomize")


def kustomize_build(executable: str, folder: str) -> list[dict[str, Any]] | str:
    """The objects ``kustomize build folder`` prints, or why there are none."""
    try:
        done = subprocess.run(
            [executable, "build", "--load-restrictor", "LoadRestrictionsNone", folder],
            capture_output=True, text=True, timeout=TIMEOUT_S, check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if done.returncode != 0:
        return done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit status {done.returncode}"
    kind, items = text_entry(done.stdout)
    if kind == "errors":
        return "its output is not YAML"
    return [item[1] for item in items if isinstance(item[1], dict)]


def built(folder: str, files: SetFiles, fallback: Build) -> Build:
    """What ``kustomize build`` makes of ``folder``, placed by ``fallback`` (the built-in
    builder's build); ``fallback`` itself without the binary or when the build fails."""
    executable = binary()
    kustomization = files.kustomizations[folder].file
    if executable is None or not os.path.isfile(kustomization):  # standard input: nothing on disk to build
        return fallback
    found = kustomize_build(executable, os.path.dirname(kustomization) or ".")
    if isinstance(found, str):
        fallback.notes.append(Note(f"kustomize build failed ({found}): built without the binary", kustomization))
        return fallback
    twins = {_identity(made.data): made for made in fallback.objects}
    result = Build(fallback.provenance, [], fallback.patch_files, fallback.reached, fallback.notes)
    for data in found:
        twin = twins.get(_identity(data))
        if twin is not None:
            result.objects.append(Built(data, twin.base, walked=twin.data))
            continue
        base = _input_object(data, files)
        if base is not None:
            fallback.provenance.rooted(data, (base, ()))
            result.objects.append(Built(data, base))
    return result


def _identity(data: dict[str, Any]) -> tuple[Any, ...]:
    metadata = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    return data.get("kind"), metadata.get("namespace"), metadata.get("name")


def _input_object(data: dict[str, Any], files: SetFiles) -> Resource | None:
    _, _, name = _identity(data)
    return next(
        (resource for resources in files.objects.values() for resource in resources
         if resource.kind == data.get("kind") and resource.ref.name == name),
        None,
    )
