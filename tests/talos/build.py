"""Build the Talos tier's validator (tests/talos/validate) once, from the Go module proxy.

`python -m tests.talos.build` builds ``validate/main.go`` against the Talos machinery release its
go.mod requires and prints the binary's path, ``~/.cache/gpustack/talos/<release>/<source hash>/
validate``. The hash covers main.go, go.mod and go.sum, so an edited validator is rebuilt and an
unchanged one reused at once. Go and the build lock come from the cluster tier's build
(``tests.cluster.build``).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import sys
import time
from pathlib import Path

from tests.cluster.build import find_go, run_go

SOURCE = Path(__file__).parent / "validate"
SOURCES = ("main.go", "go.mod", "go.sum")
MACHINERY = re.compile(r"^\s*github\.com/siderolabs/talos/pkg/machinery\s+(v\S+)", re.MULTILINE)


def release() -> str:
    """The Talos machinery release the validator is built against (its go.mod says)."""
    found = MACHINERY.search((SOURCE / "go.mod").read_text())
    if found is None:
        raise SystemExit(f"{SOURCE / 'go.mod'} requires no github.com/siderolabs/talos/pkg/machinery")
    return found.group(1)


def binary() -> Path:
    digest = hashlib.sha256(b"".join((SOURCE / name).read_bytes() for name in SOURCES)).hexdigest()[:12]
    root = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "gpustack" / "talos"
    return root / release() / digest / "validate"


def build() -> Path:
    """The validator, built now unless it is already there (one build at a time: a file lock)."""
    target = binary()
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not target.is_file():
            go = find_go()
            if go is None:
                raise SystemExit("go not found: the Talos tier builds its validator with Go")
            env = {**os.environ, "CGO_ENABLED": "0"}
            partial = target.with_suffix(".partial")
            run_go(go, ["build", "-trimpath", "-ldflags=-s -w", "-o", str(partial), "."], SOURCE, env)
            partial.rename(target)
    return target


def main() -> None:
    started = time.monotonic()
    path = build()
    print(f"talos validator {release()}: {time.monotonic() - started:.0f} s", file=sys.stderr)
    print(path)


if __name__ == "__main__":
    main()
