"""The stack README's host steps: what runs on the nodes before any chart, in order.

OS and driver → container toolkit → held packages → containerd's nvidia runtime → Kubernetes
(K3s or kubeadm, with the rendered ``cluster/`` files in place before the first start) → pool
labels and taints. Every command is a line of a ``bash`` block, with the versions of the spec;
a value only the reader has (a join token, a node name) is a quoted shell variable to fill in.
Ubuntu nodes with apt are assumed, as the driver packages are Ubuntu's.
"""

from __future__ import annotations

import shlex
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from gpustack.render.components.gpu_operator import K3S_CONTAINERD_CONFIG
from gpustack.render.stackfiles import cluster_config
from gpustack.spec.models import GpuStack
from gpustack.spec.models.cluster import NodePool, SystemPool, Taint

TOOLKIT_GUIDE = "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html"
TOOLKIT_KEYRING = "/usr/share/keyrings/nvidia-container-toolkit-keyring.gpg"
# The four packages NVIDIA's install guide pins to one version.
TOOLKIT_PACKAGES = ("nvidia-container-toolkit", "nvidia-container-toolkit-base", "libnvidia-container-tools", "libnvidia-container1")
K3S_DOCS = "https://docs.k3s.io/advanced#nvidia-container-runtime-support"
KUBEADM_INSTALL = "https://kubernetes.io/docs/setup/production-environment/tools/kubeadm/install-kubeadm/"
KUBERNETES_KEYRING = "/etc/apt/keyrings/kubernetes-apt-keyring.gpg"
OPERATOR_PRECOMPILED = "https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/precompiled-drivers.html"
# Every installed package with nvidia in its name: the driver's (nvidia-*, libnvidia-*) and the toolkit's.
HOLD_NVIDIA = (
    "sudo apt-mark hold $(dpkg-query -W -f='${db:Status-Abbrev} ${Package}\\n' '*nvidia*' "
    "| awk '$1 == \"ii\" {print $2}')"
)
JOIN_VARIABLES = "'$CONTROL_PLANE_ENDPOINT $JOIN_TOKEN $CA_CERT_HASH'"

Pool = NodePool | SystemPool


@dataclass(frozen=True)
class Step:
    """One numbered host step: on which nodes, the commands, then what to check or know."""

    title: str
    where: str
    commands: tuple[str, ...] = ()
    after: str = ""


def steps(stack: GpuStack) -> list[Step]:
    spec = stack.spec
    result = _operator_driver_steps(stack) + _driver_steps(spec.nodePools)
    if not spec.gpuOperator.enabled:
        result += _toolkit_steps(spec.nodePools)
    if any(p.driver.source == "host" for p in spec.nodePools):
        result.append(_hold_step(stack))
    if spec.cluster.distribution == "k3s":
        result += [_k3s_containerd_step(stack), *_k3s_steps(stack)]
    else:
        result += [_containerd_step(stack), *_kubeadm_steps(stack)]
    labelled = _labels_step(stack)
    return result + ([labelled] if labelled else [])


def markdown(stack: GpuStack) -> list[str]:
    """The "Host steps" section: one numbered heading per step, its commands in a bash block."""
    lines = [
        "## Host steps",
        "",
        "On the nodes, in this order, before the apply order below. Commands that name a file of this "
        "folder run from a copy of it on the node.",
    ]
    for number, step in enumerate(steps(stack), start=1):
        lines += ["", f"### {number}. {step.title}", "", f"{step.where}{':' if step.commands else '.'}"]
        if step.commands:
            lines += ["", "```bash", *step.commands, "```"]
        if step.after:
            lines += ["", step.after]
    return lines


# --- driver -------------------------------------------------------------------------------


def _operator_driver_steps(stack: GpuStack) -> list[Step]:
    pools = [p for p in stack.spec.nodePools if p.driver.source == "operator"]
    if not pools:
        return []
    return [
        Step(
            "Nodes for the GPU Operator's driver container",
            f"On each node of {_pools(pools)}",
            ("mokutil --sb-state", 'apt-cache policy "linux-headers-$(uname -r)"'),
            "Secure Boot must be off (`mokutil`, of the package of that name, prints `SecureBoot disabled` or finds "
            "no EFI variables): the driver container "
            "compiles the kernel module on the node when it starts and loads it unsigned, which a Secure Boot "
            "kernel refuses. The container installs the kernel headers of the running kernel (`uname -r`) and a "
            "compiler from the distribution's package mirrors, so the headers package must have a candidate "
            "there: keep the nodes on a kernel the mirrors still carry. `helm/gpu-operator.values.yaml` leaves "
            "`driver.usePrecompiled` at the chart's `false`; precompiled driver images skip the compilation but "
            "exist only for "
            f"some Ubuntu kernels ({OPERATOR_PRECOMPILED}). Every GPU node pulls the operator's images from "
            "nvcr.io (driver, toolkit, device plugin, DCGM Exporter, validator): let it reach nvcr.io or a mirror "
            "of it. Install no NVIDIA driver on these nodes yourself.",
        )
    ]


def _driver_steps(pools: Sequence[NodePool]) -> list[Step]:
    by_version: dict[str | None, list[NodePool]] = defaultdict(list)
    for pool in pools:
        if pool.driver.source == "host":
            by_version[pool.driver.version].append(pool)
    return [_driver_step(version, group) for version, group in sorted(by_version.items(), key=lambda v: v[0] or "")]


def _driver_step(version: str | None, pools: list[NodePool]) -> Step:
    if version is None:
        install = "sudo ubuntu-drivers install"
        which = (
            "the driver `ubuntu-drivers devices` recommends; set the pools' `driver.version` to pin a branch or "
            "release"
        )
    else:
        branch = version.split(".")[0]
        package = f"nvidia-driver-{branch}-open"
        # A release pins the package's upstream version (Ubuntu adds its own revision after the dash).
        install = f"sudo apt-get install -y {shlex.quote(f'{package}={version}-*') if '.' in version else package}"
        which = f"Ubuntu's `{package}`" + (f" at {version}" if "." in version else f", branch {branch}")
    return Step(
        f"NVIDIA driver{f' {version}' if version else ''}",
        f"On each node of {_pools(pools)}",
        ("sudo apt-get update", install, "sudo reboot"),
        f"This installs {which}, built by DKMS for the running kernel and again on each kernel update "
        "(`dkms status` lists the builds). After the reboot `nvidia-smi` lists the GPUs and `lsmod | grep "
        "nouveau` prints nothing (the package blacklists nouveau). With Secure Boot on (`mokutil --sb-state`) "
        "the kernel loads the module only when it is signed by a key enrolled in the firmware (MOK); otherwise "
        "turn Secure Boot off.",
    )


# --- toolkit and held packages ------------------------------------------------------------


def _toolkit_steps(pools: Sequence[NodePool]) -> list[Step]:
    by_version: dict[str | None, list[NodePool]] = defaultdict(list)
    for pool in pools:
        by_version[pool.toolkit.version].append(pool)
    return [_toolkit_step(version, group) for version, group in sorted(by_version.items(), key=lambda v: v[0] or "")]


def _toolkit_step(version: str | None, pools: list[NodePool]) -> Step:
    if version is None:
        install = "sudo apt-get install -y nvidia-container-toolkit"
        pinned = "the newest release; set the pools' `toolkit.version` to pin one"
    else:
        install = "sudo apt-get install -y " + " ".join(f"{package}={version}-1" for package in TOOLKIT_PACKAGES)
        pinned = f"release {version}"
    commands = [
        "sudo apt-get update",
        "sudo apt-get install -y --no-install-recommends curl gnupg2",
        f"curl -fsSL https://nvidia.github.io/libnvidia-container/gpgkey | sudo gpg --dearmor -o {TOOLKIT_KEYRING}",
        "curl -s -L https://nvidia.github.io/libnvidia-container/stable/deb/nvidia-container-toolkit.list "
        f"| sed 's#deb https://#deb [signed-by={TOOLKIT_KEYRING}] https://#g' "
        "| sudo tee /etc/apt/sources.list.d/nvidia-container-toolkit.list",
        "sudo apt-get update",
        install,
    ]
    modes = sorted({p.toolkit.mode for p in pools})
    for mode in modes:
        commands += _mode_commands(mode, pools if len(modes) > 1 else [])
    return Step(
        f"NVIDIA Container Toolkit{f' {version}' if version else ''}",
        f"On each node of {_pools(pools)}",
        tuple(commands),
        f"NVIDIA's package repository and the toolkit's packages at {pinned} ({TOOLKIT_GUIDE}). Mode "
        + "; ".join(f"{mode}: {_MODE_TEXT[mode]}" for mode in modes)
        + ".",
    )


_MODE_TEXT = {
    "auto": "nothing to set (toolkit 1.20 resolves it to just-in-time CDI where NVML finds the GPUs, earlier "
    "releases to the legacy hook)",
    "legacy": "the OCI hook, set in /etc/nvidia-container-runtime/config.toml",
    "cdi": "CDI specs generated into /etc/cdi, mode set in /etc/nvidia-container-runtime/config.toml",
}


def _mode_commands(mode: str, only: list[NodePool]) -> list[str]:
    commands = {
        "auto": [],
        "legacy": ["sudo nvidia-ctk config --in-place --set nvidia-container-runtime.mode=legacy"],
        "cdi": [
            "sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml",
            "sudo nvidia-ctk config --in-place --set nvidia-container-runtime.mode=cdi",
        ],
    }[mode]
    names = [p.name for p in only if p.toolkit.mode == mode]
    if commands and names:
        return [f"# nodes of {', '.join(names)} only:", *commands]
    return commands


def _hold_step(stack: GpuStack) -> Step:
    host = [p for p in stack.spec.nodePools if p.driver.source == "host"]
    what = "driver" if stack.spec.gpuOperator.enabled else "driver and toolkit"
    return Step(
        f"Hold the {what} packages",
        f"On each node of {_pools(host)}",
        (HOLD_NVIDIA, "apt-mark showhold"),
        "Held packages stay at their version through `apt-get upgrade` and unattended-upgrades: a new driver "
        "under a running one breaks NVML (`Driver/library version mismatch`) until the node reboots. Upgrade "
        "deliberately, a node at a time: drain it, `sudo apt-mark unhold` the packages, install, hold again, "
        "reboot.",
    )


# --- containerd ---------------------------------------------------------------------------


def _k3s_containerd_step(stack: GpuStack) -> Step:
    toolkit = (
        "The GPU Operator's toolkit installs it under /usr/local/nvidia/toolkit once the operator runs, and K3s "
        "registers it again on each start."
        if stack.spec.gpuOperator.enabled
        else "So the toolkit goes on before K3s (or K3s restarts after it)."
    )
    return Step(
        "containerd runtime nvidia",
        "Nothing to run: K3s brings its own containerd",
        (),
        _sentences(
            "K3s finds `nvidia-container-runtime` when it starts and adds the `nvidia` runtime to "
            f"{K3S_CONTAINERD_CONFIG} and RuntimeClass `nvidia` to the cluster ({K3S_DOCS}): apply no "
            "RuntimeClass of your own.",
            toolkit,
            "config.toml is rewritten on every start: custom settings go into a template next to it, "
            "`config-v3.toml.tmpl` with containerd 2 (K3s ≥ v1.31.6), `config.toml.tmpl` before.",
        ),
    )


def _containerd_step(stack: GpuStack) -> Step:
    commands = [
        "sudo apt-get update",
        "sudo apt-get install -y containerd",
        "sudo mkdir -p /etc/containerd",
        "containerd config default | sudo tee /etc/containerd/config.toml > /dev/null",
        "sudo sed -i 's/SystemdCgroup = false/SystemdCgroup = true/' /etc/containerd/config.toml",
        "sudo systemctl restart containerd",
    ]
    after = (
        "kubeadm's kubelet uses the systemd cgroup driver, so containerd's runc does too (`SystemdCgroup`). "
    )
    if stack.spec.gpuOperator.enabled:
        after += (
            "On GPU nodes the GPU Operator's toolkit adds the `nvidia` runtime (drop-in "
            "/etc/containerd/conf.d/99-nvidia.toml) and creates RuntimeClass `nvidia`: nothing more to run."
        )
        where = "On every node"
    else:
        default = " --set-as-default" if stack.spec.cluster.nvidiaDefaultRuntime else ""
        commands += [
            "# GPU nodes only:",
            f"sudo nvidia-ctk runtime configure --runtime=containerd{default}",
            "sudo systemctl restart containerd",
        ]
        after += (
            "On GPU nodes `nvidia-ctk` writes the `nvidia` runtime to /etc/containerd/conf.d/99-nvidia.toml and "
            "imports it from /etc/containerd/config.toml, containerd 1.x and 2.x alike"
            + (" (and makes it the default runtime)" if default else "")
            + "; RuntimeClass `nvidia` comes with `manifests/runtime.yaml` in the apply order."
        )
        where = "On every node (the nvidia runtime on GPU nodes)"
    return Step("containerd and its nvidia runtime", where, tuple(commands), after)


# --- Kubernetes ---------------------------------------------------------------------------


def _k3s_steps(stack: GpuStack) -> list[Step]:
    cluster_spec = stack.spec.cluster
    minor = cluster_spec.kubernetesVersion
    version = (
        f"INSTALL_K3S_VERSION={cluster_spec.k3sVersion}"
        if cluster_spec.k3sVersion
        else f"INSTALL_K3S_CHANNEL=v{minor}"
    )
    pools = _all_pools(stack)
    single = len(pools) == 1 and pools[0].count == 1
    server_flags = _k3s_flags(pools[0]) if single else ""
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
        _sentences(
            "The install script starts K3s as the systemd service `k3s`; the `grep` shows the `nvidia` runtime K3s "
            "found.",
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
                f"sh -s - agent{_k3s_flags(pool)}",
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


def _k3s_flags(pool: Pool) -> str:
    flags = [f"--node-label {shlex.quote(f'{k}={v}')}" for k, v in pool.labels.items()]
    flags += [f"--node-taint {shlex.quote(_taint(t))}" for t in pool.taints]
    return "".join(f" {flag}" for flag in flags)


def _kubeadm_steps(stack: GpuStack) -> list[Step]:
    spec = stack.spec.cluster
    minor = spec.kubernetesVersion
    repo = f"https://pkgs.k8s.io/core:/stable:/v{minor}/deb/"
    tools = ("kubelet", "kubeadm", "kubectl")
    if spec.kubeadmVersion:
        patch = spec.kubeadmVersion.removeprefix("v")
        install = "sudo apt-get install -y " + " ".join(shlex.quote(f"{tool}={patch}-*") for tool in tools)
    else:
        install = "sudo apt-get install -y " + " ".join(tools)
    packages = Step(
        f"kubeadm, kubelet and kubectl {spec.kubeadmVersion or f'v{minor}'}",
        "On every node",
        (
            "sudo swapoff -a",
            "sudo sed -i '/\\sswap\\s/ s/^/#/' /etc/fstab",
            "echo 'net.ipv4.ip_forward = 1' | sudo tee /etc/sysctl.d/k8s.conf",
            "sudo sysctl --system",
            "sudo apt-get install -y apt-transport-https ca-certificates curl gpg",
            "sudo mkdir -p -m 755 /etc/apt/keyrings",
            f"curl -fsSL {repo}Release.key | sudo gpg --dearmor -o {KUBERNETES_KEYRING}",
            f"echo 'deb [signed-by={KUBERNETES_KEYRING}] {repo} /' | sudo tee /etc/apt/sources.list.d/kubernetes.list",
            "sudo apt-get update",
            install,
            "sudo apt-mark hold kubelet kubeadm kubectl",
            "sudo systemctl enable --now kubelet",
        ),
        _sentences(
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
            "sudo kubeadm init --config cluster/kubeadm-config.yaml",
            'mkdir -p "$HOME/.kube"',
            'sudo cp /etc/kubernetes/admin.conf "$HOME/.kube/config"',
            'sudo chown "$(id -u):$(id -g)" "$HOME/.kube/config"',
        ),
        f"Then install the pod network (CNI) for the pod subnet {spec.podSubnet or cluster_config.KUBEADM_POD_SUBNET} "
        "before the nodes join. On an existing cluster, carry the file's feature gates and metrics addresses "
        "into /etc/kubernetes/manifests, the kube-proxy ConfigMap and every kubelet's configuration instead.",
    )
    pools = _all_pools(stack)
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
    return [packages, init, join]


# --- labels and taints --------------------------------------------------------------------


def _labels_step(stack: GpuStack) -> Step | None:
    pools = [p for p in _all_pools(stack) if p.labels or p.taints]
    if not pools:
        return None
    how = (
        "its JoinConfiguration" if stack.spec.cluster.distribution == "kubeadm" else "the K3s flags above"
    )
    commands = ["NODE='name of the node'"]
    for pool in pools:
        commands.append(f"# a node of {pool.name}:")
        if pool.labels:
            labels = " ".join(shlex.quote(f"{k}={v}") for k, v in pool.labels.items())
            commands.append(f'kubectl label node "$NODE" {labels} --overwrite')
        commands += [f'kubectl taint node "$NODE" {shlex.quote(_taint(t))} --overwrite' for t in pool.taints]
    return Step(
        "Pool labels and taints",
        "From a machine with kubectl, for a node that joined without them",
        tuple(commands),
        f"Each node gets its pool's labels and taints when it registers, from {how}; the kubelet never "
        "changes them afterwards. Nodes added another way get them here, before the charts schedule onto them. "
        "Check: `kubectl get nodes --show-labels`.",
    )


# --- helpers ------------------------------------------------------------------------------


def _all_pools(stack: GpuStack) -> list[Pool]:
    return [*stack.spec.nodePools, *stack.spec.systemPools]


def _pools(pools: Iterable[Pool]) -> str:
    names = [f"`{p.name}`" for p in pools]
    return ("pool " if len(names) == 1 else "pools ") + ", ".join(names)


def _sentences(*sentences: str) -> str:
    return " ".join(s for s in sentences if s)


def _taint(taint: Taint) -> str:
    key = taint.key if taint.value is None else f"{taint.key}={taint.value}"
    return f"{key}:{taint.effect}"
