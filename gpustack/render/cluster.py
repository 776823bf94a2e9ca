"""Cluster configuration files: feature gates and the default runtime, per distribution.

Written after every component has contributed, because the gates are the union of what the
components need (``Contribution.feature_gates``) and the user's ``cluster.featureGates``.
K3s: ``cluster/config.yaml`` for /etc/rancher/k3s (upstream-facts §4). kubeadm:
``cluster/kubeadm-config.yaml``, a ClusterConfiguration (v1beta4, ``extraArgs`` as name/value
lists) plus a KubeletConfiguration (upstream-facts §5).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from gpustack.errors import GpustackError
from gpustack.render.component import GATE_COMPONENTS
from gpustack.spec.models import GpuStack
from gpustack.yamlio import dump, dump_all

Gates = dict[str, dict[str, bool]]

K3S_ARGS = {
    "apiserver": "kube-apiserver-arg",
    "controller-manager": "kube-controller-manager-arg",
    "scheduler": "kube-scheduler-arg",
    "kubelet": "kubelet-arg",
}
KUBEADM_SECTIONS = {"apiserver": "apiServer", "controller-manager": "controllerManager", "scheduler": "scheduler"}


def merge_gates(
    contributed: Iterable[Mapping[str, Mapping[str, bool]]], user: Mapping[str, bool], *, minor: int
) -> Gates:
    """Gates per component: what components need, then the user's ``cluster.featureGates``.

    User gates follow the same rule as the components' (DESIGN §10, ``featuregates``): a known
    gate only where its value differs from the version's default and only on the components
    that read it; an unknown gate on all four. Two components wanting opposite values of one
    gate is a bug in gpustack; the user's explicit value wins over any component's (conflicts a
    spec can cause are refused by spec checks).
    """
    from gpustack.spec.featuregates import component_gates

    gates: Gates = {component: {} for component in GATE_COMPONENTS}
    for contribution in contributed:
        for component, wanted in contribution.items():
            for gate, value in wanted.items():
                if gates[component].setdefault(gate, value) != value:
                    raise GpustackError(f"internal: components disagree on feature gate {gate} for {component}")
    for component, wanted in component_gates(minor=minor, user_gates=user, features=()).items():
        gates[component].update(wanted)
    return {component: dict(sorted(wanted.items())) for component, wanted in gates.items()}


def gate_flag(gates: Mapping[str, bool]) -> str:
    """``A=true,B=false`` as the components' --feature-gates flag takes it."""
    return ",".join(f"{gate}={str(value).lower()}" for gate, value in gates.items())


def k3s_config(stack: GpuStack, gates: Gates) -> str:
    config: dict[str, object] = {}
    for component in GATE_COMPONENTS:
        if gates[component]:
            config[K3S_ARGS[component]] = [f"feature-gates={gate_flag(gates[component])}"]
    if stack.spec.cluster.nvidiaDefaultRuntime:
        config["default-runtime"] = "nvidia"
    header = (
        f"# K3s configuration of stack {stack.metadata.name}: merge into /etc/rancher/k3s/config.yaml\n"
        "# (or drop into /etc/rancher/k3s/config.yaml.d/) on every node, then restart K3s.\n"
        "# Agents skip the server-only keys with a warning.\n"
    )
    return header + (dump(config) if config else "{}\n")


def kubeadm_config(stack: GpuStack, gates: Gates) -> str:
    cluster: dict[str, object] = {"apiVersion": "kubeadm.k8s.io/v1beta4", "kind": "ClusterConfiguration"}
    for component, section in KUBEADM_SECTIONS.items():
        if gates[component]:
            cluster[section] = {"extraArgs": [{"name": "feature-gates", "value": gate_flag(gates[component])}]}
    kubelet: dict[str, object] = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration"}
    if gates["kubelet"]:
        kubelet["featureGates"] = gates["kubelet"]
    header = (
        f"# kubeadm configuration of stack {stack.metadata.name} (Kubernetes {stack.spec.cluster.kubernetesVersion}):\n"
        "# `kubeadm init --config kubeadm-config.yaml`, or merge into your own configuration.\n"
    )
    return header + dump_all([cluster, kubelet])


def config_files(stack: GpuStack, gates: Gates) -> dict[str, str]:
    """``cluster/…`` files of the tree (paths relative to the stack's output folder)."""
    if stack.spec.cluster.distribution == "k3s":
        return {"cluster/config.yaml": k3s_config(stack, gates)}
    return {"cluster/kubeadm-config.yaml": kubeadm_config(stack, gates)}
