"""Build the Talos tier's validator (tests/talos/validate) once, from the Go module proxy.

`python -m tests.talos.build` builds ``validate/main.go`` against the Talos machinery release its
go.mod requires and prints the binary's path, ``~/.cache/gpustack/talos/<release>/<source hash>/
validate``. The hash covers main.go, go.mod and go.sum, so an edited validator is rebuilt and an
unchanged one reused at once. Go and the build lock come from the cluster tier's build
(``tests.cluster.build``).
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import time
from pathlib import Path

from tests.cluster.build import go_build_once

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
    """The validator, built now unless it is already there."""
    return go_build_once(binary(), SOURCE, cgo=False, what="the Talos tier's validator")


def main() -> None:
    started = time.monotonic()
    path = build()
    print(f"talos validator {release()}: {time.monotonic() - started:.0f} s", file=sys.stderr)
    print(path)


if __name__ == "__main__":
    main()
