"""The stack README's host steps: what runs on the nodes before any chart, in order.

OS and driver → container toolkit → held packages → containerd's nvidia runtime → Kubernetes
(K3s or kubeadm, with the rendered ``cluster/`` files in place before the first start) → pool
labels and taints. Every command is a line of a ``bash`` block, with the versions of the spec;
a value only the reader has (a join token, a node name) is a quoted shell variable to fill in.
Ubuntu 24.04 LTS nodes with apt are assumed (``host_os``). This module orders the steps and
builds those of the node itself (toolkit, held packages, containerd; the driver's in
``nvidia_driver``); ``kubernetes_steps`` builds the cluster's. Talos nodes take talosctl steps instead
(``talos_steps``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection

from gpustack.render import gpu_isolation
from gpustack.render.components.gpu_operator import K3S_CONTAINERD_CONFIG
from gpustack.render.stackfiles import fabric_manager, host_os, kubernetes_steps, nvidia_driver, talos_steps
from gpustack.render.stackfiles.step import Step, pool_list, sentences, step_markdown
from gpustack.spec.models import GpuStack
from gpustack.spec.models.cluster import NodePool
from gpustack.spec.pool_checks import CONTAINERD_2_TOOLKIT, TOOLKIT_RELEASE_NOTES

TOOLKIT_GUIDE = "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html"
TOOLKIT_KEYRING = "/usr/share/keyrings/nvidia-container-toolkit-keyring.gpg"
# The four packages NVIDIA's install guide pins to one version.
TOOLKIT_PACKAGES = ("nvidia-container-toolkit", "nvidia-container-toolkit-base", "libnvidia-container-tools", "libnvidia-container1")
K3S_DOCS = "https://docs.k3s.io/advanced#nvidia-container-runtime-support"
# containerd 2.2 from Docker's apt repository (https://docs.docker.com/engine/install/ubuntu/):
# Kubernetes 1.35 is the last release to support containerd 1.x, and Ubuntu 24.04 ships 1.7.
CONTAINERD_RELEASE = "2.2.1"
DOCKER_KEYRING = "/etc/apt/keyrings/docker.asc"
K8S_135_CONTAINERD = "https://kubernetes.io/blog/2025/12/17/kubernetes-v1-35-release/"
CONTAINERD_RELEASES = "https://containerd.io/releases/#kubernetes-support"
CONTAINERD_23 = "https://github.com/NVIDIA/cloud-native-docs/issues/434"
# containerd 2's default prints `SystemdCgroup = false` in runc's options (containerd
# internal/cri/config/config_unix.go, DefaultRuntimeConfig; restored by containerd#12244).
SYSTEMD_CGROUP_SED = "s/SystemdCgroup = false/SystemdCgroup = true/"
OPERATOR_PRECOMPILED = "https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/precompiled-drivers.html"
# Every installed package with nvidia in its name: the driver's (nvidia-*, libnvidia-*) and the toolkit's.
HOLD_NVIDIA = (
    "sudo apt-mark hold $(dpkg-query -W -f='${db:Status-Abbrev} ${Package}\\n' '*nvidia*' "
    "| awk '$1 == \"ii\" {print $2}')"
)


def steps(stack: GpuStack, paths: Collection[str] = ()) -> list[Step]:
    """The steps in order; ``paths``: the files of the tree, which Talos's steps name."""
    spec = stack.spec
    if spec.cluster.distribution == "talos":
        return talos_steps.steps(stack, paths)
    result = _operator_driver_steps(stack) + _driver_steps(stack) + fabric_manager.steps(stack)
    if not spec.gpuOperator.enabled:
        result += _toolkit_steps(stack)
    if any(p.driver.source == "host" for p in spec.nodePools):
        result.append(_hold_step(stack))
    if spec.cluster.distribution == "k3s":
        result += [_k3s_containerd_step(stack), *kubernetes_steps.k3s_steps(stack)]
    else:
        result += [_containerd_step(stack), *kubernetes_steps.kubeadm_steps(stack)]
    labelled = kubernetes_steps.labels_step(stack)
    return result + ([labelled] if labelled else [])


def markdown(stack: GpuStack, paths: Collection[str] = ()) -> list[str]:
    """The "Host steps" section: one numbered heading per step, its commands in a bash block."""
    intro = (
        "From a machine with talosctl, in this order, before the apply order below (Talos nodes have no shell). "
        "Commands that name a file of this folder run from a copy of it there."
        if stack.spec.cluster.distribution == "talos"
        else f"On the nodes, {host_os.NAME} on amd64, in this order, before the apply order below. Commands that "
        "name a file of this folder run from a copy of it on the node."
    )
    lines = ["## Host steps", "", intro]
    for number, step in enumerate(steps(stack, paths), start=1):
        lines += step_markdown(f"{number}. {step.title}", step)
    return lines


# --- driver -------------------------------------------------------------------------------


def _operator_driver_steps(stack: GpuStack) -> list[Step]:
    pools = [p for p in stack.spec.nodePools if p.driver.source == "operator"]
    if not pools:
        return []
    return [
        Step(
            "Nodes for the GPU Operator's driver container",
            f"On each node of {pool_list(pools)}",
            ("mokutil --sb-state", 'apt-cache policy "linux-headers-$(uname -r)"'),
            sentences(
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
                fabric_manager.operator_note(pools),
            ),
        )
    ]


def _driver_steps(stack: GpuStack) -> list[Step]:
    return nvidia_driver.steps([p for p in stack.spec.nodePools if p.driver.source == "host"])


# --- toolkit and held packages ------------------------------------------------------------


def _toolkit_steps(stack: GpuStack) -> list[Step]:
    by_version: dict[str | None, list[NodePool]] = defaultdict(list)
    for pool in stack.spec.nodePools:
        by_version[pool.toolkit.version].append(pool)
    isolation = _isolation(stack)
    return [_toolkit_step(version, group, isolation)
            for version, group in sorted(by_version.items(), key=lambda v: v[0] or "")]


def _isolation(stack: GpuStack) -> tuple[list[str], str]:
    """The ``nvidia-ctk config`` command that keeps unprivileged containers to the GPUs they were
    given, and its sentence (gpustack/render/gpu_isolation.py); none when the spec opts out. The
    device plugins here (NVIDIA's, HAMi's) hand GPUs over as volume mounts."""
    settings = gpu_isolation.toolkit_settings(stack)
    if not settings:
        return [], ""
    flags = " ".join(f"--set {key}={str(value).lower()}" for key, value in settings.items())
    text = (
        f" `{gpu_isolation.ENVVAR_KEY}=false` makes the toolkit ignore `NVIDIA_VISIBLE_DEVICES` in containers "
        "without CAP_SYS_ADMIN, so a pod cannot name every GPU of the node with it"
        + (
            f"; `{gpu_isolation.MOUNTS_KEY}=true` takes the GPUs the device plugin allocated from its volume mounts"
            if gpu_isolation.MOUNTS_KEY in settings
            else ""
        )
        + " (set `cluster.acceptVisibleDevicesEnvvar: true` to keep the toolkit's default)."
    )
    return [f"sudo nvidia-ctk config --in-place {flags}"], text


def _toolkit_step(version: str | None, pools: list[NodePool], isolation: tuple[list[str], str]) -> Step:
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
    isolating, why = isolation
    return Step(
        f"NVIDIA Container Toolkit{f' {version}' if version else ''}",
        f"On each node of {pool_list(pools)}",
        (*commands, *isolating),
        f"NVIDIA's package repository and the toolkit's packages at {pinned} ({TOOLKIT_GUIDE}). Mode "
        + "; ".join(f"{mode}: {_MODE_TEXT[mode]}" for mode in modes)
        + "."
        + why,
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
    what = "driver and kernel" if stack.spec.gpuOperator.enabled else "driver, toolkit and kernel"
    return Step(
        f"Hold the {what} packages",
        f"On each node of {pool_list(host)}",
        (HOLD_NVIDIA, nvidia_driver.HOLD_KERNEL, "apt-mark showhold"),
        sentences(
            "Held packages stay at their version through `apt-get upgrade` and unattended-upgrades: a new driver "
            "under a running one breaks NVML (`Driver/library version mismatch`) until the node reboots.",
            nvidia_driver.hold_note(),
        ),
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
        sentences(
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
        "sudo apt-get install -y ca-certificates curl",
        "sudo install -m 0755 -d /etc/apt/keyrings",
        f"sudo curl -fsSL {host_os.DOCKER_REPOSITORY}/gpg -o {DOCKER_KEYRING}",
        f"echo 'deb [arch=amd64 signed-by={DOCKER_KEYRING}] {host_os.DOCKER_REPOSITORY} {host_os.CODENAME} stable' "
        "| sudo tee /etc/apt/sources.list.d/docker.list",
        "sudo apt-get update",
        f"sudo apt-get install -y 'containerd.io={CONTAINERD_RELEASE}-*'",
        "sudo apt-mark hold containerd.io",
        "sudo mkdir -p /etc/containerd",
        "containerd config default | sudo tee /etc/containerd/config.toml > /dev/null",
        f"sudo sed -i '{SYSTEMD_CGROUP_SED}' /etc/containerd/config.toml",
        "grep -q 'SystemdCgroup = true' /etc/containerd/config.toml",
        "sudo systemctl restart containerd",
    ]
    after = sentences(
        f"containerd {CONTAINERD_RELEASE} from Docker's apt repository ({host_os.DOCKER_INSTALL}: only its `containerd.io` "
        f"package, which brings runc), pinned and held. Kubernetes 1.35 is the last release that supports "
        f"containerd 1.x ({K8S_135_CONTAINERD}) and {host_os.NAME}'s own `containerd` is 1.7, so every "
        "Kubernetes release this renders gets containerd 2: a 1.35 cluster then moves to 1.36 without a runtime "
        f"change (containerd's Kubernetes support matrix: {CONTAINERD_RELEASES}). It stays on 2.2: containerd "
        f"2.3 writes config version 4, which the toolkit's `nvidia-ctk` does not read yet ({CONTAINERD_23}).",
        "containerd 2's configuration is version 3: `containerd config default` prints runc's "
        "`SystemdCgroup = false` under `[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]` "
        "and the `sed` sets it (the `grep` fails when it did not), since kubeadm's kubelet uses the systemd "
        "cgroup driver. CDI is on by default (`enable_cdi`, specs read from /etc/cdi and /var/run/cdi).",
    )
    if stack.spec.gpuOperator.enabled:
        after += (
            " On GPU nodes the GPU Operator's toolkit adds the `nvidia` runtime (drop-in "
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
            " On GPU nodes `nvidia-ctk` writes the `nvidia` runtime to /etc/containerd/conf.d/99-nvidia.toml, under "
            f"`io.containerd.cri.v1.runtime` as config version 3 wants it (toolkit {'.'.join(map(str, CONTAINERD_2_TOOLKIT))} "
            "and later: "
            f"{TOOLKIT_RELEASE_NOTES}), and imports it from /etc/containerd/config.toml"
            + (" (and makes it the default runtime)" if default else "")
            + "; RuntimeClass `nvidia` comes with `manifests/runtime.yaml` in the apply order."
        )
        where = "On every node (the nvidia runtime on GPU nodes)"
    return Step(f"containerd {CONTAINERD_RELEASE} and its nvidia runtime", where, tuple(commands), after)


# --- Kubernetes ---------------------------------------------------------------------------
