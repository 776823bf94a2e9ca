"""GPU resource names and the amounts containers ask for, as exact quantities.

Which extended resources hand out (part of) a GPU, Kubernetes
quantities (``500m``, ``4Gi``) as fractions, each container's ``resources`` entries and the
GPU amounts it gets, and the template placeholders (``${GPUS}``) that still ask for GPUs.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

from gpustack.lint.model import Container, Path, PodSpec, get_value

# --- resource names and quantities -------------------------------------------------------

NVIDIA_PREFIX = "nvidia.com/"
HAMI_MEMORY = ("nvidia.com/gpumem", "nvidia.com/gpumem-percentage")
HAMI_CORES = "nvidia.com/gpucores"

_GPU_RESOURCE = re.compile(r"^nvidia\.com/(gpu|gpu\.shared|mig-.+|gpumem.*|gpucores)$")


def is_gpu_resource(name: str) -> bool:
    """An extended resource that hands out (part of) a GPU."""
    return bool(_GPU_RESOURCE.match(name))


def is_shared_gpu_resource(name: str) -> bool:
    """A share of a GPU: HAMi memory/cores, or a time-sliced/MPS ``*.shared`` resource."""
    return name in HAMI_MEMORY or name == HAMI_CORES or (is_gpu_resource(name) and name.endswith(".shared"))


# Exponents are bounded: 1e999999999 must not cost a billion-digit number.
_QUANTITY = re.compile(
    r"^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]{1,2})?$"
)
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "k": 10**3,
            "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18}


def parse_quantity(value: Any) -> Fraction | None:
    """A Kubernetes quantity (``1``, ``"500m"``, ``"4Gi"``, ``1.5``) exactly, or None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (str, int, float)):
        return _parse_scalar_quantity(value)  # quantities repeat: "1", 8000, "500m"
    return _parse_quantity(value)


@lru_cache(maxsize=4096, typed=True)
def _parse_scalar_quantity(value: str | int | float) -> Fraction | None:
    return _parse_quantity(value)


def _parse_quantity(value: Any) -> Fraction | None:
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        return Fraction(str(value)) if math.isfinite(value) else None
    match = _QUANTITY.match(str(value).strip())
    if not match:
        return None
    number, suffix = Fraction(match.group(1)), match.group(2)
    if not suffix:
        return number
    if suffix in _BINARY:
        return number * _BINARY[suffix]
    if suffix in _DECIMAL:
        return number * _DECIMAL[suffix]
    return number * Fraction(10) ** int(suffix[1:])


@dataclass(frozen=True)
class ResourceAmount:
    """One ``resources.requests``/``limits`` entry of a container."""

    section: str  # "requests" | "limits"
    name: str
    raw: Any
    quantity: Fraction | None
    path: Path


def resource_amounts(container: Container) -> Iterator[ResourceAmount]:
    return iter(container.once("resource_amounts", lambda c: tuple(_resource_amounts(c))))


def _resource_amounts(container: Container) -> Iterator[ResourceAmount]:
    for section in ("requests", "limits"):
        entries = get_value(container.data, "resources", section)
        if not isinstance(entries, Mapping):
            continue
        for name, raw in entries.items():
            path = (*container.path, "resources", section, name)
            yield ResourceAmount(section, str(name), raw, parse_quantity(raw), path)


def gpu_amounts(container: Container) -> dict[str, Fraction]:
    """GPU resources the container gets, > 0 only (limits win; requests alone count)."""
    return {name: value for name, value in gpu_requests(container).items() if value is not None}


def whole_gpu_asks(pod: PodSpec) -> dict[str, Fraction]:
    """The whole-GPU resources the pod's containers ask for; {} when it asks for a shared GPU."""
    found: dict[str, Fraction] = {}
    for container in pod.containers(include_init=False):
        for name, amount in gpu_amounts(container).items():
            if is_shared_gpu_resource(name):
                return {}
            found[name] = amount
    return found


def gpu_requests(container: Container) -> dict[str, Fraction | None]:
    """GPU resources the container asks for: amounts > 0, and None for a template placeholder.

    An unrendered ``${GPUS}`` or ``{{ .Values.gpus }}`` still asks for GPUs; zero does not.
    """
    return dict(container.once("gpu_requests", _gpu_requests))


def _gpu_requests(container: Container) -> dict[str, Fraction | None]:
    found: dict[str, Fraction | None] = {}
    for amount in resource_amounts(container):
        if not is_gpu_resource(amount.name):
            continue
        if amount.quantity is None and not is_template_placeholder(amount.raw):
            continue
        if amount.section == "limits" or amount.name not in found:
            found[amount.name] = amount.quantity
    return {name: value for name, value in found.items() if value is None or value > 0}


_PLACEHOLDER = re.compile(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\{\{.*\}\}|<[^<>]+>")


def is_template_placeholder(value: Any) -> bool:
    """``${VAR}``, ``$VAR``, ``{{ … }}``, ``<your-token>``: filled in before the manifest is applied."""
    return isinstance(value, str) and bool(_PLACEHOLDER.search(value))
