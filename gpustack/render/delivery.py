"""What every GitOps delivery of the stack's Helm releases shares: where the rendered stack sits in
its repository, the releases' namespaces, and the order the releases' waves give.

The deliveries themselves (``components.gitops``: K3s HelmCharts and Argo CD;
``components.flux``: Flux) and the pipeline (``app``) read these here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from gpustack.render import pod_security
from gpustack.render.component import BUILTIN_NAMESPACES, HelmRelease
from gpustack.spec.models import GpuStack
from gpustack.yamlio import dump

Objects = list[dict[str, Any]]


def stack_path(stack: GpuStack) -> str:
    """The rendered stack's folder in the Git repository (``gpustack render``'s default folder)."""
    return stack.spec.gitops.stack_path(stack.metadata.name)


def release_namespaces(releases: Sequence[HelmRelease]) -> Objects:
    """The releases' namespaces, labelled for Pod Security before any chart installs into them.

    Most hold GPU node agents (NFD worker, device plugin, operator operands, node-exporter) that use
    host paths, so Pod Security admission must allow them from the start (``pod_security``); a
    release whose pods need less says so (``HelmRelease.pod_security``). The built-in namespaces
    (kube-system) are left as the cluster has them.
    """
    levels = namespace_levels(releases)
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": pod_security.namespace_labels(level)}}
        for name, level in sorted(levels.items())
    ]


def namespace_levels(releases: Sequence[HelmRelease]) -> dict[str, str]:
    """Each release namespace (built-in ones left out) → the Pod Security level all its releases' pods meet."""
    names = {r.namespace for r in releases} - BUILTIN_NAMESPACES
    return {
        name: pod_security.least_strict(r.pod_security for r in releases if r.namespace == name) for name in names
    }


def previous_wave(releases: Sequence[HelmRelease], release: HelmRelease) -> list[HelmRelease]:
    """The releases of the wave just before ``release``'s: what it must wait for.

    Waves order the releases (lower first: NFD and kube-prometheus-stack with their CRDs, then the
    device plugins and exporters whose values create ServiceMonitors). Each wave waiting for the
    one before it orders every release after all lower waves.
    """
    lower = [r.wave for r in releases if r.wave < release.wave]
    if not lower:
        return []
    wave = max(lower)
    return [r for r in releases if r.wave == wave]


def last_wave(releases: Sequence[HelmRelease]) -> int:
    """The wave after every release's: ``manifests/`` (workloads, PrometheusRules) come then."""
    return max((r.wave for r in releases), default=0) + 1


def kustomization(resources: Iterable[str]) -> str:
    """A folder's ``kustomization.yaml`` listing its files (``kubectl apply -k``, Flux, Argo CD)."""
    return dump({"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization", "resources": list(resources)})
