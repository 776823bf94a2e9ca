"""Loaded kernel modules (``/proc/modules``, what ``lsmod`` prints) and the nouveau layer."""

from __future__ import annotations

from gpustack.node import upstream_docs
from gpustack.node.result import LayerResult, not_applicable, ok, problem
from gpustack.node.root import NodeRoot

LAYER = "nouveau"


def loaded(root: NodeRoot) -> frozenset[str]:
    text = root.read_text("/proc/modules") or ""
    return frozenset(line.split(maxsplit=1)[0] for line in text.splitlines() if line.strip())


def check(root: NodeRoot) -> LayerResult:
    if root.read_text("/proc/modules") is None:  # no /proc: a mounted image, not a running node
        return not_applicable(LAYER, "cannot tell: no /proc/modules to list the loaded modules")
    if "nouveau" in loaded(root):
        # A stock Ubuntu cloud image boots with nouveau bound to the GPU; the
        # nvidia driver package blacklists it, but only a reboot after installing unloads it.
        return problem(
            LAYER,
            "the open-source nouveau driver is loaded and holds the GPU",
            fix="install the NVIDIA driver package (it blacklists nouveau) and reboot; or add "
            "`blacklist nouveau` and `options nouveau modeset=0` to /etc/modprobe.d/, "
            "run `update-initramfs -u` and reboot",
            docs=upstream_docs.DRIVER,
        )
    return ok(LAYER, "nouveau is not loaded")
