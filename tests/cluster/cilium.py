"""Cilium's Helm chart, the pod network of kubeadm and Talos stacks (gpustack/render/stackfiles/cni.py),
from the Go module proxy: Cilium keeps its chart in its Go repository
(``install/kubernetes/cilium`` of github.com/cilium/cilium), so ``go mod download`` of the pinned
release brings the very chart helm.cilium.io publishes as that version. ``helm package`` makes it
a ``.tgz`` once, cached under ``~/.cache/gpustack/cilium/<version>/``.

The e2e tier templates it with every rendered values file (tests/e2e/test_cni_chart.py: helm checks
the values against the chart's values.schema.json); the cluster tier installs it first, as the
README's host step does (tests/cluster/install.py), with ``deploy.helm_template``.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from pathlib import Path

from gpustack.render.stackfiles import cni
from tests.cluster.build import find_go
from tests.cluster.deploy import Release, Unavailable, find_helm

MODULE = "github.com/cilium/cilium"
CHART_FOLDER = Path("install") / "kubernetes" / "cilium"


def cache_root() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "gpustack" / "cilium" / cni.VERSION


def chart() -> Path:
    """The packaged chart of ``cni.VERSION``; Unavailable without Go, helm or the module proxy."""
    root = cache_root()
    packaged = root / f"{cni.CHART}-{cni.VERSION}.tgz"
    if packaged.is_file():
        return packaged
    go = find_go()
    if go is None:
        raise Unavailable("no go binary: Cilium's chart comes from the Go module proxy")
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if packaged.is_file():
            return packaged
        done = subprocess.run([go, "mod", "download", "-json", f"{MODULE}@v{cni.VERSION}"], cwd=root,
                              env={**os.environ, "GOFLAGS": "-mod=mod"}, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise Unavailable(f"go mod download {MODULE}@v{cni.VERSION} failed: {(done.stdout + done.stderr)[-2000:]}")
        source = Path(json.loads(done.stdout)["Dir"]) / CHART_FOLDER
        partial = root / "partial"
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir()
        done = subprocess.run([find_helm(), "package", str(source), "-d", str(partial)],
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise Unavailable(f"helm package {source} failed: {done.stderr}")
        (partial / packaged.name).rename(packaged)
        partial.rmdir()
    return packaged


def release(folder: Path) -> Release | None:
    """The CNI release of a rendered stack, as its README's host step installs it (the chart fetched
    and packaged here); None on K3s, whose stacks have no ``cluster/cni/``."""
    values = folder / cni.PATH
    if not values.is_file():
        return None
    return Release(cni.RELEASE, cni.CHART, cni.VERSION, cni.NAMESPACE, values, packaged=chart())
