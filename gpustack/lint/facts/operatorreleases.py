"""The GPU Operator releases that GitOps objects of the set install, and where each installs.

A release is declared by a Flux HelmRelease, an Argo CD Application, a K3s HelmChart, a Fleet
bundle or a helm command in a script or note; the values files and chart folders that only carry a release's values are not counted
(they pair with the object that installs them). Each release installs under a Helm release name
and into a namespace, on the cluster its object names (an Argo CD destination, a Flux
``kubeConfig``), or on the cluster the object itself is applied to.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from gpustack.lint.context import LintContext
from gpustack.lint.facts.registered import names_of_roles
from gpustack.lint.model import Resource, nonempty_text
from gpustack.lint.releases import dispatch
from gpustack.lint.releases.commands import command_of
from gpustack.lint.releases.fleet import is_fleet_bundle
from gpustack.lint.releases.release import HelmChartRelease

IN_CLUSTER = "in-cluster"  # Argo CD's name for the cluster it runs in
_IN_CLUSTER_SERVER = "https://kubernetes.default.svc"
_INSTALLERS = {"HelmRelease": "helm.toolkit.fluxcd.io", "Application": "argoproj.io", "HelmChart": "helm.cattle.io"}


@dataclass(frozen=True)
class OperatorRelease:
    """A GPU Operator release; None where the object does not say (matches any)."""

    release: HelmChartRelease
    name: str | None
    namespace: str | None
    cluster: str | None

    def same_deployment(self, other: OperatorRelease) -> bool:
        """One release written twice (two clusters' copies, a Fleet bundle's targets): the same
        name and namespace, as far as both say."""
        return _agree(self.name, other.name) and _agree(self.namespace, other.namespace)

    def same_cluster(self, other: OperatorRelease) -> bool:
        return _agree(self.cluster, other.cluster)

    def __str__(self) -> str:
        return self.release.owner


def operator_releases(ctx: LintContext) -> Iterator[OperatorRelease]:
    charts = names_of_roles("gpu-operator")
    for release in dispatch.releases(ctx):
        if release.chart in charts and (installed := _installed(release)) is not None:
            yield installed


def cluster_of(release: HelmChartRelease) -> str | None:
    """The cluster the object that declares ``release`` installs it on (an Argo CD destination,
    a Flux ``kubeConfig``, the cluster it is applied to); None where it does not say."""
    installed = _installed(release)
    return installed.cluster if installed is not None else None


def _installed(release: HelmChartRelease) -> OperatorRelease | None:
    resource = release.resource
    command = command_of(release)
    if command is not None:  # a script's or note's helm command: the cluster it is run against
        return OperatorRelease(release, release.release, nonempty_text(command.get("namespace")) or "default", None)
    if is_fleet_bundle(resource):
        namespace = nonempty_text(resource.data.get("namespace")) or nonempty_text(resource.data.get("defaultNamespace"))
        # Fleet names a release after its bundle (the bundle's folder) unless releaseName says.
        return OperatorRelease(release, release.release or resource.file, namespace or "default", None)
    if resource.kind not in _INSTALLERS or resource.api_group != _INSTALLERS[resource.kind]:
        return None
    if resource.kind == "Application":
        destination = resource.get(("spec", "destination"))
        destination = destination if isinstance(destination, dict) else {}
        return OperatorRelease(
            release, release.release, nonempty_text(destination.get("namespace")), _argo_cluster(destination)
        )
    namespace = nonempty_text(resource.get(("spec", "targetNamespace"))) or resource.ref.namespace
    return OperatorRelease(release, release.release, namespace, _flux_cluster(resource))


def _argo_cluster(destination: dict[str, object]) -> str | None:
    server, name = nonempty_text(destination.get("server")), nonempty_text(destination.get("name"))
    if server == _IN_CLUSTER_SERVER or (server is None and name == IN_CLUSTER):
        return IN_CLUSTER
    return server or name


def _flux_cluster(resource: Resource) -> str:
    """A HelmRelease with ``spec.kubeConfig`` installs on the cluster of that Secret's kubeconfig;
    any other (a K3s HelmChart too) on the cluster it is applied to."""
    secret = resource.get(("spec", "kubeConfig", "secretRef", "name"))
    return f"kubeConfig {secret}" if isinstance(secret, str) else IN_CLUSTER


def _agree(first: str | None, second: str | None) -> bool:
    return first is None or second is None or first == second
