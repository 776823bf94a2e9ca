"""Build the cluster tier's binaries from the Go module proxy, once per Kubernetes version.

`python -m tests.cluster.build [MINOR ...]` builds etcd, kube-apiserver, kube-scheduler,
kube-controller-manager and kubectl for each Kubernetes minor version (default: the newest
one the examples target) under ``~/.cache/gpustack/cluster/<version>/bin`` and prints that
folder; a version already built is reused at once.

`k8s.io/kubernetes` cannot be required as an ordinary module: its go.mod points every
staging module (k8s.io/api, k8s.io/client-go, ...) at ./staging with version v0.0.0.
The documented way round (https://github.com/kubernetes/kubernetes/issues/79384) is a
wrapper module that requires `k8s.io/kubernetes vX.Y.Z` and replaces each staging module
with its published `v0.Y.Z` release; the replace list is read from kubernetes' own go.mod
so that a staging module added in a later release is never missed. etcd is built in the
same module, at the version kubernetes itself pins, so one `go build` compiles all five
binaries and shares the compile cache.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

# The patch release built for each Kubernetes minor version the examples target.
RELEASES = {"1.35": "v1.35.4", "1.36": "v1.36.3"}
NEWEST = max(RELEASES, key=lambda minor: tuple(map(int, minor.split("."))))
BINARIES = ("etcd", "kube-apiserver", "kube-scheduler", "kube-controller-manager", "kubectl")
PACKAGES = (
    "go.etcd.io/etcd/server/v3",
    "k8s.io/kubernetes/cmd/kube-apiserver",
    "k8s.io/kubernetes/cmd/kube-scheduler",
    "k8s.io/kubernetes/cmd/kube-controller-manager",
    "k8s.io/kubernetes/cmd/kubectl",
)
STAGING = re.compile(r"^\s*(k8s\.io/[\w.-]+)\s*=>\s*\./staging/", re.MULTILINE)
ETCD = re.compile(r"^\s*go\.etcd\.io/etcd/server/v3\s+(v\S+)", re.MULTILINE)


def cache_root() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "gpustack" / "cluster"


def bin_dir(minor: str) -> Path:
    return cache_root() / RELEASES[minor] / "bin"


def is_built(minor: str) -> bool:
    return all((bin_dir(minor) / name).is_file() for name in BINARIES)


def find_go() -> str | None:
    return shutil.which("go") or next(
        (str(p) for p in (Path("/usr/local/go/bin/go"),) if p.is_file()), None)


def run_go(go: str, args: list[str], cwd: Path, env: dict[str, str]) -> str:
    done = subprocess.run([go, *args], cwd=cwd, env=env, text=True, capture_output=True)
    if done.returncode != 0:
        raise SystemExit(f"go {' '.join(args)} failed in {cwd}:\n{done.stderr[-4000:]}")
    return done.stdout


# Argo CD's AppProject CRD (the reference CRDs hold its Application only), for the AppProject of a
# stack's argocd/root.yaml: from the newest argo-cd release whose go.mod asks for no newer Go than 1.26.
ARGOCD_MODULE, ARGOCD_VERSION = "github.com/argoproj/argo-cd/v3", "v3.5.8"
ARGOCD_CRD = "manifests/crds/appproject-crd.yaml"


def argocd_crd() -> str:
    """The text of Argo CD's AppProject CRD from its module ("" where Go is missing)."""
    go = find_go()
    if go is None:
        return ""
    folder = cache_root()
    folder.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "GOFLAGS": "-mod=mod"}
    info = json.loads(run_go(go, ["mod", "download", "-json", f"{ARGOCD_MODULE}@{ARGOCD_VERSION}"], folder, env))
    return (Path(info["Dir"]) / ARGOCD_CRD).read_text(encoding="utf-8")


def go_build_once(target: Path, source: Path, *, cgo: bool, what: str, package: str = ".",
                  ldflags: str = "-s -w", env: dict[str, str] | None = None) -> Path:
    """``go build`` of ``package`` of the module in ``source`` into ``target`` unless it is there: one build at a
    time (a file lock; a second caller waits and reuses it), written to a temporary file renamed
    into place, so a killed build never leaves a half binary a later run would take as built."""
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if target.is_file():
            return target
        go = find_go()
        if go is None:
            raise SystemExit(f"go not found: {what} is built with Go from the Go module proxy; install Go 1.26")
        environment = {**os.environ, **(env or {}), "CGO_ENABLED": "1" if cgo else "0"}
        partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
        try:
            run_go(go, ["build", "-trimpath", f"-ldflags={ldflags}", "-o", str(partial), package], source, environment)
            partial.rename(target)
        finally:
            partial.unlink(missing_ok=True)
    return target


def wrapper_go_mod(release: str, kubernetes_go_mod: str) -> str:
    """The wrapper module: kubernetes at `release`, each staging module at its v0.Y.Z tag."""
    staging_tag = "v0." + release.split(".", 1)[1]
    staging = sorted(set(STAGING.findall(kubernetes_go_mod)))
    etcd = ETCD.search(kubernetes_go_mod)
    requires = [f"\tk8s.io/kubernetes {release}"]
    if etcd:
        requires.append(f"\tgo.etcd.io/etcd/server/v3 {etcd.group(1)}")
    replaces = [f"\t{module} => {module} {staging_tag}" for module in staging]
    return ("module gpustack.invalid/cluster\n\ngo 1.26.0\n\nrequire (\n" + "\n".join(requires)
            + "\n)\n\nreplace (\n" + "\n".join(replaces) + "\n)\n")


def build(minor: str) -> Path:
    """Build the binaries for `minor` (e.g. "1.36") unless they are already there.

    One build per version at a time (a file lock): a second caller waits, then reuses its result.
    """
    if is_built(minor):
        return bin_dir(minor)
    root = cache_root() / RELEASES[minor]
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return bin_dir(minor) if is_built(minor) else _build(minor)


def version_ldflags(minor: str) -> str:
    """The linker flags that stamp the release into a Kubernetes binary (its version checks read it)."""
    major, minor_number = minor.split(".")
    version_pkg = "k8s.io/component-base/version"
    return " ".join([
        "-s -w",
        f"-X {version_pkg}.gitVersion={RELEASES[minor]}",
        f"-X {version_pkg}.gitMajor={major}",
        f"-X {version_pkg}.gitMinor={minor_number}",
        f"-X {version_pkg}.gitTreeState=clean",
    ])


def kubeadm(minor: str) -> Path:
    """kubeadm of the release pinned for ``minor``, built once from the control plane's wrapper
    module (``build``), beside its binaries."""
    build(minor)
    root = cache_root() / RELEASES[minor]
    return go_build_once(root / "kubeadm" / "kubeadm", root / "src", cgo=False, what="kubeadm",
                         package="k8s.io/kubernetes/cmd/kubeadm", ldflags=version_ldflags(minor),
                         env={"GOFLAGS": "-mod=mod"})


def _build(minor: str) -> Path:
    go = find_go()
    if go is None:
        raise SystemExit("go not found: the cluster tier builds its binaries with Go")
    release = RELEASES[minor]
    root = cache_root() / release
    src = root / "src"
    src.mkdir(exist_ok=True)
    env = {**os.environ, "GOFLAGS": "-mod=mod", "CGO_ENABLED": "0"}
    info = json.loads(run_go(go, ["mod", "download", "-json", f"k8s.io/kubernetes@{release}"], src, env))
    (src / "go.mod").write_text(wrapper_go_mod(release, Path(info["GoMod"]).read_text()))
    ldflags = version_ldflags(minor)
    out = root / "bin.partial"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    run_go(go, ["mod", "download"], src, env)
    run_go(go, ["build", "-trimpath", f"-ldflags={ldflags}", "-o", f"{out}/", *PACKAGES], src, env)
    # go names a binary after the path element before a major-version suffix: server/v3 -> server
    (out / "server").rename(out / "etcd")
    shutil.rmtree(bin_dir(minor), ignore_errors=True)
    out.rename(bin_dir(minor))
    return bin_dir(minor)


def main(argv: list[str]) -> None:
    unknown = sorted(set(argv) - set(RELEASES))
    if unknown:
        raise SystemExit(f"no release pinned for Kubernetes {', '.join(unknown)}: add it to RELEASES in {__file__}")
    for minor in argv or [NEWEST]:
        started = time.monotonic()
        path = build(minor)
        print(f"{minor}: {time.monotonic() - started:.0f} s", file=sys.stderr)
        print(path)


if __name__ == "__main__":
    main(sys.argv[1:])
