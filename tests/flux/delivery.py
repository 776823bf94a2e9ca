"""A Flux-delivered stack installed on a harness cluster by Flux's own source-controller and
helm-controller (tests/flux/controllers.py), layer by layer as ``flux/stack.yaml`` chains them:
prerequisites, then sources and releases, and once every HelmRelease is Ready the manifests.

The spec is rendered with its Flux settings at their defaults (``chart.spec`` from
HelmRepositories, tests/flux/support.flux_variant): the packaged charts are served by a loopback
HTTP Helm repository, which serves no OCI artifacts; a chart kept in Git (no Git server here) is
served from it at its tag. The repository and both controllers are processes of the cluster
(control_plane.start_process), stopped by ``down``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from gpustack.render.components import flux
from tests.cluster import control_plane, deploy
from tests.cluster.install import NotConverged, install_pod_network
from tests.cluster.spec import load
from tests.cluster.support import Cluster
from tests.flux import build, controllers
from tests.flux.graph import folder_files
from tests.flux.support import documents, flux_variant
from tests.loopback import free_port

READY_SECONDS = 600


def from_loopback(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The objects with every chart from a HelmRepository: a chart kept in Git is taken from the
    HelmRepository of the first chart, at the packaged chart of its tag."""
    sources = {o["metadata"]["name"]: o for o in objects if o["kind"] == "GitRepository"}
    helm_repository_name = next(o["metadata"]["name"] for o in objects if o["kind"] == "HelmRepository")
    for release in (o for o in objects if o["kind"] == "HelmRelease"):
        chart = release["spec"]["chart"]["spec"]
        git = sources.get(chart["sourceRef"]["name"]) if chart["sourceRef"]["kind"] == "GitRepository" else None
        if git is not None:
            chart.update(chart=chart["chart"].rstrip("/").rsplit("/", 1)[-1], version=git["spec"]["ref"]["tag"].lstrip("v"),
                         sourceRef={"kind": "HelmRepository", "name": helm_repository_name})
    return [o for o in objects if o["kind"] != "GitRepository"]


def serve_charts(state: Path, objects: list[dict[str, Any]]) -> str:
    """The packaged charts the HelmReleases name, with an index, served at a loopback URL."""
    folder = state / "charts"
    folder.mkdir()
    for release in (o for o in objects if o["kind"] == "HelmRelease"):
        chart = release["spec"]["chart"]["spec"]
        packaged = deploy.Release(release["spec"]["releaseName"], chart["chart"], chart["version"],
                                  release["spec"]["targetNamespace"], folder).chart_file()
        shutil.copy(packaged, folder)
    subprocess.run([deploy.find_helm(), "repo", "index", str(folder)], check=True, capture_output=True)
    port = free_port()
    control_plane.start_process(state, "helm-repository", [
        sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(folder)])
    return f"http://127.0.0.1:{port}"


def start_controllers(cluster: Cluster) -> None:
    binaries = controllers.build()
    env = {**os.environ, "KUBECONFIG": str(cluster.kubeconfig), "RUNTIME_NAMESPACE": "flux-system"}
    storage = f"127.0.0.1:{free_port()}"
    (cluster.state / "flux-storage").mkdir()
    common = ["--metrics-addr=127.0.0.1:0", "--health-addr=127.0.0.1:0", "--enable-leader-election=false",
              "--watch-all-namespaces"]
    arguments = {
        "source-controller": [f"--storage-path={cluster.state / 'flux-storage'}", f"--storage-addr={storage}",
                              f"--storage-adv-addr={storage}", *common],
        "helm-controller": common,
    }
    for name, args in arguments.items():
        control_plane.start_process(cluster.state, name, [str(binaries / name), *args], env=env)


def ready(cluster: Cluster) -> dict[str, tuple[str, str]]:
    """HelmRelease name → (Ready status, its message)."""
    found = {}
    for release in cluster.api.items("/apis/helm.toolkit.fluxcd.io/v2/helmreleases"):
        condition = next((c for c in release.get("status", {}).get("conditions", []) if c["type"] == "Ready"), {})
        found[release["metadata"]["name"]] = (condition.get("status", "Unknown"), condition.get("message", ""))
    return found


def install(cluster: Cluster, spec: Path) -> list[dict[str, Any]]:
    """Deliver the spec's stack through Flux's layers; the sources and releases applied.

    NotConverged when a HelmRelease is not Ready in time (the layers after it never apply)."""
    folder = flux_variant(spec, cluster.state / "flux-stack")
    layers = {layer: [doc for path in folder_files(folder / "flux" / layer) for doc in documents(path)]
              for layer in flux.LAYERS}
    objects = from_loopback([o for layer in ("sources", "releases") for o in layers[layer]])
    url = serve_charts(cluster.state, objects)
    for source in (o for o in objects if o["kind"] == "HelmRepository"):
        source["spec"]["url"] = url
    applier = deploy.Applier(cluster.kubectl, cluster.kubeconfig)
    # The README's CNI host step comes before Flux: its controllers are pods that need the network.
    install_pod_network(applier, load(spec), folder)
    applier.apply(build.crds(), "Flux's CRDs")
    applier.wait_established()
    # The prerequisites layer (with the flux-system namespace the bootstrap makes), then sources and
    # releases, and the manifests layer once every release is Ready (each layer `wait: true`).
    applier.apply(deploy.namespaces(layers["prerequisites"] + objects), "flux/prerequisites")
    applier.apply([o for o in layers["prerequisites"] if o["kind"] != "Namespace"], "flux/prerequisites")
    start_controllers(cluster)
    applier.apply(objects, "flux/sources and flux/releases")
    deadline = time.monotonic() + READY_SECONDS
    while time.monotonic() < deadline and not all(s == "True" for s, _ in ready(cluster).values()):
        time.sleep(5)
    state = ready(cluster)
    if not state or not all(s == "True" for s, _ in state.values()):
        waiting = [f"HelmRelease {name}: {status} {message}" for name, (status, message) in state.items() if status != "True"]
        raise NotConverged("the releases layer is not Ready, so the manifests layer never applies:\n" + "\n".join(waiting))
    applier.apply(layers["manifests"], "flux/manifests")
    return objects
