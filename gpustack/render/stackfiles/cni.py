"""The pod network of kubeadm stacks: Flannel, from its pinned release manifest.

kubeadm installs no CNI, so without one every node stays NotReady and no pod starts. Flannel,
because it is what K3s runs by default (one network model for both distributions of the
stack), needs no configuration beyond the pod CIDR, and ships one manifest per release
(https://github.com/flannel-io/flannel#deploying-flannel-with-kubectl). GPU stacks need no
NetworkPolicy enforcement from the CNI here; a cluster that wants it installs another CNI
instead of this one.

The manifest's ``net-conf.json`` (ConfigMap ``kube-flannel-cfg``) fixes ``Network`` to
10.244.0.0/16: ``cluster/cni/kustomization.yaml`` patches it to the ClusterConfiguration's
``networking.podSubnet`` (``cluster_config.pod_subnet``), so the two cannot differ. Flannel is
a pinned URL, not a chart of the registry (specs/charts.yaml): its chart is not among those the
real-chart test tier renders, and the manifest is what upstream documents for kubeadm. The
patch is tested against the rendered text, not against the downloaded manifest.
"""

from __future__ import annotations

import json

from gpustack.spec.models import GpuStack
from gpustack.yamlio import dump

VERSION = "v0.28.8"
MANIFEST = f"https://github.com/flannel-io/flannel/releases/download/{VERSION}/kube-flannel.yml"
PATH = "cluster/cni/kustomization.yaml"
FOLDER = "cluster/cni"
CONFIG_MAP = {"kind": "ConfigMap", "name": "kube-flannel-cfg", "namespace": "kube-flannel"}


def net_conf(pod_subnet: str) -> str:
    """Flannel's network configuration: the pod subnet, VXLAN between nodes (its default)."""
    return json.dumps({"Network": pod_subnet, "Backend": {"Type": "vxlan"}})


def kustomization(stack: GpuStack, pod_subnet: str) -> str:
    document = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": [MANIFEST],
        "patches": [
            {
                "target": dict(CONFIG_MAP),
                "patch": dump([{"op": "replace", "path": "/data/net-conf.json", "value": net_conf(pod_subnet)}]),
            }
        ],
    }
    header = (
        f"# Pod network of stack {stack.metadata.name}: Flannel {VERSION} with the pod subnet {pod_subnet}\n"
        "# (the ClusterConfiguration's networking.podSubnet). `kubectl apply -k cluster/cni` once after\n"
        "# `kubeadm init`, before the pools join.\n"
    )
    return header + dump(document)
