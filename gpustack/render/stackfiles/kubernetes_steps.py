"""The Kubernetes host steps of the stack README: K3s or kubeadm, the pools joining, their labels and taints.

K3s: its configuration, the server and one agent command per pool (labels and taints as
flags). kubeadm: the held packages of the spec's release, ``kubeadm init`` with the rendered
``cluster/`` file, and each pool's JoinConfiguration filled in from ``kubeadm token create``.
Last, the labels and taints of nodes that joined without them.
"""

from __future__ import annotations

import shlex

from gpustack.render.components.gpu_operator import K3S_CONTAINERD_CONFIG
from gpustack.render.stackfiles import cluster_config, cni, kubeadm_ha, pod_security_admission
from gpustack.render.stackfiles.step import Pool, Step, all_pools, sentences, taint_text
from gpustack.spec.models import GpuStack
from gpustack.spec.partitioning import registered_labels

KUBEADM_INSTALL = "https://kubernetes.io/docs/setup/production-environment/tools/kubeadm/install-kubeadm/"
KUBERNETES_KEYRING = "/etc/apt/keyrings/kubernetes-apt-keyring.gpg"
JOIN_VARIABLES = "'$CONTROL_PLANE_ENDPOINT $JOIN_TOKEN $CA_CERT_HASH'"


def k3s_steps(stack: GpuStack) -> list[Step]:
    cluster_spec = stack.spec.cluster
    minor = cluster_spec.kubernetesVersion
    version = (
        f"INSTALL_K3S_VERSION={cluster_spec.k3sVersion}"
        if cluster_spec.k3sVersion
        else f"INSTALL_K3S_CHANNEL=v{minor}"
    )
    pools = all_pools(stack)
    single = len(pools) == 1 and pools[0].count == 1
    server_flags = _k3s_flags(stack, pools[0]) if single else ""
    config = Step(
        "K3s configuration",
        "On every node, before K3s first starts",
        ("sudo mkdir -p /etc/rancher/k3s", "sudo cp cluster/config.yaml /etc/rancher/k3s/config.yaml"),
        "K3s reads the file only when it starts: on a node that already runs K3s, copy it and "
        "`sudo systemctl restart k3s` (`k3s-agent` on agents).",
    )
    server = Step(
        f"K3s {cluster_spec.k3sVersion or f'v{minor} (newest patch)'} server",
        "On the server" if not single else "On the node",
        (
            f"curl -sfL https://get.k3s.io | {version} sh -s - server{server_flags}",
            f"sudo grep -A2 nvidia {K3S_CONTAINERD_CONFIG}",
            "sudo k3s kubectl get runtimeclass nvidia",
        ),
        sentences(
            "The install script starts K3s as the systemd service `k3s`; the `grep` shows the `nvidia` runtime K3s "
            "found.",
            "K3s brings its pod network, Flannel (its default CNI), so the nodes need no CNI step.",
            "" if single else "If the server is also a node of a pool, add that pool's flags of the next step.",
            "" if cluster_spec.k3sVersion else "Set `cluster.k3sVersion` to pin the release.",
        ),
    )
    result = [config, server]
    if not single:
        address = cluster_spec.serverAddresses[0] if cluster_spec.serverAddresses else None
        commands = ["sudo cat /var/lib/rancher/k3s/server/node-token  # on the server", ""]
        commands.append(f"SERVER={address}" if address else "SERVER='address of the server'")
        commands.append("K3S_TOKEN='the token the server printed'")
        for pool in pools:
            commands += [
                f"# nodes of {pool.name}:",
                f'curl -sfL https://get.k3s.io | K3S_URL="https://$SERVER:6443" K3S_TOKEN="$K3S_TOKEN" {version} '
                f"sh -s - agent{_k3s_flags(stack, pool)}",
            ]
        result.append(
            Step(
                "K3s agents",
                "On each node of every pool, with the server's token",
                tuple(commands),
                "Each agent registers with its pool's labels and taints (`--node-label`, `--node-taint`) from "
                "its first start and runs as the service `k3s-agent`.",
            )
        )
    return result


def _k3s_flags(stack: GpuStack, pool: Pool) -> str:
    flags = [f"--node-label {shlex.quote(f'{k}={v}')}" for k, v in registered_labels(stack, pool).items()]
    flags += [f"--node-taint {shlex.quote(taint_text(t))}" for t in pool.taints]
    return "".join(f" {flag}" for flag in flags)


def kubernetes_repository(minor: str) -> str:
    """Kubernetes' apt repository of one minor release (pkgs.k8s.io carries one minor per repository)."""
    return f"https://pkgs.k8s.io/core:/stable:/v{minor}/deb/"


def apt_source(minor: str) -> str:
    """The command that points apt at ``minor``'s repository."""
    return (
        f"echo 'deb [signed-by={KUBERNETES_KEYRING}] {kubernetes_repository(minor)} /' "
        "| sudo tee /etc/apt/sources.list.d/kubernetes.list"
    )


def apt_install(tools: tuple[str, ...], release: str | None) -> str:
    """``apt-get install`` of Kubernetes' ``tools`` at ``release`` (``v1.36.3``), or unpinned."""
    if release is None:
        return "sudo apt-get install -y " + " ".join(tools)
    patch = release.removeprefix("v")
    return "sudo apt-get install -y " + " ".join(shlex.quote(f"{tool}={patch}-*") for tool in tools)


def kubeadm_steps(stack: GpuStack) -> list[Step]:
    spec = stack.spec.cluster
    minor = spec.kubernetesVersion
    repo = kubernetes_repository(minor)
    install = apt_install(("kubelet", "kubeadm", "kubectl"), spec.kubeadmVersion)
    packages = Step(
        f"kubeadm, kubelet and kubectl {spec.kubeadmVersion or f'v{minor}'}",
        "On every node",
        (
            "sudo swapoff -a",
            "sudo sed -i '/\\sswap\\s/ s/^/#/' /etc/fstab",
            # Bridged traffic must pass iptables (Kubernetes' container runtime prerequisites).
            "echo br_netfilter | sudo tee /etc/modules-load.d/k8s.conf",
            "sudo modprobe br_netfilter",
            "printf 'net.ipv4.ip_forward = 1\\nnet.bridge.bridge-nf-call-iptables = 1\\n' | sudo tee /etc/sysctl.d/k8s.conf",
            "sudo sysctl --system",
            "sudo apt-get install -y apt-transport-https ca-certificates curl gpg",
            "sudo mkdir -p -m 755 /etc/apt/keyrings",
            f"curl -fsSL {repo}Release.key | sudo gpg --dearmor -o {KUBERNETES_KEYRING}",
            apt_source(minor),
            "sudo apt-get update",
            install,
            "sudo apt-mark hold kubelet kubeadm kubectl",
            "sudo systemctl enable --now kubelet",
        ),
        sentences(
            f"The repository carries Kubernetes {minor} only, and the held packages stay at their release through "
            "`apt-get upgrade` and unattended-upgrades.",
            f"The kubelet does not start with swap on, and pods need IP forwarding ({KUBEADM_INSTALL}).",
            "" if spec.kubeadmVersion else "Set `cluster.kubeadmVersion` to pin the patch release.",
        ),
    )
    init = Step(
        "Control plane",
        "On the first control-plane node",
        (
            *_init_commands(stack),
            'mkdir -p "$HOME/.kube"',
            'sudo cp /etc/kubernetes/admin.conf "$HOME/.kube/config"',
            'sudo chown "$(id -u):$(id -g)" "$HOME/.kube/config"',
            *cni.commands(stack),
        ),
        _init_sentence(stack) + " " + cni.step_sentence(stack, cluster_config.pod_subnet(stack)) + " "
        "On an existing cluster, which has its CNI, skip both and carry the file's feature gates "
        "and metrics addresses into /etc/kubernetes/manifests, the kube-proxy ConfigMap and every kubelet's "
        "configuration instead.",
    )
    pools = all_pools(stack)
    names = " ".join(p.name for p in pools)
    commands = [
        "read -r _ _ CONTROL_PLANE_ENDPOINT _ JOIN_TOKEN _ CA_CERT_HASH < <(sudo kubeadm token create --print-join-command)",
        "export CONTROL_PLANE_ENDPOINT JOIN_TOKEN CA_CERT_HASH",
        f'for pool in {names}; do envsubst {JOIN_VARIABLES} < "cluster/join-$pool.yaml" > "join-$pool.yaml"; done',
    ]
    for pool in pools:
        commands += [f"# on each node of {pool.name}, with its file copied there:", f"sudo kubeadm join --config join-{pool.name}.yaml"]
    join = Step(
        "Join the pools",
        "On the control-plane node, then on each node",
        tuple(commands),
        "`kubeadm token create` prints the join command whose endpoint, token and CA hash fill in each pool's "
        f"JoinConfiguration ({', '.join(f'`{cluster_config.join_path(p.name)}`' for p in pools)}); the token is valid "
        "for 24 hours and the filled-in files hold it: delete them once the nodes have joined. Each node "
        "registers with its pool's taints and labels.",
    )
    return [packages, init, *kubeadm_ha.steps(stack), join]


def _init_commands(stack: GpuStack) -> tuple[str, ...]:
    variables = cluster_config.init_variables(stack)
    admission = pod_security_admission.install_command(stack)
    upload = kubeadm_ha.INIT_FLAGS if cluster_config.high_availability(stack) else ""
    if not variables:
        return (*admission, f"sudo kubeadm init --config cluster/kubeadm-config.yaml{upload}")
    exports = {
        cluster_config.VERSION_VARIABLE: '"$(kubeadm version -o short)"',
        cluster_config.ENDPOINT_VARIABLE: "'api.example.internal:6443'  # your DNS name or virtual IP, and port",
        cluster_config.CERTIFICATE_KEY_VARIABLE: kubeadm_ha.CERTIFICATE_KEY_EXPORT,
    }
    listed = " ".join(f"${name}" for name in variables)
    return (
        *admission,
        *(f"export {name}={exports[name]}" for name in variables),
        f"envsubst '{listed}' < cluster/kubeadm-config.yaml > kubeadm-config.yaml",
        f"sudo kubeadm init --config kubeadm-config.yaml{upload}",
    )


def _init_sentence(stack: GpuStack) -> str:
    cluster = stack.spec.cluster
    version = (
        ""
        if cluster.kubeadmVersion
        else f"`{cluster_config.VERSION_VARIABLE}` is the release of the kubeadm just installed and held, so the "
        "control plane runs exactly the kubelets' release (a `stable-<minor>` label would be resolved over the "
        "network when `kubeadm init` runs)."
    )
    if cluster.controlPlaneEndpoint:
        endpoint = (
            f"Every node reaches the API server at `{cluster.controlPlaneEndpoint}` (`cluster.controlPlaneEndpoint`), "
            "so more control-plane nodes can join behind it later."
        )
    else:
        endpoint = (
            f"`{cluster_config.ENDPOINT_VARIABLE}` is the API server's stable address (a DNS name or virtual IP in "
            "front of the control-plane nodes, with its port): kubeadm writes it into the API server's certificate "
            "and every kubeconfig, so a control plane started on one node's own address can never grow to several. "
            "Set `cluster.controlPlaneEndpoint` to render it in place."
        )
    return sentences(version, endpoint)


# --- labels and taints --------------------------------------------------------------------


def labels_step(stack: GpuStack) -> Step | None:
    pools = [p for p in all_pools(stack) if registered_labels(stack, p) or p.taints]
    if not pools:
        return None
    how = (
        "its JoinConfiguration" if stack.spec.cluster.distribution == "kubeadm" else "the K3s flags above"
    )
    commands = ["NODE='name of the node'"]
    for pool in pools:
        commands.append(f"# a node of {pool.name}:")
        registered = registered_labels(stack, pool)
        if registered:
            labels = " ".join(shlex.quote(f"{k}={v}") for k, v in registered.items())
            commands.append(f'kubectl label node "$NODE" {labels} --overwrite')
        commands += [f'kubectl taint node "$NODE" {shlex.quote(taint_text(t))} --overwrite' for t in pool.taints]
    return Step(
        "Pool labels and taints",
        "From a machine with kubectl, for a node that joined without them",
        tuple(commands),
        f"Each node gets its pool's labels and taints when it registers, from {how}; the kubelet never "
        "changes them afterwards. Nodes added another way get them here, before the charts schedule onto them. "
        "Check: `kubectl get nodes --show-labels`.",
    )
