"""Flux's own source-controller and helm-controller reconcile the rendered HelmReleases to Ready
on the cluster tier's control plane, layer by layer (tests/flux/delivery.py), and the stack then
converges on the faithful nodes: every workload rolled out, every smoke Job complete.

Per example that enables Flux, rendered with Flux at its defaults (``chart.spec`` from
HelmRepositories served by a loopback Helm repository): every HelmRelease must become Ready in
the order its ``dependsOn`` gives, stored in its target namespace. The kubelet starts a pod only
when what it mounts exists (tests/cluster/refusals.py), so a release whose pods need a Secret of
a later layer never becomes Ready: that is how the tier caught the Flux stacks' deadlock on
Grafana's admin Secret.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.cluster import install
from tests.cluster.api import ApiError
from tests.cluster.support import Cluster, start, unavailable, wait_for
from tests.flux import build, controllers, delivery
from tests.flux.support import FLUX_EXAMPLES, require_charts

pytestmark = [pytest.mark.cluster, pytest.mark.flux]


@pytest.fixture(scope="module")
def binaries() -> Path:
    if build.find_go() is None and not controllers.bin_dir().is_dir():
        unavailable("Go is not installed: the reconcile test builds Flux's controllers")
    return controllers.build()


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


@pytest.mark.parametrize("example", FLUX_EXAMPLES, ids=[p.stem for p in FLUX_EXAMPLES])
def test_flux_reconciles_every_release_to_ready(example, binaries, tmp_path):
    """Flux's controllers reconcile every release to Ready after its dependsOn, each stored in its
    target namespace; then the manifests layer, and the whole stack converges (smoke Jobs done)."""
    require_charts()
    generator = start(example, tmp_path / "state")
    cluster = next(generator)
    try:
        objects = delivery.install(cluster, example)
        assert installed_after_dependencies(cluster) == []
        assert helm_storage(cluster, objects) == []
        wait_for(lambda: not install.unconverged(cluster.api), delivery.READY_SECONDS,
                 lambda: "\n".join(install.unconverged(cluster.api)))
    finally:
        generator.close()
