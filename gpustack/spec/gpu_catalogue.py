"""The GPU catalogue (``specs/gpus.yaml``): facts per GPU SKU that render and lint rely on."""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field
from ruamel.yaml import YAML

from gpustack.shipped import data_dir
from gpustack.suggest import close_matches
from gpustack.terminal import aligned

PciClass = Literal["0300", "0302"]
PCI_CLASSES: tuple[str, ...] = get_args(PciClass)


def gfd_family(compute_capability: str) -> str | None:
    """GPU Feature Discovery's nvidia.com/gpu.family for a compute capability ("8.9" →
    ada-lovelace), as its getArchFamily maps them; None for one it does not name."""
    major, _, minor = compute_capability.partition(".")
    if not (major.isdigit() and minor.isdigit()):
        return None
    families = {7: ("volta", "turing", 5), 8: ("ampere", "ada-lovelace", 9)}
    if int(major) in families:
        below, above, split = families[int(major)]
        return below if int(minor) < split else above
    return {9: "hopper", 10: "blackwell", 12: "blackwell"}.get(int(major))


class GpuModel(BaseModel):
    """Facts about one GPU SKU. Also the shape of a custom entry in a spec (``gpu.custom``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    product: str = Field(description="GFD's nvidia.com/gpu.product label, e.g. NVIDIA-L4.")
    pciVendor: str = Field("10de", pattern=r"^[0-9a-f]{4}$", description="PCI vendor id (NVIDIA: 10de).")
    pciDevice: str = Field(pattern=r"^[0-9a-f]{4}$", description="PCI device id, e.g. 27b8 for the L4.")
    pciClass: PciClass = Field(
        description="PCI class: 0300 (VGA: GeForce and workstation cards) or 0302 (3D controller, datacenter GPUs)."
    )
    architecture: str = Field(description="GFD's nvidia.com/gpu.family, e.g. ada-lovelace.")
    computeCapability: str = Field(pattern=r"^\d+\.\d+$", description="CUDA compute capability.")
    memoryMiB: int = Field(gt=0, description="Memory as nvidia-smi reports it, in MiB.")
    powerLimitW: int = Field(gt=0, description="Default board power limit in watts.")
    migProfiles: tuple[str, ...] = Field((), description="MIG profiles; empty when the GPU cannot do MIG.")
    dcgmProfiling: bool = Field(description="Whether DCGM_FI_PROF_* profiling metrics are available.")
    ecc: bool = Field(description="Whether the memory has ECC.")
    segment: Literal["datacenter", "workstation", "geforce"] = Field(
        description="datacenter, workstation (professional cards with display outputs) or geforce."
    )
    aliases: tuple[str, ...] = Field((), description="Other names accepted for this SKU.")
    nvswitchBoardGpus: int | None = Field(
        None,
        gt=0,
        description="GPUs of the HGX/DGX baseboard that joins this SXM part through NVSwitch (8); a node "
        "with that many needs NVIDIA Fabric Manager before CUDA starts. Null for parts on no NVSwitch board.",
    )

    @property
    def mig_capable(self) -> bool:
        return bool(self.migProfiles)

    def on_nvswitch(self, gpus_per_node: int) -> bool:
        """Whether a node with ``gpus_per_node`` of this part is an NVSwitch board (Fabric Manager's job).

        The 4-GPU HGX boards of the same parts link their GPUs directly, without NVSwitch.
        """
        return self.nvswitchBoardGpus is not None and gpus_per_node >= self.nvswitchBoardGpus


def normalized(name: str) -> str:
    """The form names are compared in: case-insensitive, spaces and underscores as dashes
    ("RTX 4090" and "rtx_4090" are RTX-4090)."""
    return re.sub(r"[\s_]+", "-", name.strip()).lower()


class Catalogue:
    """GPU SKUs by name, looked up by ``normalized`` name (aliases included)."""

    def __init__(self, entries: dict[str, GpuModel]) -> None:
        self.entries = entries
        self._index: dict[str, str] = {}
        for key, model in entries.items():
            for name in (key, *model.aliases):
                self._index[normalized(name)] = key

    def names(self) -> list[str]:
        return list(self.entries)

    def resolve(self, name: str) -> tuple[str, GpuModel] | None:
        """Return ``(catalogue key, model)`` for a SKU name or alias, ``None`` when unknown."""
        key = self._index.get(normalized(name))
        return (key, self.entries[key]) if key else None

    def suggestions(self, name: str) -> list[str]:
        """Catalogue keys for a name too short to pick one (``A100``: its variants) or close to
        ``name`` (a typo), best first."""
        typed = normalized(name)
        variants = [form for form in self._index if form.startswith(f"{typed}-")]
        close = close_matches(name, self._index, normalize=normalized, n=5, cutoff=0.5)
        return list(dict.fromkeys(self._index[normalized(match)] for match in (*variants, *close)))[:3]

    def by_pci_device(self, device_id: str) -> list[tuple[str, GpuModel]]:
        return [(k, m) for k, m in self.entries.items() if m.pciDevice == device_id.lower()]


def catalogue_table(catalogue: Catalogue) -> str:
    """One row per SKU for a terminal: name, aliases, PCI id, family, memory, MIG."""
    rows = [("MODEL", "ALIASES", "PCI", "FAMILY", "MEMORY", "SEGMENT", "MIG PROFILES")]
    rows += [
        (
            key,
            ", ".join(model.aliases) or "-",
            f"{model.pciVendor}:{model.pciDevice}",
            model.architecture,
            f"{model.memoryMiB} MiB",
            model.segment,
            ", ".join(model.migProfiles) or "-",
        )
        for key, model in catalogue.entries.items()
    ]
    return aligned(rows)


def catalogue_json(catalogue: Catalogue) -> str:
    entries = {key: model.model_dump(mode="json") for key, model in catalogue.entries.items()}
    return json.dumps(entries, indent=2) + "\n"


@cache
def load_catalogue() -> Catalogue:
    raw = YAML(typ="safe").load((data_dir("specs") / "gpus.yaml").read_text(encoding="utf-8"))
    return Catalogue({key: GpuModel.model_validate(value) for key, value in raw["gpus"].items()})
