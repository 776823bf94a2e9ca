"""Cluster tier fixtures: a harness cluster per spec, always stopped and removed afterwards.

The tier runs wherever Go is (the binaries are built on first use and cached); without Go it
is skipped with the reason, except in CI (CI=true), where a skip is a failure.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.cluster import build, control_plane, nodes
from tests.cluster.api import Api
from tests.cluster.deploy import Unavailable, find_helm
from tests.cluster.spec import load
from tests.cluster.support import Cluster


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def unavailable(reason: str) -> None:
    """Skip the tier for a developer; fail it in CI, where it must run."""
    if in_ci():
        pytest.fail(f"cluster tier cannot run in CI: {reason}", pytrace=False)
    pytest.skip(reason)


def require(minor: str) -> Path:
    """The binaries for ``minor``, built now if Go is there."""
    if not build.is_built(minor) and build.find_go() is None:
        unavailable("Go is not installed: the cluster tier builds kube-apiserver, kube-scheduler, "
                    "kube-controller-manager and etcd with it (python -m tests.cluster.build)")
    return build.build(minor)


@pytest.fixture(scope="session")
def helm() -> str:
    try:
        return find_helm()
    except Unavailable as missing:
        unavailable(str(missing))
        raise


def start(spec: Path, state: Path) -> Iterator[Cluster]:
    """A cluster for ``spec`` for as long as the generator is suspended; removed afterwards."""
    stack = load(spec)
    bin_dir = require(stack.spec.cluster.kubernetesVersion)
    try:
        kubeconfig = control_plane.up(spec, state)
        yield Cluster(state, kubeconfig, Api.from_state(state), str(bin_dir / "kubectl"), nodes.stack_nodes(stack))
    finally:
        control_plane.down(state)


@pytest.fixture
def cluster_for(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[Path], Cluster]]:
    """Start clusters for specs within one test; each is stopped when the test ends."""
    running: list[Iterator[Cluster]] = []

    def make(spec: Path) -> Cluster:
        generator = start(spec, tmp_path_factory.mktemp("cluster") / "state")
        running.append(generator)
        return next(generator)

    yield make
    for generator in running:
        generator.close()
