"""Which Kubernetes distribution runs here: K3s, kubeadm, or neither that gpustack knows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from gpustack.node.root import NodeRoot

# The first path found decides; K3s first, since a K3s node has no /etc/kubernetes/manifests.
_EVIDENCE: tuple[tuple[Literal["k3s", "kubeadm"], str], ...] = (
    ("k3s", "/var/lib/rancher/k3s"),
    ("k3s", "/etc/rancher/k3s"),
    ("kubeadm", "/etc/kubernetes/manifests"),
    ("kubeadm", "/etc/kubernetes/kubelet.conf"),
)


@dataclass(frozen=True)
class Distribution:
    name: Literal["k3s", "kubeadm", "other"]
    evidence: str | None  # the path that told, None for "other"


def detect(root: NodeRoot) -> Distribution:
    for name, path in _EVIDENCE:
        if root.exists(path):
            return Distribution(name, path)
    return Distribution("other", None)
