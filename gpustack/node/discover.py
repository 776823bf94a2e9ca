"""``gpustack discover``: turn what a node has into the ``spec:`` input for its node pool.

The GPU is matched to the catalogue by its PCI device id (what lspci and NFD see);
NVML, when it can be asked, adds what the card reports about itself.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, Literal, get_args

from gpustack.errors import GpustackError
from gpustack.node import distribution, driver, nvml, pci, toolkit
from gpustack.node.distribution import Distribution
from gpustack.node.root import NodeRoot
from gpustack.spec.gpu_catalogue import PCI_CLASSES, GpuModel, gfd_family, load_catalogue
from gpustack.spec.models.cluster import Toolkit
from gpustack.yamlio import dump

SPEC_TOOLKIT_MODES: tuple[str, ...] = get_args(Toolkit.model_fields["mode"].annotation)


@dataclass(frozen=True)
class Discovery:
    key: str | None  # catalogue key; None for a GPU the catalogue lacks (gpu.custom then)
    model: GpuModel | None
    gpus: tuple[pci.PciDevice, ...]
    driver_version: str | None
    driver_source: Literal["host", "operator"]
    toolkit_mode: str
    distribution: Distribution
    nvml: nvml.NvmlReport | None


def discover(root: NodeRoot) -> Discovery:
    """Raises ``GpustackError`` when there is no GPU or several models."""
    gpus = pci.nvidia_gpus(root)
    if not gpus:
        raise GpustackError(
            f"no NVIDIA GPU on the PCI bus under {root.base}: nothing to discover (`gpustack doctor` shows why)"
        )
    by_device = Counter(g.device for g in gpus)
    if len(by_device) > 1:
        found = ", ".join(f"{n} × 10de:{device}" for device, n in by_device.items())
        raise GpustackError(f"GPUs of several models on one node ({found}): a node pool holds one model")
    report = _nvml(root)
    device = gpus[0].device
    matches = load_catalogue().by_pci_device(device)
    key, model = matches[0] if matches else (None, None)
    facts = driver.read(root)
    return Discovery(
        key=key,
        model=model,
        gpus=gpus,
        driver_version=facts.installed_version,
        driver_source=driver.source(root),
        toolkit_mode=toolkit.read(root).mode,
        distribution=distribution.detect(root),
        nvml=report,
    )


def _nvml(root: NodeRoot) -> nvml.NvmlReport | None:
    if not root.is_live:
        return None
    try:
        return nvml.read()
    except nvml.NvmlUnavailable:
        return None


def snippet(found: Discovery) -> str:
    """YAML for under ``spec:``: the cluster's distribution and one node pool, with a header."""
    return "".join(f"# {line}\n" for line in _header(found)) + dump(_spec(found))


def _spec(found: Discovery) -> dict[str, Any]:
    name = found.key or _custom_name(found)
    gpu: dict[str, Any] = {"model": name, "count": len(found.gpus)}
    if found.model is None:
        gpu["custom"] = custom_skeleton(found.gpus[0], _nvml_gpu(found))
    pool: dict[str, Any] = {
        "name": re.sub(r"[^a-z0-9-]", "-", name.lower()).strip("-"),
        "gpu": gpu,
        "driver": {"source": found.driver_source},
    }
    if found.driver_version:
        pool["driver"]["version"] = found.driver_version
    spec: dict[str, Any] = {
        "cluster": {"distribution": "k3s" if found.distribution.name == "k3s" else "kubeadm"},
        "nodePools": [pool],
    }
    if found.driver_source == "operator":
        spec["gpuOperator"] = {"enabled": True}  # the operator then owns the toolkit too
    elif found.toolkit_mode in SPEC_TOOLKIT_MODES:
        pool["toolkit"] = {"mode": found.toolkit_mode}
    return spec


def custom_skeleton(device: pci.PciDevice, gpu: nvml.NvmlGpu | None) -> dict[str, Any]:
    """``gpu.custom`` for a GPU the catalogue lacks: what the PCI bus and NVML tell, ``null``
    for what only a datasheet does (validate then names each field left to fill in)."""
    capability = gpu.compute_capability if gpu else None
    return {
        "product": gpu.name.replace(" ", "-") if gpu else None,  # GFD's label: NVML's name, dashed
        "pciVendor": device.vendor,
        "pciDevice": device.device,
        "pciClass": device.pci_class if device.pci_class in PCI_CLASSES else None,
        "architecture": gfd_family(capability) if capability else None,
        "computeCapability": capability,
        "memoryMiB": gpu.memory_mib if gpu else None,
        "powerLimitW": None,
        "migProfiles": [] if gpu and gpu.mig == "not supported" else None,
        "dcgmProfiling": None,
        "ecc": None,
        "segment": None,
    }


def _custom_name(found: Discovery) -> str:
    gpu = _nvml_gpu(found)
    if gpu:
        return re.sub(r"[^A-Za-z0-9]+", "-", gpu.name.removeprefix("NVIDIA ")).strip("-")
    return f"GPU-{found.gpus[0].vendor}-{found.gpus[0].device}"


def _nvml_gpu(found: Discovery) -> nvml.NvmlGpu | None:
    return found.nvml.gpus[0] if found.nvml and found.nvml.gpus else None


def _header(found: Discovery) -> list[str]:
    first = found.gpus[0]
    model = found.model
    if model is None:
        lines = [
            f"gpustack discover: {len(found.gpus)} × GPU [{first.ids}] class {first.pci_class}, not in the "
            "GPU catalogue (`gpustack gpus`): gpu.custom holds what the node tells; fill in each null "
            "from the card's datasheet (`gpustack schema` describes the fields)",
        ]
    else:
        mig = f"MIG-capable ({', '.join(model.migProfiles)})" if model.mig_capable else "no MIG"
        lines = [
            f"gpustack discover: {len(found.gpus)} × {model.product} [{first.ids}] class {first.pci_class}, "
            f"{model.memoryMiB} MiB, compute {model.computeCapability}, {mig}",
        ]
    if found.nvml and found.nvml.gpus:
        lines.append(f"NVML: driver {found.nvml.driver_version}; {found.nvml.gpus[0]}")
    lines.append(_distribution_line(found.distribution))
    if found.driver_source != "operator" and found.toolkit_mode not in SPEC_TOOLKIT_MODES:
        lines.append(f"toolkit mode {found.toolkit_mode} has no spec equivalent: set toolkit.mode by hand")
    lines.append("Paste under `spec:` of a GpuStack spec; `gpustack schema` describes every field.")
    return lines


def _distribution_line(found: Distribution) -> str:
    if found.evidence is None:
        return "distribution: neither K3s nor kubeadm found; kubeadm stands for any other"
    return f"distribution: {found.name} (found {found.evidence})"
