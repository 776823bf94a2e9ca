"""What the linted set says about the NVIDIA driver coming with the nodes' OS (GS035, GS055).

On Talos the driver is a system extension of the installer image and the machine config loads
its kernel modules (https://docs.siderolabs.com/talos/v1.13/configure-your-talos-cluster/hardware-and-drivers/nvidia-gpu).
A set says so, without a spec, in documents that are not Kubernetes objects:

- a machine config or patch whose ``machine.kernel.modules`` loads ``nvidia``;
- an Image Factory schematic listing an NVIDIA driver extension (``nvidia-open-gpu-kernel-modules``,
  ``nonfree-kmod-nvidia``, ``nvidia-container-toolkit``, with or without a branch suffix);
- a talhelper ``talconfig.yaml`` with either in its patches or schematics.

The evidence is a function of the documents given, computed once per context.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gpustack.lint.facts import talos
from gpustack.lint.model import Path, Resource

if TYPE_CHECKING:
    from gpustack.lint.context import LintContext


@dataclass(frozen=True)
class Evidence:
    """One place in the set that says the driver comes with the node's OS."""

    resource: Resource
    path: Path
    what: str  # for messages

    def __str__(self) -> str:
        line, _ = self.resource.locate(self.path)
        return f"{self.what} ({self.resource.file}:{line})"


def host_driver(ctx: LintContext) -> tuple[Evidence, ...]:
    """Every place in the set that brings the driver with the OS, in document order."""
    return ctx.memo(("hostdriver",), lambda: tuple(_evidence(ctx.resources)))


def _evidence(resources: tuple[Resource, ...]) -> Iterator[Evidence]:
    for resource in resources:
        if talos.is_talconfig(resource):
            for path, patch in talos.talconfig_patches(resource):
                yield from _modules(resource, path, patch)
            for path, schematic in talos.talconfig_schematics(resource):
                yield from _extensions(resource, path, schematic)
        elif talos.is_schematic(resource):
            yield from _extensions(resource, (), resource.data)
        elif talos.is_machine_config(resource):
            yield from _modules(resource, (), resource.data)


def _modules(resource: Resource, path: Path, config: Mapping[str, Any]) -> Iterator[Evidence]:
    if talos.loads_nvidia_modules(config):
        yield Evidence(resource, (*path, "machine", "kernel", "modules"), "a Talos machine config loads the nvidia kernel modules")


def _extensions(resource: Resource, path: Path, schematic: Mapping[str, Any]) -> Iterator[Evidence]:
    found = list(talos.nvidia_extensions(talos.official_extensions(schematic)))
    if found:
        where = (*path, "customization", "systemExtensions", "officialExtensions")
        yield Evidence(resource, where, f"a Talos schematic installs the NVIDIA extensions {', '.join(found)}")
