"""Flux's own source-controller and helm-controller reconcile the rendered HelmReleases to Ready
on the cluster tier's control plane (fake GPU nodes), the packaged charts served by a loopback
HTTP Helm repository (a chart kept in Git from it too, at its tag).

Per example that enables Flux, rendered with Flux at its defaults (``chart.spec`` from
HelmRepositories: the loopback repository serves no OCI artifacts, so the HelmRepositories' URLs
are pointed at it): Flux's CRDs, then the layers in their order (prerequisites, sources and
releases, the rest of manifests/ once the releases are Ready), both controllers running against
the API server; every HelmRelease must become Ready in the order its ``dependsOn`` gives. The fake kubelet runs every pod and never ends one;
the pods of Helm hook Jobs (kube-prometheus-stack's admission webhook certificates) are marked
Succeeded here, as their containers would exit.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gpustack.render.components import flux
from tests import loopback
from tests.cluster import deploy, install
from tests.cluster.api import ApiError
from tests.cluster.support import Cluster, start, unavailable, wait_for
from tests.flux import build, controllers
from tests.flux.graph import folder_files
from tests.flux.support import FLUX_EXAMPLES, documents, flux_variant, require_charts

pytestmark = [pytest.mark.cluster, pytest.mark.flux]
READY_SECONDS = 600


@pytest.fixture(scope="module")
def binaries() -> Path:
    if build.find_go() is None and not controllers.bin_dir().is_dir():
        unavailable("Go is not installed: the reconcile test builds Flux's controllers")
    return controllers.build()


def from_loopback(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The objects with every chart from a HelmRepository: a chart kept in Git (no Git server
    here) is taken from the HelmRepository of the first chart, at the packaged chart of its tag."""
    sources = {o["metadata"]["name"]: o for o in objects if o["kind"] == "GitRepository"}
    helm_repository_name = next(o["metadata"]["name"] for o in objects if o["kind"] == "HelmRepository")
    for release in (o for o in objects if o["kind"] == "HelmRelease"):
        chart = release["spec"]["chart"]["spec"]
        git = sources.get(chart["sourceRef"]["name"]) if chart["sourceRef"]["kind"] == "GitRepository" else None
        if git is not None:
            chart.update(chart=chart["chart"].rstrip("/").rsplit("/", 1)[-1], version=git["spec"]["ref"]["tag"].lstrip("v"),
                         sourceRef={"kind": "HelmRepository", "name": helm_repository_name})
    return [o for o in objects if o["kind"] != "GitRepository"]


class ChartFiles(loopback.Quiet, http.server.SimpleHTTPRequestHandler):
    """The packaged charts and their index, as files."""


def helm_repository(objects: list[dict[str, Any]], folder: Path) -> Iterator[str]:
    """Serve the packaged charts the HelmReleases name, with an index, at a loopback URL."""
    folder.mkdir()
    for release in (o for o in objects if o["kind"] == "HelmRelease"):
        chart = release["spec"]["chart"]["spec"]
        packaged = deploy.Release(release["spec"]["releaseName"], chart["chart"], chart["version"],
                                  release["spec"]["targetNamespace"], folder).chart_file()
        shutil.copy(packaged, folder)
    subprocess.run([deploy.find_helm(), "repo", "index", str(folder)], check=True, capture_output=True)
    with loopback.serving(functools.partial(ChartFiles, directory=str(folder))) as address:
        yield f"http://{address}"


def run_controllers(binaries: Path, cluster: Cluster, work: Path) -> list[subprocess.Popen[bytes]]:
    env = {**os.environ, "KUBECONFIG": str(cluster.kubeconfig), "RUNTIME_NAMESPACE": "flux-system"}
    storage = f"127.0.0.1:{loopback.free_port()}"
    (work / "storage").mkdir()
    common = ["--metrics-addr=127.0.0.1:0", "--health-addr=127.0.0.1:0", "--enable-leader-election=false",
              "--watch-all-namespaces"]
    arguments = {
        "source-controller": [f"--storage-path={work / 'storage'}", f"--storage-addr={storage}",
                              f"--storage-adv-addr={storage}", *common],
        "helm-controller": common,
    }
    started = []
    for name, args in arguments.items():
        log = open(work / f"{name}.log", "wb")  # noqa: SIM115 - closed with the process
        started.append(subprocess.Popen([str(binaries / name), *args], env=env, stdout=log, stderr=subprocess.STDOUT))
    return started


def installed_after_dependencies(cluster: Cluster) -> list[str]:
    """Releases first deployed before one of their dependsOn was Ready (RFC 3339 times compare as text)."""
    releases = {r["metadata"]["name"]: r for r in cluster.api.items("/apis/helm.toolkit.fluxcd.io/v2/helmreleases")}
    early = []
    for name, release in releases.items():
        deployed = release["status"]["history"][0]["firstDeployed"]
        for dependency in release["spec"].get("dependsOn", []):
            conditions = releases[dependency["name"]]["status"]["conditions"]
            became_ready = next(c["lastTransitionTime"] for c in conditions if c["type"] == "Ready")
            if deployed < became_ready:
                early.append(f"{name} deployed at {deployed}, before {dependency['name']} was Ready at {became_ready}")
    return early


def helm_storage(cluster: Cluster, objects: list[dict[str, Any]]) -> list[str]:
    """The Helm release Secrets of every HelmRelease, in its target namespace (storageNamespace)."""
    missing = []
    for release in (o for o in objects if o["kind"] == "HelmRelease"):
        spec = release["spec"]
        path = f"/api/v1/namespaces/{spec['storageNamespace']}/secrets/sh.helm.release.v1.{spec['releaseName']}.v1"
        try:
            cluster.api.get(path)
        except ApiError:
            missing.append(path)
    return missing


def ready(cluster: Cluster) -> dict[str, tuple[str, str]]:
    """HelmRelease name → (Ready status, its message)."""
    found = {}
    for release in cluster.api.items("/apis/helm.toolkit.fluxcd.io/v2/helmreleases"):
        condition = next((c for c in release.get("status", {}).get("conditions", []) if c["type"] == "Ready"), {})
        found[release["metadata"]["name"]] = (condition.get("status", "Unknown"), condition.get("message", ""))
    return found


@pytest.mark.parametrize("example", FLUX_EXAMPLES, ids=[p.stem for p in FLUX_EXAMPLES])
def test_flux_reconciles_every_release_to_ready(example, binaries, tmp_path):
    require_charts()
    folder = flux_variant(example, tmp_path / "out")
    layers = {layer: [doc for path in folder_files(folder / "flux" / layer) for doc in documents(path)]
              for layer in flux.LAYERS}
    objects = from_loopback([o for layer in ("sources", "releases") for o in layers[layer]])
    repository = helm_repository(objects, tmp_path / "charts")
    url = next(repository)
    for source in (o for o in objects if o["kind"] == "HelmRepository"):
        source["spec"]["url"] = url
    generator = start(tmp_path / "out" / example.name, tmp_path / "state")
    cluster = next(generator)
    processes: list[subprocess.Popen[bytes]] = []
    try:
        applier = deploy.Applier(cluster.kubectl, cluster.kubeconfig)
        applier.apply(build.crds(), "Flux's CRDs")
        applier.wait_established()
        # The layers in their order: prerequisites (with the flux-system namespace the bootstrap
        # makes), sources and releases, and once every release is Ready the rest of manifests/.
        applier.apply(deploy.namespaces(layers["prerequisites"] + objects), "flux/prerequisites")
        applier.apply([o for o in layers["prerequisites"] if o["kind"] != "Namespace"], "flux/prerequisites")
        processes = run_controllers(binaries, cluster, tmp_path)
        applier.apply(objects, "flux/sources and flux/releases")
        deadline = time.monotonic() + READY_SECONDS
        while time.monotonic() < deadline and not all(s == "True" for s, _ in ready(cluster).values()):
            time.sleep(5)
        state = ready(cluster)
        assert state and all(s == "True" for s, _ in state.values()), state
        assert installed_after_dependencies(cluster) == []
        assert helm_storage(cluster, objects) == []
        applier.apply(layers["manifests"], "flux/manifests")
        # End to end: every workload of the stack rolled out, every Job (the smoke Jobs) complete.
        wait_for(lambda: not install.unconverged(cluster.api), READY_SECONDS,
                 lambda: "\n".join(install.unconverged(cluster.api)))
    finally:
        for process in processes:
            process.terminate()
            process.wait(30)
        generator.close()
        repository.close()
