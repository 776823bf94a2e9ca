"""Devices as NVIDIA's DRA driver publishes them, and whether CEL selectors admit one.

A whole GPU and a MIG device carry the same ``productName``, ``brand``, ``architecture``,
``cudaComputeCapability`` and ``driverVersion`` (the MIG device copies its parent's); only
``type`` (``gpu`` or ``mig``), ``profile``, ``parentUUID`` and the MIG capacities tell them
apart (https://github.com/NVIDIA/k8s-dra-driver-gpu/blob/main/cmd/gpu-kubelet-plugin/deviceinfo.go,
``GpuInfo.GetDevice`` and ``MigDeviceInfo.GetDevice``). A selector that reads none of those
admits the MIG devices of every GPU it admits.

The devices are witnesses: each string attribute a selector compares with a literal
(``productName == 'NVIDIA H100 80GB HBM3'``, ``.startsWith('NVIDIA H100')``) takes that
literal, so a whole GPU that the selectors mean is built, then its MIG device. Versions and
quantities are left out: the CEL library here has no ``semver`` or ``quantity``, so a selector
that reads them cannot be judged (``admits`` answers None).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

DRIVER = "gpu.nvidia.com"
GPU_TYPE, MIG_TYPE = "gpu", "mig"
DEFAULT_PROFILE = "1g.10gb"
# `device.attributes['gpu.nvidia.com'].<name> == '<literal>'` or `.<name>.startsWith('<literal>')` …
_COMPARED = re.compile(
    r"""\[\s*(?P<q>["'])gpu\.nvidia\.com(?P=q)\s*\]\s*\.\s*(?P<name>\w+)\s*"""
    r"""(?:(?P<eq>==)\s*|\.\s*(?P<op>startsWith|endsWith|contains|matches)\s*\(\s*)(?P<q2>["'])(?P<literal>[^"']*)(?P=q2)"""
)
_WHOLE_GPU = {
    "uuid": "GPU-00000000-0000-0000-0000-000000000000",
    "productName": "NVIDIA H100 80GB HBM3",
    "brand": "Nvidia",
    "architecture": "Hopper",
    "pcieBusID": "0000:18:00.0",
    "addressingMode": "None",
}


def witnesses(expressions: Iterable[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A whole GPU the expressions compare with, and a MIG device of it, as CEL's ``device``."""
    literals: dict[str, str] = {}
    for expression in expressions:
        for match in _COMPARED.finditer(expression):
            literals.setdefault(match["name"], match["literal"])
    gpu = {name: literals.get(name, value) for name, value in _WHOLE_GPU.items()}
    mig = {
        **gpu,
        "uuid": "MIG-00000000-0000-0000-0000-000000000000",
        "parentUUID": gpu["uuid"],
        "profile": literals.get("profile", DEFAULT_PROFILE),
    }
    return _device({**gpu, "type": GPU_TYPE}), _device({**mig, "type": MIG_TYPE})


# NVIDIA's DRA driver's own class of whole GPUs (deployments/helm/dra-driver-nvidia-gpu/templates/
# deviceclass-gpu.yaml of https://github.com/NVIDIA/k8s-dra-driver-gpu).
GPU_CLASS_SELECTOR = f"device.driver == '{DRIVER}' && device.attributes['{DRIVER}'].type == '{GPU_TYPE}'"


def pool_gpu(product: str, expressions: Iterable[str]) -> dict[str, Any]:
    """A whole GPU of a pool whose GFD product is ``product``, as CEL's ``device``.

    The driver publishes NVML's name (``NVIDIA A100-SXM4-80GB``); GFD's product is that name
    with its spaces as hyphens, so the name is known only up to which hyphens were spaces. The
    device takes the product's name (hyphens as spaces) only where that cannot change a
    verdict: every ``productName`` the expressions read is compared with a literal (``==``,
    ``startsWith``, ``endsWith``, ``contains``) that, spaces as hyphens, fails the same test on
    the product, so it fails on the real name too. Else it keeps the witness's name (the
    literal itself), which admits."""
    expressions = list(expressions)
    gpu, _ = witnesses(expressions)
    mentions = sum(expression.count("productName") for expression in expressions)
    compared = [m for e in expressions for m in _COMPARED.finditer(e) if m["name"] == "productName"]
    if len(compared) == mentions and not any(_may_hold(m["eq"] or m["op"], m["literal"], product) for m in compared):
        gpu["attributes"][DRIVER]["productName"] = product.replace("-", " ")
    return gpu


def _may_hold(test: str, literal: str, product: str) -> bool:
    """Whether NVML's name of a GPU whose GFD product is ``product`` may pass ``test`` with ``literal``."""
    hyphenated = literal.replace(" ", "-")
    if test == "==":
        return hyphenated == product
    if test == "startsWith":
        return product.startswith(hyphenated)
    if test == "endsWith":
        return product.endswith(hyphenated)
    return test != "contains" or hyphenated in product  # a regular expression (matches) may hold


def _device(attributes: Mapping[str, str]) -> dict[str, Any]:
    return {"driver": DRIVER, "attributes": {DRIVER: dict(attributes)}, "capacity": {DRIVER: {}}}


def admits(expressions: Iterable[str], device: Mapping[str, Any]) -> bool | None:
    """Whether every expression is true for ``device``; None when one cannot be evaluated here
    (it does not compile, reads a name the device lacks, or needs semver or quantity)."""
    import cel  # lazily: only DeviceClasses pay for it

    for expression in expressions:
        try:
            if cel.evaluate(expression, {"device": device}) is not True:
                return False
        except (KeyError, RuntimeError, TypeError, ValueError):
            return None
    return True
