"""Flux's own code for the Flux tier, from the Go module proxy, cached under ``~/.cache/gpustack/flux``.

- ``crds()``: the CRDs of Flux's controllers (``config/crd/bases`` of each controller's module),
  which the cluster tier applies so that the API server checks the rendered Flux objects against
  Flux's OpenAPI schemas and CEL rules.
- ``validator()``: ``tests/flux/validator`` (its own go.mod) built once: it decodes every rendered
  Flux object strictly into the API types of source-controller, helm-controller and
  kustomize-controller and checks them with what those packages offer.

`python -m tests.flux.build` fetches and builds both and prints the validator's path. The
versions are the newest whose go.mod asks for no newer Go than 1.26 (the controllers' API
modules v1.10/v1.7 need Go 1.27): Flux 2.7's controllers. Their CRDs serve the versions render
writes (``gpustack/render/components/flux.py``).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from tests.cluster.build import find_go, run_go

# Controller module → version; the API modules in validator/go.mod are the same releases.
CONTROLLERS = {
    "github.com/fluxcd/source-controller": "v1.9.6",
    "github.com/fluxcd/helm-controller": "v1.6.4",
    "github.com/fluxcd/kustomize-controller": "v1.9.6",
}
SOURCE = Path(__file__).resolve().parent / "validator"


def cache_root() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "gpustack" / "flux"


def go_binary() -> str:
    go = find_go()
    if go is None:
        raise SystemExit("go not found: the Flux tier fetches Flux's CRDs and builds its validator with Go")
    return go


def locked(name: str) -> Any:
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    lock = open(root / f".{name}.lock", "w")  # noqa: SIM115 - held by the caller's with
    fcntl.flock(lock, fcntl.LOCK_EX)
    return lock


def crd_folder_path() -> Path:
    return cache_root() / "crds" / "-".join(v for v in CONTROLLERS.values())


def crd_folder() -> Path:
    """The controllers' CRD files, copied out of the module cache once."""
    folder = crd_folder_path()
    if folder.is_dir():
        return folder
    with locked("crds"):
        if folder.is_dir():
            return folder
        partial = folder.with_suffix(".partial")
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
        env = {**os.environ, "GOFLAGS": "-mod=mod"}
        for module, version in CONTROLLERS.items():
            info = json.loads(run_go(go_binary(), ["mod", "download", "-json", f"{module}@{version}"], partial, env))
            for crd in sorted((Path(info["Dir"]) / "config" / "crd" / "bases").glob("*.yaml")):
                shutil.copyfile(crd, partial / crd.name)
        partial.rename(folder)
    return folder


def available() -> bool:
    """Whether the CRDs are cached or Go can fetch them."""
    return find_go() is not None or crd_folder_path().is_dir()


def crds() -> list[dict[str, Any]]:
    """Every CRD of Flux's source, helm and kustomize controllers."""
    import yaml  # only here: .ci/run builds the tier before the project's dependencies are installed

    docs = [doc for path in sorted(crd_folder().glob("*.yaml")) for doc in yaml.safe_load_all(path.read_text())]
    return [doc for doc in docs if doc and doc.get("kind") == "CustomResourceDefinition"]


def validator() -> Path:
    """The validator binary, rebuilt when its source or go.mod/go.sum change."""
    digest = hashlib.sha256()
    for name in ("go.mod", "go.sum", "main.go"):
        digest.update((SOURCE / name).read_bytes())
    binary = cache_root() / f"validator-{digest.hexdigest()[:12]}"
    if binary.is_file():
        return binary
    with locked("validator"):
        if not binary.is_file():
            env = {**os.environ, "CGO_ENABLED": "0"}
            run_go(go_binary(), ["build", "-trimpath", "-o", str(binary), "."], SOURCE, env)
    return binary


if __name__ == "__main__":
    print(f"Flux's CRDs in {crd_folder()}", file=sys.stderr)
    print(validator())
