"""Talos documents as a repository keeps them: none is a Kubernetes object.

- a machine config or a patch of one: top-level ``machine`` or ``cluster`` sections
  (https://www.talos.dev/latest/reference/configuration/v1alpha1/config/);
- talhelper's ``talconfig.yaml``: a cluster name and its nodes, patches inline
  (https://budimanjojo.github.io/talhelper/latest/reference/configuration/);
- an Image Factory schematic: ``customization.systemExtensions.officialExtensions``
  (https://github.com/siderolabs/image-factory#schematics);
- an Omni config patch (``metadata.type: ConfigPatches.omni.sidero.dev``): a machine-config
  patch as a YAML string in ``spec.data``, as ``omnictl apply`` takes it
  (https://docs.siderolabs.com/omni/omni-cluster-setup/how-configuration-works-in-omni).

The facts of Talos's NVIDIA support that both gpustack render (``gpustack.spec.talos``,
``render/stackfiles/talos_config``) and the lint rules read live here, in one place: the kernel
modules to load, the extensions' names, and containerd's CRI drop-in that makes nvidia the default
runtime (https://docs.siderolabs.com/talos/v1.13/configure-your-talos-cluster/hardware-and-drivers/nvidia-gpu-proprietary).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from gpustack.lint.facts.containerdconfig import CRI_RUNTIME_TABLE
from gpustack.lint.model import Path, Resource, get_value
from gpustack.lint.releases import helmvalues

MACHINE_SECTIONS = ("machine", "cluster")
# The NVIDIA driver's kernel modules, loaded through machine.kernel.modules.
KERNEL_MODULES = ("nvidia", "nvidia_uvm", "nvidia_drm", "nvidia_modeset")
# Official extensions: kernel modules (open, proprietary) and the driver's userspace with the
# toolkit, each with a -production or -lts branch suffix (or none, before Talos 1.8).
MODULE_EXTENSIONS = ("nvidia-open-gpu-kernel-modules", "nonfree-kmod-nvidia")
TOOLKIT_EXTENSION = "nvidia-container-toolkit"
FABRIC_MANAGER_EXTENSION = "nvidia-fabricmanager"
# Talos merges containerd's CRI config parts from this folder; the NVIDIA guide's default-runtime
# part is 20-customization.part, a containerd 2 TOML table (Talos 1.8 and later).
CRI_DROP_IN = "/etc/cri/conf.d/"
CRI_CUSTOMIZATION = CRI_DROP_IN + "20-customization.part"
# Talos runs containerd 2 with CRI config version 3 (``containerdconfig.CRI_DEFAULT_TABLES``)
# from v1.8.0 on (hack/cri-containerd.toml at siderolabs/talos v1.8.0; NVIDIA guides:
# https://www.talos.dev/v1.7/talos-guides/configuration/nvidia-gpu-proprietary/ uses the v2 table,
# https://www.talos.dev/v1.8/talos-guides/configuration/nvidia-gpu-proprietary/ the v3 one).
CRI_CONFIG_3_FROM = (1, 8)
OMNI_CONFIG_PATCH = "ConfigPatches.omni.sidero.dev"
_RELEASE = re.compile(r"v?(\d+)\.(\d+)\.\d+")
_RELEASE_TAG = re.compile(r"installer[^:]*:v(\d+)\.(\d+)\.\d+")
# The last release whose nvidia-container-toolkit extension carries the toolkit itself (from
# v1.15 it is the driver's userspace and the GPU Operator installs the toolkit):
# https://docs.siderolabs.com/talos/v1.13/configure-your-talos-cluster/hardware-and-drivers/nvidia-gpu
TOOLKIT_IN_EXTENSION_UNTIL = (1, 13)


def cri_config_version(release: tuple[int, int]) -> int:
    """The CRI config version a Talos release's containerd reads (3 from v1.8 on)."""
    return 3 if release >= CRI_CONFIG_3_FROM else 2


def default_runtime_part(runtime: str) -> str:
    """The CRI drop-in's content that makes ``runtime`` containerd's default (read back by ``containerdconfig.DEFAULT_RUNTIME``)."""
    return f'[{CRI_RUNTIME_TABLE}]\n  default_runtime_name = "{runtime}"\n'


def loads_nvidia_modules(config: Mapping[str, Any]) -> bool:
    """Whether a machine config or patch loads the NVIDIA driver's ``nvidia`` kernel module."""
    machine = config.get("machine")
    kernel = machine.get("kernel") if isinstance(machine, Mapping) else None
    modules = kernel.get("modules") if isinstance(kernel, Mapping) else None
    return any(isinstance(m, Mapping) and m.get("name") == KERNEL_MODULES[0] for m in modules or ())


def official_extensions(schematic: Mapping[str, Any]) -> list[str]:
    """An Image Factory schematic's official extensions, as listed (``siderolabs/<name>``)."""
    customization = schematic.get("customization")
    extensions = customization.get("systemExtensions") if isinstance(customization, Mapping) else None
    listed = extensions.get("officialExtensions") if isinstance(extensions, Mapping) else None
    return [str(name) for name in listed] if isinstance(listed, list) else []


def installer_release(config: Mapping[str, Any]) -> tuple[int, int] | None:
    """(1, 13) for a machine config installing ``…/installer…:v1.13.0`` (``machine.install.image``)."""
    return image_release(get_value(config, "machine", "install", "image"))


def image_release(image: Any) -> tuple[int, int] | None:
    """(1, 7) for an installer image ``factory.talos.dev/installer/<schematic>:v1.7.5``."""
    found = _RELEASE_TAG.search(image) if isinstance(image, str) else None
    return (int(found.group(1)), int(found.group(2))) if found else None


def release(version: Any) -> tuple[int, int] | None:
    """(1, 13) for ``v1.13.0`` (talhelper's ``talosVersion``)."""
    found = _RELEASE.fullmatch(version) if isinstance(version, str) else None
    return (int(found.group(1)), int(found.group(2))) if found else None


def install_extension_images(config: Mapping[str, Any]) -> list[str]:
    """``machine.install.extensions[].image``: extensions installed the way before schematics."""
    listed = get_value(config, "machine", "install", "extensions")
    return [str(e["image"]) for e in listed if isinstance(e, Mapping) and "image" in e] if isinstance(listed, list) else []


def nvidia_extensions(names: list[str], kinds: tuple[str, ...] = (*MODULE_EXTENSIONS, TOOLKIT_EXTENSION)) -> Iterator[str]:
    """The NVIDIA extensions among ``names`` (``siderolabs/<name>`` or an image reference): by
    default the driver's (kernel modules, its userspace with the toolkit)."""
    for name in names:
        bare = name.split("@")[0].rsplit("/", 1)[-1].split(":")[0]
        if bare.startswith(kinds):
            yield name


def is_schematic(resource: Resource) -> bool:
    """An Image Factory schematic: a ``customization`` section, no kind."""
    return resource.kind is None and isinstance(resource.data.get("customization"), Mapping)


def is_talconfig(resource: Resource) -> bool:
    """talhelper's ``talconfig.yaml``: a cluster name and its nodes."""
    return resource.kind is None and "clusterName" in resource.data and isinstance(resource.data.get("nodes"), list)


OMNI_TEMPLATE_KINDS = frozenset({"Cluster", "ControlPlane", "Workers", "Machine"})


def is_machine_config(resource: Resource) -> bool:
    """A Talos machine config or patch: a ``machine`` or ``cluster`` section, no kind."""
    return resource.kind is None and any(isinstance(resource.data.get(key), Mapping) for key in MACHINE_SECTIONS)


def is_omni_patch(resource: Resource) -> bool:
    """An Omni config patch: ``metadata.type: ConfigPatches.omni.sidero.dev``, the patch in ``spec.data``."""
    data = resource.data
    return (resource.kind is None and get_value(data, "metadata", "type") == OMNI_CONFIG_PATCH
            and isinstance(get_value(data, "spec", "data"), str))


def is_omni_template(resource: Resource) -> bool:
    """A document of an Omni cluster template (``kind: Cluster|ControlPlane|Workers|Machine``, no
    apiVersion; https://omni.siderolabs.com/reference/cluster-templates), which may carry
    machine-config patches inline."""
    return resource.kind in OMNI_TEMPLATE_KINDS and resource.api_version is None


def machine_configs(resource: Resource) -> Iterator[tuple[Path, Mapping[str, Any]]]:
    """The machine configs or patches a Talos document holds, each with where it sits: the
    document itself, a talconfig's patches, an Omni config patch's ``spec.data``, an Omni
    cluster template's ``patches[].inline``."""
    if is_talconfig(resource):
        yield from talconfig_patches(resource)
    elif is_omni_template(resource):
        patches = resource.data.get("patches")
        for index, patch in enumerate(patches if isinstance(patches, list) else ()):
            inline = patch.get("inline") if isinstance(patch, Mapping) else None
            if isinstance(inline, Mapping):
                yield ("patches", index, "inline"), inline
    elif is_omni_patch(resource):
        patch = helmvalues.yaml_mapping(resource.data["spec"]["data"])
        if isinstance(patch, Mapping):
            yield ("spec", "data"), patch
    elif is_machine_config(resource):
        yield (), resource.data


def talconfig_patches(resource: Resource) -> Iterator[tuple[Path, Mapping[str, Any]]]:
    """A talconfig's machine-config patches: at the top, under ``controlPlane``/``worker`` and per
    node; inline YAML strings read as documents (an ``@file`` patch is a document of its own)."""
    data = resource.data
    groups: list[tuple[Path, Any]] = [(("patches",), data.get("patches"))]
    groups += [((role, "patches"), get_value(data, role, "patches")) for role in ("controlPlane", "worker")]
    groups += [(("nodes", i, "patches"), node.get("patches")) for i, node in _nodes(data)]
    for path, patches in groups:
        for index, patch in enumerate(patches if isinstance(patches, list) else ()):
            if isinstance(patch, str) and not patch.lstrip().startswith("@"):
                patch = helmvalues.yaml_mapping(patch)
            if isinstance(patch, Mapping):
                yield (*path, index), patch


def talconfig_schematics(resource: Resource) -> Iterator[tuple[Path, Mapping[str, Any]]]:
    """A talconfig's Image Factory schematics: under ``controlPlane``/``worker`` and per node."""
    data = resource.data
    found: list[tuple[Path, Any]] = [((role, "schematic"), get_value(data, role, "schematic")) for role in ("controlPlane", "worker")]
    found += [(("nodes", i, "schematic"), node.get("schematic")) for i, node in _nodes(data)]
    yield from ((path, schematic) for path, schematic in found if isinstance(schematic, Mapping))


def _nodes(data: Mapping[str, Any]) -> Iterator[tuple[int, Mapping[str, Any]]]:
    nodes = data.get("nodes")
    yield from ((i, node) for i, node in enumerate(nodes if isinstance(nodes, list) else ()) if isinstance(node, Mapping))
