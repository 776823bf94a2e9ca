"""Device nodes the driver creates: /dev/nvidia<N>, nvidiactl, nvidia-uvm and nvidia-caps."""

from __future__ import annotations

import re

from gpustack.node import pci, upstream_docs
from gpustack.node.result import LayerResult, ok, problem
from gpustack.node.root import NodeRoot

LAYER = "device-nodes"
_GPU_NODE = re.compile(r"/dev/nvidia\d+$")


def _minor(node: str) -> int:
    return int(node.removeprefix("/dev/nvidia"))


def check(root: NodeRoot) -> LayerResult:
    gpu_nodes = sorted((e for e in root.entries("/dev", "nvidia*") if _GPU_NODE.match(e)), key=_minor)
    missing = [n for n in ("/dev/nvidiactl", "/dev/nvidia-uvm") if not root.exists(n)]
    if not gpu_nodes:
        return problem(
            LAYER,
            "no /dev/nvidia<N> device nodes",
            fix="the driver creates them when it loads: fix the driver layer first, then "
            "`nvidia-modprobe` (or `nvidia-smi` once as root) creates the nodes",
            docs=upstream_docs.DRIVER,
        )
    expected = len(pci.nvidia_gpus(root))
    if len(gpu_nodes) < expected:
        return problem(
            LAYER,
            f"{len(gpu_nodes)} /dev/nvidia<N> node(s) for {expected} GPUs on the PCI bus",
            fix="`dmesg | grep -i nvidia` shows why a GPU did not initialise (an XID or a "
            "fallen-off-the-bus message); reseat or reset that GPU",
            docs=upstream_docs.DRIVER,
        )
    if missing:
        # CUDA opens nvidia-uvm for unified memory; it is a separate module (nvidia_uvm).
        return problem(
            LAYER,
            f"missing {', '.join(missing)}",
            fix="`nvidia-modprobe -u -c=0` (or `modprobe nvidia-uvm`) creates /dev/nvidia-uvm; "
            "nvidiactl comes with the nvidia module",
            docs=upstream_docs.DRIVER,
        )
    # nvidia-caps appears for datacenter GPUs (MIG capabilities), not for GeForce.
    caps = "nvidia-caps present" if root.exists("/dev/nvidia-caps") else "no nvidia-caps"
    listed = ", ".join(e.removeprefix("/dev/") for e in gpu_nodes)
    return ok(LAYER, f"{listed}, nvidiactl, nvidia-uvm; {caps}")
