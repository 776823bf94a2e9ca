"""The kubelet's device-plugins folder: has a device plugin registered its socket?"""

from __future__ import annotations

from gpustack.node import upstream_docs
from gpustack.node.result import LayerResult, ok, problem
from gpustack.node.root import NodeRoot

LAYER = "device-plugin"
FOLDER = "/var/lib/kubelet/device-plugins"
NVIDIA_SOCKET = "nvidia-gpu.sock"
KUBELET_SOCKET = "kubelet.sock"  # the kubelet's own registration socket, not a plugin


def check(root: NodeRoot) -> LayerResult:
    if not root.exists(FOLDER):
        return problem(
            LAYER,
            f"no {FOLDER}: no kubelet has run on this node",
            fix="join the node to the cluster (install K3s or kubeadm join) before the device plugin",
            docs=upstream_docs.DEVICE_PLUGIN,
        )
    plugins = [e.rsplit("/", 1)[1] for e in root.entries(FOLDER, "*.sock")]
    plugins = [name for name in plugins if name != KUBELET_SOCKET]
    if not plugins:
        return problem(
            LAYER,
            f"no device plugin socket in {FOLDER}: nodes advertise no nvidia.com/gpu",
            fix="deploy the NVIDIA device plugin DaemonSet (with runtimeClassName: nvidia where "
            "nvidia is not the default runtime) and check its pod on this node",
            docs=upstream_docs.DEVICE_PLUGIN,
        )
    # nvidia-gpu.sock is NVIDIA's plugin; others (HAMi's, say) serve GPUs too.
    plugins.sort(key=lambda name: name != NVIDIA_SOCKET)
    return ok(LAYER, f"{', '.join(plugins)} in {FOLDER}")
