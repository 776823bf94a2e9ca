"""Every GPU catalogue entry loads and carries sane facts."""

from __future__ import annotations

import re

import pytest

from gpustack.spec.catalogue import load_catalogue

CATALOGUE = load_catalogue()
REQUIRED = ["L4", "T4", "A10G", "A100-80GB", "H100", "H200", "L40S", "RTX-4070-Ti-SUPER", "RTX-4090"]


@pytest.mark.parametrize("name", CATALOGUE.names())
def test_entry_facts(name):
    gpu = CATALOGUE.entries[name]
    assert gpu.pciVendor == "10de"
    assert re.fullmatch(r"[0-9a-f]{4}", gpu.pciDevice)
    # GeForce cards are VGA controllers, datacenter parts 3D controllers (seed 001 §2, §9).
    assert gpu.pciClass == ("0300" if gpu.segment == "geforce" else "0302")
    assert gpu.product and " " not in gpu.product
    assert 7.0 <= float(gpu.computeCapability) < 13
    assert 8 * 1024 <= gpu.memoryMiB <= 200 * 1024
    assert 50 <= gpu.powerLimitW <= 1500
    if gpu.segment == "geforce":
        # No DCGM profiling, no ECC, no MIG on GeForce (upstream-facts §3).
        assert not (gpu.dcgmProfiling or gpu.ecc or gpu.mig_capable)
    for profile in gpu.migProfiles:
        assert re.fullmatch(r"\d+g\.\d+gb", profile)


def test_required_models_resolve_by_name_or_alias():
    for name in REQUIRED:
        assert CATALOGUE.resolve(name) is not None, name
        assert CATALOGUE.resolve(name.lower()) == CATALOGUE.resolve(name)


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
