"""Talos files of the tree (``talos/``): machine-config patches and Image Factory schematics.

- ``talos/pools/<pool>.patch.yaml``: a strategic merge patch for the nodes of one pool (none for a
  pool with nothing to patch), as
  ``talosctl patch mc --patch @file`` and ``talosctl gen config --config-patch-worker @file``
  take it. GPU pools load the NVIDIA kernel modules and set ``net.core.bpf_jit_harden`` as
  Talos's NVIDIA guides say
  (https://docs.siderolabs.com/talos/v1.13/configure-your-talos-cluster/hardware-and-drivers/nvidia-gpu),
  every pool registers its labels (``machine.nodeLabels``), its taints and its kubelet's feature
  gates (``machine.kubelet.extraConfig``: ``registerWithTaints``, ``featureGates``); with ``cluster.nvidiaDefaultRuntime`` the GPU
  pools write containerd's CRI drop-in that makes nvidia the default runtime (the fact lives in
  ``gpustack.lint.facts.talos``, which GS004 reads back).
- ``talos/pools/<pool>.schematic.yaml``: the GPU pool's Image Factory schematic, the official
  system extensions of ``gpustack.spec.talos.extensions``.
- ``talos/controlplane.patch.yaml``: no CNI of Talos's own (``cluster.network.cni.name: none``:
  Cilium, ``cluster/cni/``, replaces Talos's default Flannel, which does not enforce NetworkPolicy;
  https://docs.siderolabs.com/kubernetes-guides/cni/deploying-cilium), the control plane's feature
  gates (``extraArgs`` of the API server, controller manager and scheduler, the kubelet's) and pod
  subnet (https://www.talos.dev/v1.13/reference/configuration/v1alpha1/config/).

Taints are the kubelet's ``registerWithTaints``, not ``machine.nodeTaints``: Talos applies
``nodeTaints`` with the node's own credentials, and the API server's NodeRestriction admission
plugin forbids a kubelet to change its Node's taints once registered ("worker nodes are not
allowed to modify the taints", ``MachineNodeTaints`` in Talos's machinery; the plugin:
https://kubernetes.io/docs/reference/access-authn-authz/admission-controllers/#noderestriction).
A node registers with them when it joins; a node already in the cluster needs ``kubectl taint``.
"""

from __future__ import annotations

from typing import Any

from gpustack.lint.facts.talos import CRI_CUSTOMIZATION, KERNEL_MODULES, default_runtime_part
from gpustack.render.stackfiles import cni
from gpustack.render.stackfiles.cluster_config import Gates, gate_flag
from gpustack.spec import talos
from gpustack.spec.models import GpuStack
from gpustack.spec.models.cluster import NodePool, SystemPool, Taint
from gpustack.spec.partitioning import registered_labels
from gpustack.yamlio import dump

FOLDER = "talos"
FACTORY_HOST = "factory.talos.dev"
FACTORY = f"https://{FACTORY_HOST}"
CONTROL_PLANE_PATCH = f"{FOLDER}/controlplane.patch.yaml"
# The toolkit's nvidia-container-cli loads BPF programs, which Talos's default of 2 forbids
# (https://github.com/siderolabs/extensions/blob/main/nvidia-gpu/nvidia-container-toolkit/README.md).
SYSCTLS = {"net.core.bpf_jit_harden": "1"}
_EXTRA_ARGS = {"apiServer": "apiserver", "controllerManager": "controller-manager", "scheduler": "scheduler"}


def installer_image(schematic_id: str, stack: GpuStack) -> str:
    """The installer image of a schematic at the spec's Talos release."""
    return f"{FACTORY_HOST}/installer/{schematic_id}:{stack.spec.cluster.talosVersion}"


def patch_path(pool: str) -> str:
    return f"{FOLDER}/pools/{pool}.patch.yaml"


def schematic_path(pool: str) -> str:
    return f"{FOLDER}/pools/{pool}.schematic.yaml"


def config_files(stack: GpuStack, gates: Gates) -> dict[str, str]:
    """``talos/…`` files (paths relative to the stack's output folder)."""
    files = {schematic_path(pool.name): schematic(stack, pool) for pool in stack.spec.nodePools}
    for pool in [*stack.spec.nodePools, *stack.spec.systemPools]:
        patch = pool_patch(stack, pool, gates)
        if patch is not None:
            files[patch_path(pool.name)] = patch
    files[CONTROL_PLANE_PATCH] = control_plane_patch(stack, gates)
    return {**files, **cni.files(stack)}


def pool_patch(stack: GpuStack, pool: NodePool | SystemPool, gates: Gates) -> str | None:
    """The pool's patch; None for a pool without GPUs, labels, taints or kubelet gates (talosctl
    refuses an empty patch: "config not found")."""
    machine: dict[str, Any] = {}
    gpu = isinstance(pool, NodePool)
    if gpu:
        machine["kernel"] = {"modules": [{"name": name} for name in KERNEL_MODULES]}
        machine["sysctls"] = dict(SYSCTLS)
    labels = registered_labels(stack, pool)
    if labels:
        machine["nodeLabels"] = labels
    kubelet: dict[str, Any] = {}
    if pool.taints:
        kubelet["registerWithTaints"] = [_taint(taint) for taint in pool.taints]
    if gates["kubelet"]:
        kubelet["featureGates"] = gates["kubelet"]
    if kubelet:
        machine["kubelet"] = {"extraConfig": kubelet}
    if gpu and stack.spec.cluster.nvidiaDefaultRuntime:
        machine["files"] = [{"content": default_runtime_part("nvidia"), "path": CRI_CUSTOMIZATION, "op": "create"}]
    what = "GPU pool" if gpu else "pool"
    header = (
        f"# Talos machine-config patch of {what} {pool.name} (stack {stack.metadata.name}): on each of its nodes\n"
        f"#   talosctl -n \"$NODE\" patch mc --patch @{patch_path(pool.name)}\n"
        "# or at generation: talosctl gen config ... --config-patch-worker @<this file>.\n"
    )
    return header + dump({"machine": machine}) if machine else None


def _taint(taint: Taint) -> dict[str, str]:
    """A taint as KubeletConfiguration's ``registerWithTaints`` lists it (core/v1 Taint)."""
    return {"key": taint.key, **({"value": taint.value} if taint.value else {}), "effect": taint.effect}


def schematic(stack: GpuStack, pool: NodePool) -> str:
    release = stack.spec.cluster.talosVersion
    header = (
        f"# Image Factory schematic of GPU pool {pool.name} (stack {stack.metadata.name}, Talos {release}):\n"
        f"#   curl -X POST --data-binary @{schematic_path(pool.name)} {FACTORY}/schematics\n"
        f"# returns its id; the pool's nodes install {installer_image('<id>', stack)}.\n"
    )
    body = {"customization": {"systemExtensions": {"officialExtensions": talos.extensions(pool)}}}
    return header + dump(body)


def control_plane_patch(stack: GpuStack, gates: Gates) -> str:
    """The control plane's CNI (none of Talos's), gates and pod subnet."""
    network: dict[str, Any] = {"cni": {"name": "none"}}
    if stack.spec.cluster.podSubnet:
        network["podSubnets"] = [stack.spec.cluster.podSubnet]
    cluster: dict[str, Any] = {"network": network}
    for section, component in _EXTRA_ARGS.items():
        if gates[component]:
            cluster[section] = {"extraArgs": {"feature-gates": gate_flag(gates[component])}}
    patch: dict[str, Any] = {}
    if gates["kubelet"]:
        patch["machine"] = {"kubelet": {"extraConfig": {"featureGates": gates["kubelet"]}}}
    patch["cluster"] = cluster
    header = (
        f"# Talos machine-config patch of the control plane (stack {stack.metadata.name}): no CNI of Talos's own\n"
        f"# ({f'Cilium, {cni.PATH},' if cni.installs(stack) else 'the CNI you install'} instead), the feature gates and\n"
        "# pod subnet the stack needs.\n"
        f"# talosctl gen config ... --config-patch-control-plane @{CONTROL_PLANE_PATCH},\n"
        f"# or on each control-plane node: talosctl -n \"$NODE\" patch mc --patch @{CONTROL_PLANE_PATCH}\n"
    )
    return header + dump(patch)
