"""Exemptions: findings a repository accepts, named in ``.gpustack.yaml``, each with a reason::

    exemptions:
      - rules: [GS002, GS003]
        namespace: gpu-system
        kind: DaemonSet
        name: vendor-gpu-agent
        reason: the vendor's agent needs /dev; reviewed 2026-05
      - rules: [GS022]
        image: registry.example/gpu/agent   # a repository: any tag; with a tag or digest: exactly that

Every field given must equal the finding's exactly: never a prefix, never a pattern, so that
exempting the name ``app`` leaves ``app-sidecar`` alone, and an object without a namespace
matches no ``namespace``. ``suppress.apply`` decides; this module only says what matches.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from gpustack.lint.facts.images import image_repository, image_tag
from gpustack.lint.model import Container, Hit, PodSpec

KEYS = ("namespace", "kind", "name", "image")


@dataclass(frozen=True)
class Exemption:
    rules: frozenset[str]
    reason: str
    namespace: str | None = None
    kind: str | None = None
    name: str | None = None
    image: str | None = None

    def covers(self, hit: Hit, pods: Iterable[PodSpec]) -> bool:
        """Whether the exemption names the hit's rule-independent target: its object, and the
        image of a container the hit is about (``pods``: the pod specs of the hit's object)."""
        ref = hit.resource.ref
        if any(
            wanted is not None and wanted != actual
            for wanted, actual in ((self.namespace, ref.namespace), (self.kind, ref.kind), (self.name, ref.name))
        ):
            return False
        wanted = self.image
        return wanted is None or any(_same_image(wanted, c.image) for c in _containers_of(hit, pods))


def _same_image(wanted: str, image: str) -> bool:
    """A repository matches any tag and digest of it; a tag or digest, exactly that image."""
    if "@" in wanted or image_tag(wanted) is not None:
        return image.strip() == wanted
    return image_repository(image) == image_repository(wanted)


def _containers_of(hit: Hit, pods: Iterable[PodSpec]) -> Iterator[Container]:
    """The container the hit is in; else every container of the pod spec it is in; else (a
    hit on the object as a whole) every container of the object."""
    pods = list(pods)
    holding = [pod for pod in pods if hit.path[: len(pod.path)] == pod.path]
    for pod in holding or pods:
        containers = list(pod.containers())
        inside = [c for c in containers if hit.path[: len(c.path)] == c.path]
        yield from inside or containers
