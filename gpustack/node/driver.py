"""The NVIDIA kernel driver: loaded version, and what DKMS built for the running kernel."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from gpustack.node import modules, upstream_docs
from gpustack.node.result import LayerResult, ok, problem
from gpustack.node.root import NodeRoot

LAYER = "driver"
VERSION_FILE = "/proc/driver/nvidia/version"
DKMS_TREE = "/var/lib/dkms/nvidia"
# The GPU Operator's driver container mounts its root here (its hostPaths.driverInstallDir).
OPERATOR_ROOT = "/run/nvidia/driver"
_VERSION = re.compile(r"\d+\.\d+(?:\.\d+)?")


@dataclass(frozen=True)
class DriverFacts:
    kernel: str | None
    loaded_version: str | None
    module_loaded: bool
    dkms_builds: tuple[tuple[str, str], ...]  # (driver version, kernel) pairs DKMS built

    def dkms_versions_for(self, kernel: str | None) -> tuple[str, ...]:
        return tuple(version for version, built_for in self.dkms_builds if built_for == kernel)

    @property
    def installed_version(self) -> str | None:
        """The loaded version, else the newest DKMS build for the running kernel."""
        built = sorted(self.dkms_versions_for(self.kernel), key=_numeric)
        return self.loaded_version or (built[-1] if built else None)


def read(root: NodeRoot) -> DriverFacts:
    kernel = (root.read_text("/proc/sys/kernel/osrelease") or "").strip() or None
    return DriverFacts(
        kernel=kernel,
        loaded_version=loaded_version(root),
        module_loaded=is_loaded(root),
        dkms_builds=_dkms_builds(root),
    )


def is_loaded(root: NodeRoot) -> bool:
    return "nvidia" in modules.loaded(root) or root.exists(VERSION_FILE)


def loaded_version(root: NodeRoot) -> str | None:
    """From the NVRM line, e.g. "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  595.84  Release Build"."""
    text = root.read_text(VERSION_FILE) or ""
    nvrm = next((line for line in text.splitlines() if line.startswith("NVRM")), "")
    match = _VERSION.search(nvrm.partition("Kernel Module")[2])
    return match.group(0) if match else None


def _dkms_builds(root: NodeRoot) -> tuple[tuple[str, str], ...]:
    """DKMS keeps a build per kernel in /var/lib/dkms/nvidia/<version>/<kernel>/ (what `dkms status` reads)."""
    builds = []
    for version_dir in root.entries(DKMS_TREE):
        version = version_dir.rsplit("/", 1)[1]
        if not _VERSION.fullmatch(version):
            continue  # kernel-<kver>-<arch> links and original_module
        for kernel_dir in root.entries(version_dir):
            kernel = kernel_dir.rsplit("/", 1)[1]
            if kernel not in ("source", "build") and root.is_dir(kernel_dir):
                builds.append((version, kernel))
    return tuple(builds)


def _numeric(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def source(root: NodeRoot) -> Literal["host", "operator"]:
    """operator when only the GPU Operator's driver root has the user-space tools.

    A host-installed driver bind-mounted at /run/nvidia/driver has both.
    """
    operator_only = root.exists(f"{OPERATOR_ROOT}/usr/bin/nvidia-smi") and not root.exists("/usr/bin/nvidia-smi")
    return "operator" if operator_only else "host"


def check(root: NodeRoot) -> LayerResult:
    facts = read(root)
    kernel = facts.kernel or "unknown"
    for_running = facts.dkms_versions_for(facts.kernel)
    if facts.module_loaded:
        version = facts.loaded_version or "unknown version"
        dkms = f"DKMS build {', '.join(for_running)}" if for_running else "no DKMS build (precompiled module)"
        return ok(LAYER, f"nvidia {version} loaded on kernel {kernel}; {dkms}")
    if for_running:
        return problem(
            LAYER,
            f"DKMS built nvidia {', '.join(for_running)} for kernel {kernel} but it is not loaded",
            fix="`modprobe nvidia` and read `dmesg | grep -i nvidia`; with Secure Boot on the "
            "module must be signed by an enrolled key",
            docs=upstream_docs.DRIVER,
        )
    if facts.dkms_builds:
        # A kernel update without a DKMS rebuild: the GPU "vanishes" after reboot.
        built = ", ".join(sorted({k for _, k in facts.dkms_builds}))
        return problem(
            LAYER,
            f"DKMS built nvidia for kernel {built}, not for the running kernel {kernel}",
            fix=f"install linux-headers-{kernel}, run `dkms autoinstall` (or reinstall the driver "
            "package) and reboot",
            docs=upstream_docs.DRIVER,
        )
    return problem(
        LAYER,
        "no NVIDIA driver is loaded or built by DKMS",
        fix="from NVIDIA's CUDA repository (its cuda-keyring package): `apt-get install "
        "nvidia-driver-pinning-<release>`, then `nvidia-headless-open` (datacenter GPUs) or `nvidia-open`, "
        "and reboot",
        docs=upstream_docs.DRIVER,
    )
