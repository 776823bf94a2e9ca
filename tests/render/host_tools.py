"""Real host tools for the host-step tests, built once from the Go module proxy: containerd (its
``config default`` and ``config dump``) and NVIDIA's ``nvidia-ctk`` (``runtime configure``).

Each is ``go build`` of the upstream module's own command at the release asked for, cached under
``~/.cache/gpustack/host-tools/<module>@<release>/<command>`` (tests.cluster.build's
``go_build_once``: one build at a time, never a half binary). Without Go, or when the Go module
proxy cannot be reached, the test that needs the tool skips.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.cluster.build import find_go, go_build_once

CONTAINERD = "github.com/containerd/containerd/v2"
TOOLKIT = "github.com/NVIDIA/nvidia-container-toolkit"


def _cache() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "gpustack" / "host-tools"


def tool(module: str, release: str, command: str, *, cgo: bool) -> Path:
    """``module``'s ``cmd/<command>`` at ``release`` (without the leading v), built unless cached."""
    target = _cache() / f"{module.replace('/', '_')}@v{release}" / command
    if target.is_file():
        return target
    go = find_go()
    if go is None:
        pytest.skip(f"go not found: {command} {release} is built from the Go module proxy")
    fetched = subprocess.run([go, "mod", "download", "-json", f"{module}@v{release}"], text=True,
                             capture_output=True, check=False)
    if fetched.returncode != 0:
        pytest.skip(f"the Go module proxy did not serve {module}@v{release}: {fetched.stdout[-300:]}{fetched.stderr[-300:]}")
    source = Path(json.loads(fetched.stdout)["Dir"]) / "cmd" / command
    with pytest.MonkeyPatch.context() as env:
        # Module zips leave out vendor/ (https://go.dev/ref/mod#zip-files), so a
        # module that vendors is built from the module cache instead.
        env.setenv("GOFLAGS", "-mod=mod")
        return go_build_once(target, source, cgo=cgo, what=f"{command} {release}")


def containerd(release: str) -> Path:
    return tool(CONTAINERD, release, "containerd", cgo=False)


def nvidia_ctk(release: str) -> Path:
    # NVIDIA's go-nvml bindings, which the command links, compile only with cgo.
    return tool(TOOLKIT, release, "nvidia-ctk", cgo=True)
