"""Checks of a kubeadm control plane: how many nodes, and what high availability needs.

etcd keeps working while a majority of its members is up, so a control plane of stacked etcd
members has an odd size (an even one tolerates no more failures than the odd size below it),
and several control-plane nodes need one load-balanced address in front of them:
https://kubernetes.io/docs/setup/production-environment/tools/kubeadm/high-availability/ and
https://etcd.io/docs/v3.6/faq/#why-an-odd-number-of-cluster-members
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.spec.models import GpuStack
from gpustack.spec.pool_checks import Finding

CONTROL_PLANE_JOIN = "control-plane"  # cluster/join-control-plane.yaml, beside cluster/join-<pool>.yaml
OTHER_HA = {
    "k3s": "K3s servers run embedded etcd with --cluster-init (https://docs.k3s.io/datastore/ha-embedded)",
    "talos": "a Talos cluster's control plane is its controlplane machines (https://www.talos.dev/)",
}


def check_control_plane(stack: GpuStack) -> Iterator[Finding]:
    cluster = stack.spec.cluster
    path = ("spec", "cluster", "controlPlane")
    if cluster.distribution != "kubeadm":
        if "controlPlane" in cluster.model_fields_set:
            yield path, (
                f"controlPlane is for distribution kubeadm; {OTHER_HA[cluster.distribution]}: leave it out"
            )
        return
    count = cluster.controlPlane.count
    if count % 2 == 0:
        yield (*path, "count"), (
            f"{count} control-plane nodes: etcd needs a majority of its members, so {count} survive no more "
            f"failures than {count - 1}; choose an odd count"
        )
    elif count > 1 and not cluster.controlPlaneEndpoint:
        yield (*path, "count"), (
            f"{count} control-plane nodes need cluster.controlPlaneEndpoint, the load-balanced host:port in front "
            "of them that kubeadm writes into the API server's certificate and every kubeconfig"
        )
    if count > 1:
        pools = [("nodePools", i, p.name) for i, p in enumerate(stack.spec.nodePools)]
        pools += [("systemPools", i, p.name) for i, p in enumerate(stack.spec.systemPools)]
        for section, i, name in pools:
            if name == CONTROL_PLANE_JOIN:
                yield ("spec", section, i, "name"), (
                    f"pool name {name} is taken by the control-plane nodes' join file (cluster/join-{name}.yaml): "
                    "rename the pool"
                )
