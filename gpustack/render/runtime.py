"""The node layers under Kubernetes: driver, container toolkit, containerd's nvidia runtime.

Host-installed layers cannot be applied with kubectl, so they come back as README steps; the
one Kubernetes object is RuntimeClass ``nvidia``, emitted only where nobody else owns it: K3s
registers its own when it finds nvidia-container-runtime (seed 001 §5) and the GPU Operator
creates one (``operator.runtimeClass``, upstream-facts §2). Two owners would fight over it.
"""

from __future__ import annotations

from typing import Any

from gpustack.render.component import Contribution, RenderContext, add_object
from gpustack.spec.models import GpuStack, NodePool

RUNTIME_CLASS = "nvidia"
K3S_CONTAINERD = "/var/lib/rancher/k3s/agent/etc/containerd"


def owns_runtime_class(stack: GpuStack) -> bool:
    """Whether gpustack must create RuntimeClass nvidia (kubeadm without the GPU Operator)."""
    return stack.spec.cluster.distribution == "kubeadm" and not stack.spec.gpuOperator.enabled


def runtime_class() -> dict[str, Any]:
    return {
        "apiVersion": "node.k8s.io/v1",
        "kind": "RuntimeClass",
        "metadata": {"name": RUNTIME_CLASS},
        "handler": RUNTIME_CLASS,
    }


def driver_note(pools: list[NodePool]) -> str:
    names = ", ".join(f"`{p.name}`" for p in pools)
    versions = sorted({p.driver.version for p in pools if p.driver.version})
    branch = versions[0].split(".")[0] if len(versions) == 1 else "<branch>"
    # seed 001 §3: ubuntu-drivers recommends the -open package; DKMS rebuilds on kernel updates.
    return (
        f"Driver on pools {names} ({', '.join(versions) or 'version of your choice'}): "
        f"`apt-get install -y nvidia-driver-{branch}-open` (list with `ubuntu-drivers devices`), then reboot. "
        "DKMS rebuilds the module on each kernel update: after upgrades check `dkms status`. "
        "The package blacklists nouveau; confirm `lsmod | grep nouveau` prints nothing after the reboot. "
        "On physical machines disable Secure Boot or sign the module."
    )


def toolkit_note(pools: list[NodePool]) -> str:
    modes = {p.toolkit.mode for p in pools}
    steps = {
        "auto": "nothing to set (CDI when CDI specs exist, else the legacy hook)",
        "legacy": "`nvidia-ctk config --in-place --set nvidia-container-runtime.mode=legacy`",
        "cdi": "`nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml` and "
        "`nvidia-ctk config --in-place --set nvidia-container-runtime.mode=cdi`",
    }
    chosen = "; ".join(f"mode {mode}: {steps[mode]}" for mode in sorted(modes))
    return f"NVIDIA Container Toolkit on every GPU node: `apt-get install -y nvidia-container-toolkit`; {chosen} (https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html)."


def containerd_note(stack: GpuStack) -> str:
    spec = stack.spec
    if spec.cluster.distribution == "k3s":
        return (
            "containerd: K3s finds `nvidia-container-runtime` when it starts and adds the `nvidia` runtime to "
            f"{K3S_CONTAINERD}/config.toml and RuntimeClass `nvidia` to the cluster (https://docs.k3s.io/advanced#nvidia-container-runtime-support): install the "
            "toolkit before K3s, or restart K3s after it, and apply no RuntimeClass of your own. Never edit "
            "config.toml (rewritten on every start); custom settings go into a template next to it: "
            "`config-v3.toml.tmpl` with containerd 2 (K3s ≥ v1.31.6), `config.toml.tmpl` before. "
            f"Check: `grep -A2 nvidia {K3S_CONTAINERD}/config.toml` and `kubectl get runtimeclass nvidia`."
        )
    if spec.gpuOperator.enabled:
        return (
            "containerd: the GPU Operator's toolkit adds the `nvidia` runtime (drop-in "
            "/etc/containerd/conf.d/99-nvidia.toml) and creates RuntimeClass `nvidia`."
        )
    default = " --set-as-default" if spec.cluster.nvidiaDefaultRuntime else ""
    return (
        f"containerd on every GPU node: `sudo nvidia-ctk runtime configure --runtime=containerd{default}` and "
        "`sudo systemctl restart containerd`: it writes /etc/containerd/conf.d/99-nvidia.toml and imports it "
        "from /etc/containerd/config.toml, containerd 1.x and 2.x alike. "
        "Then apply RuntimeClass `nvidia` (manifests/runtime.yaml)."
    )


def build(chart: Any, ctx: RenderContext) -> Contribution:
    stack = ctx.stack
    if owns_runtime_class(stack):
        add_object(chart, runtime_class())
    notes = []
    host_pools = [p for p in stack.spec.nodePools if p.driver.source == "host"]
    if host_pools:
        notes.append(driver_note(host_pools))
    if not stack.spec.gpuOperator.enabled:
        notes.append(toolkit_note(stack.spec.nodePools))
    notes.append(containerd_note(stack))
    return Contribution(notes=notes)
