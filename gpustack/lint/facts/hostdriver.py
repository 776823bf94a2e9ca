"""What the linted set says about the NVIDIA driver and toolkit coming with the nodes' OS (GS035, GS055).

On Talos the driver and the toolkit are system extensions of the installer image, and the machine
config loads the driver's kernel modules
(https://docs.siderolabs.com/talos/v1.13/configure-your-talos-cluster/hardware-and-drivers/nvidia-gpu).
A set says so, without a spec, in documents that are not Kubernetes objects:

- a machine config or patch whose ``machine.kernel.modules`` loads ``nvidia``, or whose
  ``machine.install.extensions`` (the way before schematics) lists NVIDIA's extension images;
- an Image Factory schematic listing NVIDIA's extensions (``nvidia-open-gpu-kernel-modules``,
  ``nonfree-kmod-nvidia``, ``nvidia-container-toolkit``, with or without a branch suffix);
- a talhelper ``talconfig.yaml`` with either in its patches or schematics.

Which Talos release the nodes run decides what the toolkit extension holds: a machine config's
installer image tag (``machine.install.image``) or talhelper's ``talosVersion`` says it.

Bottlerocket's NVIDIA variants carry the driver too
(https://bottlerocket.dev/en/os/1.54.x/version-information/gpu-drivers): a Karpenter
``EC2NodeClass`` on Bottlerocket (``amiFamily: Bottlerocket``, or an ``amiSelectorTerms`` alias
``bottlerocket@…``, https://karpenter.sh/docs/concepts/nodeclasses/) that a GPU NodePool of the
set uses (``facts/node_groups.py``) says the driver comes with the OS; so does the same pair of
Karpenter's v1alpha5 API, a GPU ``Provisioner`` and the ``AWSNodeTemplate`` of its ``providerRef``
(or its inline ``provider``) with ``amiFamily: Bottlerocket``. ``bottlerocket_node_classes`` is that
one fact: runtime evidence (GS004) reads it too, since the same variants make nvidia containerd's
default runtime.
So does a GPU NodePool's EC2NodeClass on the EKS-optimized AMIs (``amiFamily: AL2`` or ``AL2023``,
an alias ``al2@…`` or ``al2023@…``): for GPU instances Karpenter picks their accelerated
variant, which carries the NVIDIA driver
(https://docs.aws.amazon.com/eks/latest/userguide/ml-eks-optimized-ami.html).
Host scripts and setup notes that install the driver or the toolkit from packages, or create a
managed cloud's GPU nodes whose image brings the driver (``input/hostscripts``), say it too,
with less certainty: nothing in the set ties the script to the GPU nodes, so their evidence is
``assumed``.
Everything is a function of the documents given, computed once per context.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gpustack.lint.facts import hostscripts, talos
from gpustack.lint.facts.node_groups import karpenter_gpu
from gpustack.lint.model import Path, Resource, get_value

if TYPE_CHECKING:
    from gpustack.lint.context import LintContext


@dataclass(frozen=True)
class Evidence:
    """One place in the set that says something of the nodes' OS."""

    resource: Resource
    path: Path
    what: str  # for messages
    assumed: bool = False  # a host script's word, which the set does not tie to the GPU nodes
    # The GPU Operator's driver manager finds this driver (``nvidia-smi`` on the host's PATH, as
    # distribution packages and the AKS and EKS GPU images put it) and keeps its own driver off.
    detected: bool = False

    def __str__(self) -> str:
        line, _ = self.resource.locate(self.path)
        return f"{self.what} ({self.resource.file}:{line})"


@dataclass(frozen=True)
class HostStack:
    driver: tuple[Evidence, ...] = ()  # the driver comes with the OS
    toolkit: tuple[Evidence, ...] = ()  # the nvidia-container-toolkit extension is installed
    releases: tuple[tuple[Evidence, tuple[int, int]], ...] = field(default=())  # the Talos release


# The kinds this module reads: Talos's, talhelper's and scripts' documents have none, then
# Karpenter's node pools and their EC2 node classes.
_KINDS = (None, "NodePool", "Provisioner", "EC2NodeClass", "AWSNodeTemplate")


def host_stack(ctx: LintContext) -> HostStack:
    """What the set's Talos documents say, in document order."""
    return ctx.memo(("hostdriver",), lambda: _collect(tuple(ctx.of_kind(*_KINDS))))


def host_driver(ctx: LintContext) -> tuple[Evidence, ...]:
    """Every place in the set that brings the driver with the OS."""
    return host_stack(ctx).driver


def _collect(resources: tuple[Resource, ...]) -> HostStack:
    driver: list[Evidence] = []
    toolkit: list[Evidence] = []
    releases: list[tuple[Evidence, tuple[int, int]]] = []
    for resource in resources:
        if resource.kind is not None:  # Talos's configs, talhelper's and schematics have none
            continue
        configs: list[tuple[Path, Mapping[str, Any]]] = []
        schematics: list[tuple[Path, Mapping[str, Any]]] = []
        if talos.is_talconfig(resource):
            configs += talos.talconfig_patches(resource)
            schematics += talos.talconfig_schematics(resource)
            found = talos.release(resource.data.get("talosVersion"))
            if found is not None:
                releases.append((Evidence(resource, ("talosVersion",), "talhelper's talosVersion"), found))
        elif talos.is_schematic(resource):
            schematics.append(((), resource.data))
        elif talos.is_machine_config(resource):
            configs.append(((), resource.data))
        for path, config in configs:
            if talos.loads_nvidia_modules(config):
                where = (*path, "machine", "kernel", "modules")
                driver.append(Evidence(resource, where, "a Talos machine config loads the nvidia kernel modules"))
            images = talos.install_extension_images(config)
            listed = (*path, "machine", "install", "extensions")
            if any(talos.nvidia_extensions(images)):
                driver.append(Evidence(resource, listed, "a Talos machine config installs NVIDIA's extensions"))
            toolkit += _toolkit(resource, listed, images)
            found = talos.installer_release(config)
            if found is not None:
                where = (*path, "machine", "install", "image")
                releases.append((Evidence(resource, where, "the Talos installer image"), found))
        for path, schematic in schematics:
            names = talos.official_extensions(schematic)
            where = (*path, "customization", "systemExtensions", "officialExtensions")
            nvidia = list(talos.nvidia_extensions(names))
            if nvidia:
                driver.append(Evidence(resource, where, f"a Talos schematic installs the NVIDIA extensions {', '.join(nvidia)}"))
            toolkit += _toolkit(resource, where, names)
    for resource in resources:
        if hostscripts.says(resource, hostscripts.TALOS_KEY):
            found = talos.image_release(resource.data[hostscripts.TALOS_KEY].get("found"))
            if found is not None:
                releases.append((Evidence(resource, (hostscripts.TALOS_KEY,), "the Talos installer image a script writes"), found))
    driver += _bottlerocket(resources)
    driver += _eks_accelerated(resources)
    driver += _scripts(resources, hostscripts.DRIVER_KEY, "installs the NVIDIA driver on the host", lambda _: True)
    driver += _scripts(resources, hostscripts.CLOUD_DRIVER_KEY, "creates GPU nodes whose image brings the NVIDIA driver",
                       lambda found: found.get("cloud") in DETECTED_CLOUDS)
    toolkit += _scripts(resources, hostscripts.TOOLKIT_KEY, "installs the NVIDIA Container Toolkit on the host")
    return HostStack(tuple(driver), tuple(toolkit), tuple(releases))


# Clouds whose GPU node images put nvidia-smi on the host's PATH (Ubuntu on AKS, Amazon Linux on
# EKS); GKE's Container-Optimized OS keeps the driver under /home/kubernetes/bin/nvidia.
DETECTED_CLOUDS = frozenset({"aks", "eks"})


def _scripts(resources: tuple[Resource, ...], key: str, what: str,
             detected: Callable[[Mapping[str, Any]], bool] = lambda _: False) -> Iterator[Evidence]:
    """Host scripts and setup notes that install the driver or toolkit (``input/hostscripts``):
    assumed to prepare the GPU nodes."""
    for resource in resources:
        if hostscripts.says(resource, key):
            found = resource.data[key]
            yield Evidence(resource, (key,), f"`{found.get('says')}` {what}", assumed=True, detected=detected(found))


def bottlerocket_node_classes(ctx: LintContext) -> tuple[tuple[Resource, Path], ...]:
    """The set's Karpenter node classes on Bottlerocket that a GPU node pool uses, each with the
    field that says Bottlerocket."""
    return ctx.memo(("hostdriver", "bottlerocket"), lambda: tuple(_bottlerocket_classes(tuple(ctx.of_kind(*_KINDS)))))


def bottlerocket_subject(resource: Resource) -> str:
    """How messages name a Bottlerocket node class: "a GPU NodePool's EC2NodeClass"."""
    return {"EC2NodeClass": "a GPU NodePool's EC2NodeClass", "AWSNodeTemplate": "a GPU Provisioner's AWSNodeTemplate"}.get(
        resource.kind or "", "a GPU Provisioner")


def _bottlerocket(resources: tuple[Resource, ...]) -> Iterator[Evidence]:
    for resource, path in _bottlerocket_classes(resources):
        yield Evidence(resource, path, f"{bottlerocket_subject(resource)} runs Bottlerocket, whose NVIDIA variants carry the driver")


def _eks_accelerated(resources: tuple[Resource, ...]) -> Iterator[Evidence]:
    used = _gpu_node_classes(resources)
    for resource in resources:
        if resource.kind != "EC2NodeClass" or resource.ref.name not in used:
            continue
        if str(get_value(resource.data, "spec", "amiFamily")).upper() in _EKS_OPTIMIZED:
            yield Evidence(resource, ("spec", "amiFamily"), _EKS_ACCELERATED, detected=True)
        terms = get_value(resource.data, "spec", "amiSelectorTerms")
        for index, term in enumerate(terms if isinstance(terms, list) else ()):
            alias = str(term.get("alias", "")) if isinstance(term, Mapping) else ""
            if alias.partition("@")[0].upper() in _EKS_OPTIMIZED:
                yield Evidence(resource, ("spec", "amiSelectorTerms", index, "alias"), _EKS_ACCELERATED, detected=True)


_EKS_OPTIMIZED = frozenset({"AL2", "AL2023"})
_EKS_ACCELERATED = "a GPU NodePool's EC2NodeClass runs the EKS-optimized AMI, whose accelerated variant carries the driver"


def _gpu_node_classes(resources: tuple[Resource, ...]) -> set[str]:
    """The names of the EC2NodeClasses the set's GPU NodePools use."""
    return {
        str(get_value(r.data, "spec", "template", "spec", "nodeClassRef", "name"))
        for r in resources if r.kind == "NodePool" and karpenter_gpu(r.data)
    }


def _bottlerocket_classes(resources: tuple[Resource, ...]) -> Iterator[tuple[Resource, Path]]:
    """EC2NodeClasses (AWSNodeTemplates) on Bottlerocket that a GPU NodePool (Provisioner) of the
    set uses, and GPU Provisioners with an inline Bottlerocket ``provider``."""
    used = _gpu_node_classes(resources)
    templates = set()
    for resource in resources:
        if resource.kind != "Provisioner" or not karpenter_gpu(resource.data):
            continue
        templates.add(str(get_value(resource.data, "spec", "providerRef", "name")))
        if _is_bottlerocket(get_value(resource.data, "spec", "provider", "amiFamily")):
            yield resource, ("spec", "provider", "amiFamily")
    for resource in resources:
        if not ((resource.kind == "EC2NodeClass" and resource.ref.name in used)
                or (resource.kind == "AWSNodeTemplate" and resource.ref.name in templates)):
            continue
        if _is_bottlerocket(get_value(resource.data, "spec", "amiFamily")):
            yield resource, ("spec", "amiFamily")
        terms = get_value(resource.data, "spec", "amiSelectorTerms")
        for index, term in enumerate(terms if isinstance(terms, list) else ()):
            if isinstance(term, Mapping) and str(term.get("alias", "")).lower().startswith("bottlerocket@"):
                yield resource, ("spec", "amiSelectorTerms", index, "alias")


def _is_bottlerocket(family: Any) -> bool:
    return str(family).lower() == "bottlerocket"


def _toolkit(resource: Resource, path: Path, names: list[str]) -> Iterator[Evidence]:
    found = list(talos.nvidia_extensions(names, (talos.TOOLKIT_EXTENSION,)))
    if found:
        yield Evidence(resource, path, f"the Talos extension {found[0]}")
