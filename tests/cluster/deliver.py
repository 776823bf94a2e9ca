"""A rendered stack installed on a harness cluster the way it is delivered, until it converges:
through Flux's own controllers when the spec delivers by Flux (tests/flux/delivery.py), else in
its README's apply order (tests/cluster/install.py: K3s auto-deploy and Argo CD apply the same
objects without waiting between them; the rendered app-of-apps does not gate Argo CD's waves on
health, since Application health is not assessed without an argocd-cm customisation).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from gpustack.spec.models import GpuStack
from tests.cluster import install
from tests.cluster.spec import load
from tests.cluster.support import Cluster, start, wait_for
from tests.flux import delivery as flux_delivery


def deliver(cluster: Cluster, spec: Path, stack: GpuStack) -> None:
    """Install the stack through its delivery and wait until it converges (NotConverged if not)."""
    if not stack.spec.gitops.flux.enabled:
        install.install(cluster, stack, cluster.state / "stack")
        return
    flux_delivery.install(cluster, spec)
    try:
        wait_for(lambda: not install.unconverged(cluster.api), install.ROLLOUT_SECONDS,
                 lambda: "\n".join(install.unconverged(cluster.api)))
    except AssertionError as error:
        raise install.NotConverged(str(error)) from None


def installed(spec: Path, state: Path) -> Iterator[Cluster]:
    """A cluster for ``spec`` with its stack delivered and converged, while the generator is
    suspended; stopped and removed when it is closed."""
    generator = start(spec, state)
    cluster = next(generator)
    try:
        deliver(cluster, spec, load(spec))
        yield cluster
    finally:
        generator.close()
