"""A builder of fixture node trees: what gpustack's probes read under ``--root``.

sysfs, procfs, /dev, /etc and /var files, written by one small method per layer.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gpustack.node.root import NodeRoot

GEFORCE_KERNEL = "6.8.0-138-generic"
AWS_KERNEL = "7.0.0-1012-aws"
DRIVER = "595.84"
SECURE_BOOT_VAR = "sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"

# containerd's CRI runtime table, as nvidia-ctk (stock) and K3s write it.
V3_NVIDIA = """
[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.'nvidia']
  runtime_type = "io.containerd.runc.v2"
[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.'nvidia'.options]
  BinaryName = "/usr/bin/nvidia-container-runtime"
  SystemdCgroup = true
"""
V2_NVIDIA = """
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]
  runtime_type = "io.containerd.runc.v2"
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]
  BinaryName = "/usr/bin/nvidia-container-runtime"
"""
V3_RUNC = """
[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.'runc']
  runtime_type = "io.containerd.runc.v2"
"""


@dataclass
class NodeTree:
    """Writes the files of a node under ``base``; every method returns the tree to chain calls."""

    base: Path

    @property
    def root(self) -> NodeRoot:
        return NodeRoot.open(self.base)

    def file(self, path: str, text: str | bytes = "") -> NodeTree:
        target = self.base / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            target.write_bytes(text)
        else:
            target.write_text(text, encoding="utf-8")
        return self

    def folder(self, path: str) -> NodeTree:
        (self.base / path.lstrip("/")).mkdir(parents=True, exist_ok=True)
        return self

    def pci(self, address: str, vendor: str, device: str, pci_class: str) -> NodeTree:
        for name, value in (("vendor", vendor), ("device", device), ("class", pci_class)):
            self.file(f"/sys/bus/pci/devices/{address}/{name}", f"0x{value}\n")
        return self

    def modules(self, *names: str) -> NodeTree:
        lines = [f"{name} 3104768 0 - Live 0x0000000000000000" for name in names]
        return self.file("/proc/modules", "\n".join(lines) + "\n")

    def kernel(self, release: str) -> NodeTree:
        return self.file("/proc/sys/kernel/osrelease", release + "\n")

    def loaded_driver(self, version: str = DRIVER) -> NodeTree:
        nvrm = f"NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  {version}  Release Build  (dvs-builder@U22)\n"
        return self.modules("nvidia_uvm", "nvidia_drm", "nvidia_modeset", "nvidia").file(
            "/proc/driver/nvidia/version", nvrm + "GCC version:  gcc version 13.3.0\n"
        )

    def dkms(self, version: str, *kernels: str) -> NodeTree:
        self.folder(f"/var/lib/dkms/nvidia/{version}/source")
        for kernel in kernels:
            self.file(f"/var/lib/dkms/nvidia/{version}/{kernel}/x86_64/module/nvidia.ko.zst", "")
        return self

    def dev(self, *names: str) -> NodeTree:
        for name in names:
            self.file(f"/dev/{name}")
        return self

    def gpu_devices(self, count: int = 1, caps: bool = False) -> NodeTree:
        self.dev(*(f"nvidia{i}" for i in range(count)), "nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "nvidia-modeset")
        return self.dev("nvidia-caps/nvidia-cap1", "nvidia-caps/nvidia-cap2") if caps else self

    def program(self, path: str) -> NodeTree:
        self.file(path, "#!/bin/sh\n")
        (self.base / path.lstrip("/")).chmod(0o755)
        return self

    def toolkit(self, mode: str | None = "auto") -> NodeTree:
        self.program("/usr/bin/nvidia-ctk").program("/usr/bin/nvidia-container-runtime")
        if mode is None:
            return self
        config = f'[nvidia-container-runtime]\nmode = "{mode}"\n\n[nvidia-container-runtime.modes.cdi]\n'
        config += 'default-kind = "nvidia.com/gpu"\nspec-dirs = ["/etc/cdi", "/var/run/cdi"]\n'
        return self.file("/etc/nvidia-container-runtime/config.toml", config)

    def cdi_spec(self, path: str = "/var/run/cdi/nvidia.yaml", driver: str = DRIVER) -> NodeTree:
        spec = (
            'cdiVersion: "0.5.0"\nkind: nvidia.com/gpu\ndevices:\n'
            "- name: \"0\"\n  containerEdits:\n    deviceNodes:\n    - path: /dev/nvidia0\n"
            '- name: all\n  containerEdits:\n    deviceNodes:\n    - path: /dev/nvidia0\n'
            "containerEdits:\n  mounts:\n"
            f"  - hostPath: /usr/lib/x86_64-linux-gnu/libcuda.so.{driver}\n"
            f"    containerPath: /usr/lib/x86_64-linux-gnu/libcuda.so.{driver}\n"
        )
        return self.file(path, spec)

    def stock_containerd(self, nvidia: str | None = V3_NVIDIA) -> NodeTree:
        """What ``nvidia-ctk runtime configure --runtime=containerd`` leaves: a drop-in, imported."""
        self.file("/etc/containerd/config.toml", 'version = 3\nimports = ["/etc/containerd/conf.d/*.toml"]\n' + V3_RUNC)
        return self.file("/etc/containerd/conf.d/99-nvidia.toml", "version = 3\n" + nvidia) if nvidia else self

    def kubeadm(self) -> NodeTree:
        return self.folder("/etc/kubernetes/manifests")

    def k3s(self, nvidia: bool = True) -> NodeTree:
        config = "version = 3\n" + V3_RUNC + (V3_NVIDIA if nvidia else "")
        return self.file("/var/lib/rancher/k3s/agent/etc/containerd/config.toml", config)

    def kubelet(self, *plugins: str) -> NodeTree:
        for socket in ("kubelet.sock", *plugins):
            self.file(f"/var/lib/kubelet/device-plugins/{socket}")
        return self

    def efi(self, secure_boot: bool | None = False) -> NodeTree:
        """EFI boot; ``secure_boot`` None leaves the SecureBoot variable out."""
        self.folder("/sys/firmware/efi/efivars")
        if secure_boot is None:
            return self
        return self.file(SECURE_BOOT_VAR, b"\x06\x00\x00\x00" + bytes([secure_boot]))
