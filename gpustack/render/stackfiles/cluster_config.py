"""Cluster configuration files: feature gates and the default runtime, per distribution.

Written after every component has contributed, because the gates are the union of what the
components need (``Contribution.feature_gates``) and the user's ``cluster.featureGates``.
K3s: ``cluster/config.yaml`` for /etc/rancher/k3s. kubeadm: ``cluster/kubeadm-config.yaml``, a
ClusterConfiguration (v1beta4, ``extraArgs`` as name/value lists: version, pod subnet, gates,
control-plane metrics addresses, endpoint), a KubeletConfiguration, plus one
``cluster/join-<pool>.yaml`` JoinConfiguration per pool with its taints and labels.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from gpustack.errors import GpustackError
from gpustack.render.component import GATE_COMPONENTS
from gpustack.render.components import control_plane
from gpustack.render.stackfiles import cni, pod_security_admission
from gpustack.spec.control_plane_checks import CONTROL_PLANE_JOIN
from gpustack.spec.models import GpuStack
from gpustack.spec.models.cluster import NodePool, SystemPool, Taint
from gpustack.spec.partitioning import registered_labels
from gpustack.yamlio import dump, dump_all

Gates = dict[str, dict[str, bool]]

K3S_ARGS = {
    "apiserver": "kube-apiserver-arg",
    "controller-manager": "kube-controller-manager-arg",
    "scheduler": "kube-scheduler-arg",
    "kubelet": "kubelet-arg",
}
KUBEADM_API = "kubeadm.k8s.io/v1beta4"
# The pod subnet when the spec names none (Flannel's default network, which Talos also takes).
KUBEADM_POD_SUBNET = "10.244.0.0/16"
KUBEADM_SECTIONS = {"apiserver": "apiServer", "controller-manager": "controllerManager", "scheduler": "scheduler"}


def merge_gates(
    contributed: Iterable[Mapping[str, Mapping[str, bool]]], user: Mapping[str, bool], *, minor: int
) -> Gates:
    """Gates per component: what components need, then the user's ``cluster.featureGates``.

    User gates follow the same rule as the components' (``featuregates``): a known
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
    for key, args in control_plane.k3s_args(stack).items():
        config[key] = [*config.get(key, []), *args]  # type: ignore[misc]
    if stack.spec.cluster.podSubnet:
        config["cluster-cidr"] = stack.spec.cluster.podSubnet
    if stack.spec.cluster.nvidiaDefaultRuntime:
        config["default-runtime"] = "nvidia"
    header = (
        f"# K3s configuration of stack {stack.metadata.name}: /etc/rancher/k3s/config.yaml on every node\n"
        "# before K3s first starts (or drop it into /etc/rancher/k3s/config.yaml.d/ and restart K3s).\n"
        "# Agents skip the server-only keys with a warning.\n"
    )
    return header + (dump(config) if config else "{}\n")


# Filled in with envsubst by the README's init step where the spec leaves them out.
ENDPOINT_VARIABLE = "CONTROL_PLANE_ENDPOINT"
VERSION_VARIABLE = "KUBERNETES_VERSION"
# The key that encrypts the control-plane certificates `kubeadm init --upload-certs` stores in the
# kubeadm-certs Secret, and that `kubeadm join --control-plane` decrypts them with:
# https://kubernetes.io/docs/setup/production-environment/tools/kubeadm/high-availability/#steps-for-the-first-control-plane-node
CERTIFICATE_KEY_VARIABLE = "CERTIFICATE_KEY"
# Beside the pools' join files: a pool of that name is refused (control_plane_checks).
CONTROL_PLANE_JOIN_PATH = f"cluster/join-{CONTROL_PLANE_JOIN}.yaml"
# What the kubelet holds back from pods on every node (the KubeletConfiguration kubeadm shares with all
# nodes): https://kubernetes.io/docs/tasks/administer-cluster/reserve-compute-resources/. Without them a
# node's allocatable is its whole capacity, and pods can starve the kubelet, containerd and the GPU host
# daemons (nvidia-persistenced, Fabric Manager, DCGM) until the kernel's OOM killer picks a victim. Fixed
# sizes, since kubeadm gives every node the one KubeletConfiguration (its kubelet-config ConfigMap): enough
# for the kubelet, containerd and the host daemons of a node of ~100 pods, a small share of a GPU server,
# and half the CPU of kubeadm's smallest control-plane node (2 CPUs); not scaled to each node as GKE's
# formula is (https://cloud.google.com/kubernetes-engine/docs/concepts/plan-node-sizes), which would need
# a kubelet configuration patch per pool.
SYSTEM_RESERVED = {"cpu": "250m", "memory": "1Gi", "ephemeral-storage": "1Gi"}
KUBE_RESERVED = {"cpu": "250m", "memory": "1Gi", "ephemeral-storage": "1Gi"}
# The kubelet's defaults (k8s.io/kubernetes pkg/kubelet/eviction/defaults_linux.go), all listed since a
# partial evictionHard leaves the others unset (cmd/kubelet/app/server.go merges them only with
# mergeDefaultEvictionSettings, off by default), with memory.available raised from 100Mi so that the
# kubelet evicts pods before the kernel's OOM killer acts.
EVICTION_HARD = {
    "memory.available": "500Mi",
    "nodefs.available": "10%",
    "nodefs.inodesFree": "5%",
    "imagefs.available": "15%",
    "imagefs.inodesFree": "5%",
}


def control_plane_endpoint(stack: GpuStack) -> str:
    """The API server's stable host:port, in the ClusterConfiguration and every JoinConfiguration."""
    return stack.spec.cluster.controlPlaneEndpoint or f"${{{ENDPOINT_VARIABLE}}}"


def pod_subnet(stack: GpuStack) -> str:
    """kubeadm's networking.podSubnet: the controller manager allocates each node's podCIDR from it, and
    the CNI's kubernetes IPAM (``cni``) takes each node's."""
    return stack.spec.cluster.podSubnet or KUBEADM_POD_SUBNET


def kubeadm_version(stack: GpuStack) -> str:
    """ClusterConfiguration kubernetesVersion: an exact release, the spec's or the installed kubeadm's.

    Never ``stable-<minor>``: kubeadm resolves that label over the network when ``init`` runs, so
    two installs of one rendered stack could run different releases.
    """
    return stack.spec.cluster.kubeadmVersion or f"${{{VERSION_VARIABLE}}}"


def high_availability(stack: GpuStack) -> bool:
    """Several kubeadm control-plane nodes (``cluster.controlPlane.count``)."""
    return stack.spec.cluster.distribution == "kubeadm" and stack.spec.cluster.controlPlane.count > 1


def init_variables(stack: GpuStack) -> list[str]:
    """The variables of ``kubeadm-config.yaml`` that the README's init step fills in."""
    cluster = stack.spec.cluster
    variables = [name for name, given in ((VERSION_VARIABLE, cluster.kubeadmVersion),
                                          (ENDPOINT_VARIABLE, cluster.controlPlaneEndpoint)) if not given]
    return [*variables, CERTIFICATE_KEY_VARIABLE] if high_availability(stack) else variables


def kubeadm_config(stack: GpuStack, gates: Gates) -> str:
    documents: list[dict[str, object]] = []
    if high_availability(stack):
        documents.append({"apiVersion": KUBEADM_API, "kind": "InitConfiguration",
                          "certificateKey": f"${{{CERTIFICATE_KEY_VARIABLE}}}"})
    cluster: dict[str, object] = {
        "apiVersion": KUBEADM_API,
        "kind": "ClusterConfiguration",
        "kubernetesVersion": kubeadm_version(stack),
        "controlPlaneEndpoint": control_plane_endpoint(stack),
        "networking": {"podSubnet": pod_subnet(stack)},
    }
    etcd = control_plane.kubeadm_etcd_args(stack)
    if etcd:
        cluster["etcd"] = {"local": {"extraArgs": etcd}}
    bind = control_plane.kubeadm_bind_args(stack)
    admission = pod_security_admission.api_server(stack)
    for component, section in KUBEADM_SECTIONS.items():
        args = [{"name": "feature-gates", "value": gate_flag(gates[component])}] if gates[component] else []
        args += bind.get(section, [])
        if section == "apiServer":
            args += admission.get("extraArgs", [])
        if args:
            cluster[section] = {"extraArgs": args}
    if admission:
        cluster["apiServer"] = {**cluster["apiServer"], "extraVolumes": admission["extraVolumes"]}  # type: ignore[dict-item]
    kubelet: dict[str, object] = {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "systemReserved": dict(SYSTEM_RESERVED),
        "kubeReserved": dict(KUBE_RESERVED),
        "evictionHard": dict(EVICTION_HARD),
    }
    if gates["kubelet"]:
        kubelet["featureGates"] = gates["kubelet"]
    documents += [cluster, kubelet]
    header = (
        f"# kubeadm configuration of stack {stack.metadata.name} (Kubernetes {stack.spec.cluster.kubernetesVersion}):\n"
        "# `kubeadm init --config kubeadm-config.yaml` on the first control-plane node.\n"
    )
    # The header belongs to the first document: kubeadm refuses a document of comments alone ("kind and
    # apiVersion is mandatory", SplitConfigDocuments in cmd/kubeadm/app/util/marshal.go).
    return header + dump_all(documents).removeprefix("---\n")


def join_config(stack: GpuStack, pool: NodePool | SystemPool) -> str:
    """A JoinConfiguration for the nodes of one pool: its taints and labels from the first start.

    The discovery values are left as shell variables for ``envsubst``: `kubeadm token create
    --print-join-command` on a control-plane node prints them.
    """
    registration: dict[str, object] = {"taints": [_taint(t) for t in pool.taints]}
    registered = registered_labels(stack, pool)
    if registered:
        labels = ",".join(f"{key}={value}" for key, value in registered.items())
        registration["kubeletExtraArgs"] = [{"name": "node-labels", "value": labels}]
    join = {"apiVersion": KUBEADM_API, "kind": "JoinConfiguration", "discovery": _discovery(stack),
            "nodeRegistration": registration}
    header = (
        f"# kubeadm JoinConfiguration of pool {pool.name} (stack {stack.metadata.name}). On each of its nodes:\n"
        "#   CONTROL_PLANE_ENDPOINT=host:6443 JOIN_TOKEN=... CA_CERT_HASH=sha256:... \\\n"
        f"#     envsubst < join-{pool.name}.yaml > /tmp/join.yaml && kubeadm join --config /tmp/join.yaml\n"
        "# (`kubeadm token create --print-join-command` on a control-plane node prints the three values).\n"
    )
    return header + dump(join)


def join_control_plane_config(stack: GpuStack) -> str:
    """The JoinConfiguration of the further control-plane nodes: ``controlPlane`` with the certificate key.

    ``nodeRegistration`` is left out, so kubeadm registers them with its control-plane taint, as
    the first one.
    """
    join = {
        "apiVersion": KUBEADM_API,
        "kind": "JoinConfiguration",
        "discovery": _discovery(stack),
        "controlPlane": {"certificateKey": f"${{{CERTIFICATE_KEY_VARIABLE}}}"},
    }
    header = (
        f"# kubeadm JoinConfiguration of the further control-plane nodes (stack {stack.metadata.name}), filled in\n"
        "# with envsubst by the README's step, then `kubeadm join --config join-control-plane.yaml` on each.\n"
    )
    return header + dump(join)


def _discovery(stack: GpuStack) -> dict[str, object]:
    """A join's discovery, left as shell variables that ``kubeadm token create --print-join-command`` fills in."""
    return {
        "bootstrapToken": {
            "apiServerEndpoint": control_plane_endpoint(stack),
            "token": "${JOIN_TOKEN}",
            "caCertHashes": ["${CA_CERT_HASH}"],
        }
    }


def _taint(taint: Taint) -> dict[str, str]:
    result = {"key": taint.key}
    if taint.value is not None:
        result["value"] = taint.value
    result["effect"] = taint.effect
    return result


def config_files(stack: GpuStack, gates: Gates) -> dict[str, str]:
    """``cluster/…`` files of the tree (paths relative to the stack's output folder)."""
    if stack.spec.cluster.distribution == "k3s":
        return {"cluster/config.yaml": k3s_config(stack, gates)}
    files = {"cluster/kubeadm-config.yaml": kubeadm_config(stack, gates), **cni.files(stack)}
    for pool in [*stack.spec.nodePools, *stack.spec.systemPools]:
        files[join_path(pool.name)] = join_config(stack, pool)
    if high_availability(stack):
        files[CONTROL_PLANE_JOIN_PATH] = join_control_plane_config(stack)
    if pod_security_admission.enabled(stack):
        files[pod_security_admission.PATH] = pod_security_admission.admission_config(stack)
    return files


def join_path(pool: str) -> str:
    return f"cluster/join-{pool}.yaml"
