"""Every GPU catalogue entry loads and carries sane facts."""

from __future__ import annotations

import re

import pytest

from gpustack.spec.gpu_catalogue import load_catalogue

CATALOGUE = load_catalogue()
REQUIRED = [
    "L4", "T4", "A10G", "A100-80GB", "H100", "H200", "L40S", "RTX-4070-Ti-SUPER", "RTX-4090",
    "B200", "GB200", "H20", "A10", "A30", "A40", "L40", "RTX-6000-Ada", "RTX-PRO-6000", "V100-SXM2-32GB",
]


@pytest.mark.parametrize("name", CATALOGUE.names())
def test_entry_facts(name):
    gpu = CATALOGUE.entries[name]
    assert gpu.pciVendor == "10de"
    assert re.fullmatch(r"[0-9a-f]{4}", gpu.pciDevice)
    # GeForce and workstation cards (display outputs) are VGA controllers, datacenter parts
    # 3D controllers.
    assert gpu.pciClass == ("0302" if gpu.segment == "datacenter" else "0300")
    assert gpu.product and " " not in gpu.product
    assert 7.0 <= float(gpu.computeCapability) < 13
    assert 8 * 1024 <= gpu.memoryMiB <= 200 * 1024
    assert 50 <= gpu.powerLimitW <= 1500
    if gpu.segment == "geforce":
        # No DCGM profiling (NVIDIA/dcgm-exporter#22), no ECC, no MIG on GeForce.
        assert not (gpu.dcgmProfiling or gpu.ecc or gpu.mig_capable)
    for profile in gpu.migProfiles:
        assert re.fullmatch(r"\d+g\.\d+gb", profile)


def test_required_models_resolve_by_name_or_alias():
    for name in REQUIRED:
        assert CATALOGUE.resolve(name) is not None, name
        assert CATALOGUE.resolve(name.lower()) == CATALOGUE.resolve(name)


def test_names_read_spaces_and_underscores_as_dashes():
    assert CATALOGUE.resolve("RTX 4090") == CATALOGUE.resolve("RTX-4090")
    assert CATALOGUE.resolve("rtx_pro_6000")[0] == "RTX-PRO-6000"
    assert CATALOGUE.resolve("H100-80GB")[0] == "H100-80GB-SXM"


def test_suggestions_for_a_typo():
    assert CATALOGUE.suggestions("H100-80G")[0] == "H100-80GB-SXM"
    assert CATALOGUE.suggestions("L40SS")[0] == "L40S"
    assert CATALOGUE.suggestions("nothing-like-a-gpu") == []


@pytest.mark.parametrize(
    ("name", "device", "pci_class", "profiles"),
    [
        ("B200", "2901", "0302", 6),
        ("GB200", "2941", "0302", 6),
        ("H20", "2329", "0302", 6),
        ("A10", "2236", "0302", 0),
        ("A30", "20b7", "0302", 3),
        ("A40", "2235", "0302", 0),
        ("L40", "26b5", "0302", 0),
        ("RTX-6000-Ada", "26b1", "0300", 0),
        ("RTX-PRO-6000", "2bb5", "0302", 3),
        ("V100-SXM2-32GB", "1db5", "0302", 0),
    ],
)
def test_added_cards(name, device, pci_class, profiles):
    """PCI ids as the PCI ID database lists them; MIG where NVIDIA supports it."""
    _, gpu = CATALOGUE.resolve(name)
    assert (gpu.pciDevice, gpu.pciClass, len(gpu.migProfiles)) == (device, pci_class, profiles)
    assert [key for key, _ in CATALOGUE.by_pci_device(device)] == [CATALOGUE.resolve(name)[0]]


def test_seed_001_facts_of_the_l4():
    _, l4 = CATALOGUE.resolve("L4")
    assert (l4.pciDevice, l4.pciClass, l4.memoryMiB, l4.powerLimitW) == ("27b8", "0302", 23034, 72)
    assert l4.product == "NVIDIA-L4" and l4.architecture == "ada-lovelace" and not l4.mig_capable


def test_aliases_are_unique():
    seen: dict[str, str] = {}
    for key, gpu in CATALOGUE.entries.items():
        for name in (key, *gpu.aliases):
            assert seen.setdefault(name.lower(), key) == key, f"{name} names two SKUs"


def test_pci_device_lookup():
    assert [key for key, _ in CATALOGUE.by_pci_device("27B8")] == ["L4"]


def test_nvswitch_boards_are_the_hgx_8_gpu_sxm_parts():
    """Fabric Manager's boards: HGX A100/H100/H200/B200 8-GPU; not their 4-GPU boards, not PCIe cards."""
    catalogue = load_catalogue()
    boards = {key for key, gpu in catalogue.entries.items() if gpu.nvswitchBoardGpus}
    assert boards == {"A100-40GB-SXM", "A100-80GB-SXM", "H100-80GB-SXM", "H200-141GB-SXM", "B200"}
    h100 = catalogue.entries["H100-80GB-SXM"]
    assert h100.on_nvswitch(8) and not h100.on_nvswitch(4)
    for pcie in ("H100-80GB-PCIE", "A100-80GB-PCIE", "L4", "L40S", "T4"):
        assert not catalogue.entries[pcie].on_nvswitch(8), pcie


def test_lint_reads_the_same_boards_without_the_model():
    from gpustack.lint.facts import nvswitch

    expected = {gpu.product: gpu.nvswitchBoardGpus for gpu in CATALOGUE.entries.values() if gpu.nvswitchBoardGpus}
    assert nvswitch.board_gpus() == expected
