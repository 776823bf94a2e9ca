"""Build the ``kustomize`` binary the overlay tier compares the built-in builder with.

`python -m tests.lint.kustomize_binary` builds ``sigs.k8s.io/kustomize/kustomize/v5`` at
``VERSION`` from the Go module proxy into ``~/.cache/gpustack/kustomize/<VERSION>`` (``go
install`` with ``GOBIN`` there) and prints the binary's path; a binary already built is
reused at once. Go is found as the cluster tier finds it (``tests/cluster/build.py``).
"""

from __future__ import annotations

import fcntl
import os
import sys
import time
from pathlib import Path

from tests.cluster.build import find_go, run_go

# The newest release whose go.mod (`go 1.26.0`) builds on Go 1.26; v5.8.3 asks for Go 1.27.
VERSION = "v5.8.2"
MODULE = "sigs.k8s.io/kustomize/kustomize/v5"


def bin_dir() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "gpustack" / "kustomize" / VERSION


def built() -> Path | None:
    """The binary, when it is built."""
    path = bin_dir() / "kustomize"
    return path if path.is_file() else None


def build() -> Path:
    """The binary, built unless it is there (one build at a time: a file lock)."""
    found = built()
    if found is not None:
        return found
    go = find_go()
    if go is None:
        raise SystemExit("go not found: the kustomize tier builds its binary with Go")
    bin_dir().mkdir(parents=True, exist_ok=True)
    with open(bin_dir() / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if built() is None:
            env = {**os.environ, "GOBIN": str(bin_dir()), "CGO_ENABLED": "0"}
            run_go(go, ["install", "-trimpath", f"{MODULE}@{VERSION}"], bin_dir(), env)
    return bin_dir() / "kustomize"


if __name__ == "__main__":
    started = time.monotonic()
    path = build()
    print(f"kustomize {VERSION}: {time.monotonic() - started:.0f} s", file=sys.stderr)
    print(path)
