"""The layers ``gpustack doctor`` walks, in the order a GPU comes up on a node."""

from __future__ import annotations

from typing import Protocol

from gpustack.node import (
    cdi,
    containerd,
    deviceplugin,
    devices,
    driver,
    fabricmanager,
    modules,
    nvml,
    pci,
    secureboot,
    toolkit,
)
from gpustack.node.result import LayerResult, Status, not_applicable
from gpustack.node.root import NodeRoot, Unreadable


class Layer(Protocol):
    """What each layer module provides."""

    LAYER: str

    def check(self, root: NodeRoot) -> LayerResult: ...


LAYERS: tuple[Layer, ...] = (
    pci,
    secureboot,
    modules,
    driver,
    devices,
    nvml,
    fabricmanager,
    toolkit,
    cdi,
    containerd,
    deviceplugin,
)


def run(root: NodeRoot) -> tuple[LayerResult, ...]:
    """Every layer's result; without an NVIDIA GPU on the PCI bus the others are not checked
    (each would only report its own absence: driver, device nodes, toolkit, … for no GPU)."""
    first, *others = LAYERS
    found = _guarded(first, root)
    if found.status is Status.PROBLEM:
        blocked = f"not checked: blocked by the {first.LAYER} layer (no NVIDIA GPU to check it for)"
        return (found, *(not_applicable(layer.LAYER, blocked) for layer in others))
    return (found, *(_guarded(layer, root) for layer in others))


def _guarded(layer: Layer, root: NodeRoot) -> LayerResult:
    """A layer this user may not read is not checked, rather than reported broken."""
    try:
        return layer.check(root)
    except Unreadable as exc:
        return not_applicable(layer.LAYER, str(exc))


def healthy(results: tuple[LayerResult, ...]) -> bool:
    return all(r.status is not Status.PROBLEM for r in results)
