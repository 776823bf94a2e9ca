"""PCI bus: which NVIDIA GPUs the kernel sees, and their class (sysfs, as ``lspci -nn`` shows)."""

from __future__ import annotations

from dataclasses import dataclass

from gpustack.node import upstream_docs
from gpustack.node.result import LayerResult, ok, problem
from gpustack.node.root import NodeRoot

LAYER = "pci"
DEVICES = "/sys/bus/pci/devices"
NVIDIA = "10de"
DISPLAY_CLASS = "03"  # 0300 VGA, 0302 3D controller; a GeForce's audio function is 0403


@dataclass(frozen=True)
class PciDevice:
    address: str
    vendor: str
    device: str
    pci_class: str  # the four digits NFD and lspci use: "0300", "0302"

    @property
    def ids(self) -> str:
        return f"{self.vendor}:{self.device}"

    @property
    def is_display(self) -> bool:
        return self.pci_class.startswith(DISPLAY_CLASS)

    @property
    def is_nvidia_gpu(self) -> bool:
        return self.vendor == NVIDIA and self.is_display


def read_devices(root: NodeRoot) -> tuple[PciDevice, ...]:
    devices = []
    for entry in root.entries(DEVICES):
        fields = [_hex(root.read_text(f"{entry}/{name}")) for name in ("vendor", "device", "class")]
        vendor, device, pci_class = fields
        if vendor and device and pci_class:
            devices.append(PciDevice(entry.rsplit("/", 1)[1], vendor, device, pci_class[:4]))
    return tuple(devices)


def _hex(text: str | None) -> str | None:
    """sysfs writes ``0x10de`` and ``0x030200``; keep the bare lower-case digits."""
    return text.strip().lower().removeprefix("0x") if text else None


def nvidia_gpus(root: NodeRoot) -> tuple[PciDevice, ...]:
    return tuple(d for d in read_devices(root) if d.is_nvidia_gpu)


def check(root: NodeRoot) -> LayerResult:
    devices = read_devices(root)
    gpus = [d for d in devices if d.is_nvidia_gpu]
    if not gpus:
        return problem(
            LAYER,
            "no NVIDIA GPU (vendor 10de, class 03xx) on the PCI bus",
            fix="check that the card is seated and powered, or passed through to this VM; "
            "`lspci -nn | grep -i nvidia` must list it",
            docs=upstream_docs.DRIVER,
        )
    listed = ", ".join(f"{g.address} [{g.ids}] class {g.pci_class}" for g in gpus)
    detail = f"{len(gpus)} NVIDIA GPU{'s' if len(gpus) > 1 else ''}: {listed}"
    # A VGA-class GPU and any other VGA device (Amazon's 1d0f on EC2) both carry NFD's
    # pci-0300_* labels: such labels do not mean "has an NVIDIA GPU" (GS001).
    other_vga = sorted({d.ids for d in devices if d.pci_class == "0300" and d.vendor != NVIDIA})
    if other_vga:
        detail += f"; other VGA devices: {', '.join(other_vga)} (they match pci-0300 selectors too)"
    return ok(LAYER, detail)
