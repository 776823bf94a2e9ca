"""Flux's source-controller and helm-controller, built from the Go module proxy for the Flux tier's
reconcile test, cached under ``~/.cache/gpustack/flux/controllers/<versions>``.

The controllers' modules point their API module at ``./api`` (``replace``), which a module's zip
does not hold: each is built from a copy of its module whose go.mod requires the published API
module of the same release instead. source-controller v1.9.6 requires
``github.com/fluxcd/pkg/artifact`` v0.18.3, which the proxy does not serve (403): it is built
with v0.18.0, the patch release before it that the proxy serves.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from tests.cluster.build import run_go
from tests.flux.build import CONTROLLERS, cache_root, go_binary, locked

BUILT = ("github.com/fluxcd/source-controller", "github.com/fluxcd/helm-controller")
PINNED = {"github.com/fluxcd/source-controller": ["-require=github.com/fluxcd/pkg/artifact@v0.18.0"]}


def bin_dir() -> Path:
    return cache_root() / "controllers" / "-".join(CONTROLLERS[m] for m in BUILT) / "bin"


def binary(module: str) -> Path:
    return bin_dir() / module.rsplit("/", 1)[-1]


def build() -> Path:
    """Both controllers' binaries, built once."""
    if all(binary(m).is_file() for m in BUILT):
        return bin_dir()
    with locked("controllers"):
        for module in BUILT:
            if not binary(module).is_file():
                _build(module)
    return bin_dir()


def _build(module: str) -> None:
    version = CONTROLLERS[module]
    src = bin_dir().parent / module.rsplit("/", 1)[-1]
    shutil.rmtree(src, ignore_errors=True)
    src.parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "GOFLAGS": "-mod=mod", "CGO_ENABLED": "0"}
    info = json.loads(run_go(go_binary(), ["mod", "download", "-json", f"{module}@{version}"], src.parent, env))
    shutil.copytree(info["Dir"], src)
    for path in src.rglob("*"):
        path.chmod(path.stat().st_mode | 0o200)
    edits = [f"-dropreplace={module}/api", f"-require={module}/api@{version}", *PINNED.get(module, [])]
    run_go(go_binary(), ["mod", "edit", *edits], src, env)
    run_go(go_binary(), ["build", "-trimpath", "-ldflags=-s -w", "-o", str(binary(module)), "."], src, env)
    shutil.rmtree(src, ignore_errors=True)


if __name__ == "__main__":
    print(build())
