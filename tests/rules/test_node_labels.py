"""GS047 reads the node labels the set applies (``facts/node_labels.py``) from each source: a
label set anywhere there silences the rule, and an unrelated label does not."""

from __future__ import annotations

import pytest

PLUGIN_AND_POD = """
apiVersion: helm.cattle.io/v1
kind: HelmChart
metadata: {name: nvidia-device-plugin, namespace: kube-system}
spec:
  chart: nvidia-device-plugin
  version: 0.20.0
---
apiVersion: v1
kind: Pod
metadata: {name: cuda}
spec:
  nodeSelector: {nvidia.com/gpu.present: "true"}
  containers:
    - {name: cuda, image: nvcr.io/nvidia/cuda:13.0.1-base-ubuntu24.04, resources: {limits: {nvidia.com/gpu: 1}}}
"""

# Each source as its upstream documents it: Node (core/v1); K3s agent config
# (https://docs.k3s.io/cli/agent#node-labels-and-taints); kubeadm v1beta3 map and v1beta4
# {name, value} list (https://kubernetes.io/docs/reference/config-api/kubeadm-config.v1beta4/);
# Talos machine config and talhelper talconfig
# (https://www.talos.dev/latest/reference/configuration/v1alpha1/config/,
# https://budimanjojo.github.io/talhelper/latest/reference/configuration/); NFD NodeFeatureRule
# (https://kubernetes-sigs.github.io/node-feature-discovery/stable/usage/custom-resources.html);
# Karpenter NodePool (https://karpenter.sh/docs/concepts/nodepools/).
SOURCES = {
    "node": "apiVersion: v1\nkind: Node\nmetadata: {name: gpu-1, labels: {LABEL: 'true'}}\n",
    "k3s": "node-label:\n  - LABEL=true\n",
    "kubeadm-v1beta3": "apiVersion: kubeadm.k8s.io/v1beta3\nkind: JoinConfiguration\n"
    "nodeRegistration: {kubeletExtraArgs: {node-labels: 'team=ml,LABEL=true'}}\n",
    "kubeadm-v1beta4": "apiVersion: kubeadm.k8s.io/v1beta4\nkind: JoinConfiguration\n"
    "nodeRegistration: {kubeletExtraArgs: [{name: node-labels, value: LABEL=true}]}\n",
    "talos-machine": "machine:\n  nodeLabels: {LABEL: 'true'}\n",
    "talos-kubelet": "machine:\n  kubelet: {extraArgs: {node-labels: LABEL=true}}\n",
    "talconfig": "clusterName: home\nnodes:\n  - hostname: gpu-1\n    nodeLabels: {LABEL: 'true'}\n",
    "talconfig-patch": "clusterName: home\nnodes:\n  - hostname: gpu-1\n    patches:\n      - |-\n"
    "        machine:\n          nodeLabels: {LABEL: 'true'}\n",
    "node-feature-rule": "apiVersion: nfd.k8s-sigs.io/v1alpha1\nkind: NodeFeatureRule\nmetadata: {name: gpu}\n"
    "spec:\n  rules:\n    - name: nvidia\n      labels: {LABEL: 'true'}\n      matchFeatures: []\n",
    "karpenter": "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: gpu}\n"
    "spec: {template: {metadata: {labels: {LABEL: 'true'}}}}\n",
}


def _gs047(lint, *documents: str):  # type: ignore[no-untyped-def]
    return [r for r in lint("\n---\n".join(documents)) if r.rule == "GS047"]


def test_fires_without_a_label_source(lint) -> None:  # type: ignore[no-untyped-def]
    assert len(_gs047(lint, PLUGIN_AND_POD)) == 1


@pytest.mark.parametrize("source", sorted(SOURCES))
def test_each_source_labels_the_nodes(lint, source: str) -> None:  # type: ignore[no-untyped-def]
    assert _gs047(lint, PLUGIN_AND_POD, SOURCES[source].replace("LABEL", "nvidia.com/gpu.present")) == []
    assert len(_gs047(lint, PLUGIN_AND_POD, SOURCES[source].replace("LABEL", "example.com/other"))) == 1
