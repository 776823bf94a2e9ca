"""What a stack renders to before it is laid out as files: ``Rendered`` and the paths it names.

The pipeline (``render.app``) builds a ``Rendered``; the files made from the merged render
(``render.stackfiles``: the README above all) read it. Both import this module, neither the
other.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from gpustack.render.component import HelmRelease, RenderContext
from gpustack.render.stackfiles import cluster_config

Objects = list[dict[str, Any]]

NAMESPACES = "namespaces"
RELEASE_NAMESPACES = "helm/namespaces.yaml"
# manifests/<name>.yaml that the charts' pods need before they start: the workloads' namespaces,
# the RuntimeClass their pods name, and the generated Secrets (Grafana's admin Secret: a pod whose
# non-optional Secret is missing never starts, https://kubernetes.io/docs/concepts/configuration/secret/).
EARLY_MANIFESTS = (NAMESPACES, "runtime", "secrets")


@dataclass(frozen=True)
class Rendered:
    """Everything a stack renders to, before it is laid out as files."""

    ctx: RenderContext
    manifests: dict[str, Objects]  # manifests/<name>.yaml → objects; namespaces first, then COMPONENTS order
    releases: tuple[HelmRelease, ...]  # by (wave, name)
    feature_gates: cluster_config.Gates  # per component, the user's gates included
    notes: dict[str, list[str]]  # component → README bullets
    files: dict[str, str]  # files contributed as text
    delivery: dict[str, Objects]  # delivery objects by path
    namespaces: Objects = field(default_factory=list)  # the releases' namespaces (RELEASE_NAMESPACES)

    def objects(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """(path, object) of every Kubernetes object: release namespaces, manifests, delivery."""
        yield from ((RELEASE_NAMESPACES, obj) for obj in self.namespaces)
        for name, objects in self.manifests.items():
            yield from ((f"manifests/{name}.yaml", obj) for obj in objects)
        for path, objects in self.delivery.items():
            yield from ((path, obj) for obj in objects)
