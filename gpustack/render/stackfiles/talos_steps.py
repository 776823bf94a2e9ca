"""The stack README's host steps on Talos: talosctl instead of apt, DKMS and kubeadm.

Talos has no package manager and a read-only root: the NVIDIA driver and toolkit are system
extensions baked into an installer image that the Image Factory builds from a schematic
(``talos/pools/<pool>.schematic.yaml``), bound to one Talos release; the rest is a
machine-config patch per pool (``talos_config``). The order is the guides'
(https://docs.siderolabs.com/talos/v1.13/configure-your-talos-cluster/hardware-and-drivers/nvidia-gpu,
https://docs.siderolabs.com/talos/v1.13/configure-your-talos-cluster/hardware-and-drivers/nvidia-gpu-proprietary):
install or upgrade to the image with the extensions, patch the machine config to load the modules,
then check that the extensions are there and the modules loaded.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection

from gpustack.render import gpu_isolation
from gpustack.render.stackfiles import cluster_config, cni, talos_config
from gpustack.render.stackfiles.step import Step, all_pools, pool_list, sentences
from gpustack.spec import talos
from gpustack.spec.models import GpuStack
from gpustack.spec.models.cluster import NodePool
from gpustack.spec.pools import on_nvswitch

NODE = "NODE='IP address of the node'"
# The extension's service (https://github.com/siderolabs/extensions/blob/main/nvidia-gpu/nvidia-fabricmanager/lts/nvidia-fabricmanager.yaml),
# which talosctl lists as ext-<name>.
FABRIC_MANAGER_SERVICE = "ext-nvidia-fabricmanager"


def steps(stack: GpuStack, paths: Collection[str]) -> list[Step]:
    """``paths``: the files of the tree, which name the patches there are (a pool with nothing to
    patch has none, the control plane one only when the cluster needs gates or a pod subnet)."""
    groups = _by_extensions(stack)
    result = [_image_step(stack, extensions, pools, named=len(groups) > 1) for extensions, pools in groups.items()]
    result.append(_patch_step(stack, paths))
    result.append(_cni_step(stack))
    result.append(_check_step(stack))
    return result


def _by_extensions(stack: GpuStack) -> dict[tuple[str, ...], list[NodePool]]:
    """GPU pools grouped by their extensions: one installer image per group."""
    groups: dict[tuple[str, ...], list[NodePool]] = defaultdict(list)
    for pool in stack.spec.nodePools:
        groups[tuple(talos.extensions(pool))].append(pool)
    return dict(groups)


def _image_step(stack: GpuStack, extensions: tuple[str, ...], pools: list[NodePool], *, named: bool) -> Step:
    """``named``: several installers, so the heading names its pools."""
    release = stack.spec.cluster.talosVersion
    schematic = talos_config.schematic_path(pools[0].name)
    image = talos_config.installer_image("${SCHEMATIC_ID}", stack)
    names = ", ".join(f"`{name}`" for name in extensions)
    return Step(
        f"Talos {release} installer with the NVIDIA extensions"
        + (f" ({', '.join(pool.name for pool in pools)})" if named else ""),
        f"For each node of {pool_list(pools)}",
        (
            f'SCHEMATIC_ID="$(curl -sf -X POST --data-binary @{schematic} {talos_config.FACTORY}/schematics | jq -r .id)"',
            NODE,
            f'talosctl -n "$NODE" upgrade --image "{image}"',
        ),
        sentences(
            f"The Image Factory builds an installer of Talos {release} with the system extensions {names} "
            f"(the schematic `{schematic}`; the pools of this step share it). A node not yet installed boots and "
            f"installs from that image instead (the factory's ISO or PXE assets of the same schematic, or "
            "`machine.install.image` in its machine config).",
            "The extensions are bound to the Talos release they were built for: upgrade Talos only with an "
            "installer of a schematic for the new release, never the plain installer (which drops them), and "
            "change the driver branch or module flavour the same way, one node at a time, drained first.",
        ),
    )


def _patch_step(stack: GpuStack, paths: Collection[str]) -> Step:
    commands = [NODE]
    for pool in all_pools(stack):
        patch = talos_config.patch_path(pool.name)
        if patch in paths:
            commands += [f"# a node of {pool.name}:", f'talosctl -n "$NODE" patch mc --patch @{patch}']
    control_plane = talos_config.CONTROL_PLANE_PATCH in paths
    if control_plane:
        commands += [
            "# each control-plane node:",
            f'talosctl -n "$NODE" patch mc --patch @{talos_config.CONTROL_PLANE_PATCH}',
        ]
    return Step(
        "Machine-config patches",
        "From a machine with talosctl, for each node of its pool",
        tuple(commands),
        sentences(
            "The GPU pools' patches load the NVIDIA kernel modules and relax Talos's BPF JIT hardening to "
            "`net.core.bpf_jit_harden: 1`, which the toolkit's nvidia-container-cli needs for its BPF programs; "
            "every pool's patch gives its nodes the pool's labels (`machine.nodeLabels`, which Talos keeps on "
            "the Node object) and taints, which the kubelet registers the node with "
            "(`machine.kubelet.extraConfig.registerWithTaints`): the API server's NodeRestriction plugin forbids "
            "a node to change its own taints later, so a node already in the cluster needs "
            "`kubectl taint nodes \"$NODE\" <key>[=<value>]:<effect>` once.",
            "A new cluster takes them at generation instead: `talosctl gen config` with "
            "`--config-patch-worker @<pool's patch>` per pool"
            + (f" and `--config-patch-control-plane @{talos_config.CONTROL_PLANE_PATCH}`" if control_plane else "")
            + ".",
            "Patch after the upgrade of the previous step: a node loading the modules without the extensions "
            "fails to find them.",
            gpu_isolation.talos_note(stack),
        ),
    )


def _cni_step(stack: GpuStack) -> Step:
    return Step(
        f"Pod network: Cilium {cni.VERSION}" if cni.installs(stack) else "Pod network: yours",
        "From a machine with the cluster's kubeconfig (`talosctl kubeconfig`), once `talosctl bootstrap` "
        "has started the control plane",
        cni.commands(stack),
        sentences(
            cni.step_sentence(stack, cluster_config.pod_subnet(stack)),
            f"`{talos_config.CONTROL_PLANE_PATCH}` sets `cluster.network.cni.name: none`, so Talos deploys no "
            "Flannel of its own"
            + (", and the values are Cilium's for Talos (no `SYS_MODULE`, Talos's cgroup2 mount, "
               "the API server through KubePrism on localhost:7445)." if cni.installs(stack) else "."),
            "Talos deploys its CNI when the cluster is bootstrapped: a cluster that already runs Talos's Flannel "
            f"keeps it after the patch, and moves to Cilium node by node as Cilium's migration guide says ({cni.MIGRATION}).",
        ),
    )


def _check_step(stack: GpuStack) -> Step:
    commands = [
        NODE,
        'talosctl -n "$NODE" get extensions',
        'talosctl -n "$NODE" read /proc/modules | grep nvidia',
        'talosctl -n "$NODE" read /proc/driver/nvidia/version',
    ]
    boards = [p for p in stack.spec.nodePools if p.driver.fabricManager and on_nvswitch(p)]
    if boards:
        commands.append(f'talosctl -n "$NODE" service {FABRIC_MANAGER_SERVICE}  # {", ".join(p.name for p in boards)}')
    return Step(
        "Check the driver",
        f"For each node of {pool_list(stack.spec.nodePools)}",
        tuple(commands),
        sentences(
            "`get extensions` lists the NVIDIA extensions of the schematic, `/proc/modules` the four nvidia "
            "modules, and the driver's version file the release the extensions were built with.",
            f"On the NVSwitch boards of {pool_list(boards)} the Fabric Manager extension runs as the service "
            f"`{FABRIC_MANAGER_SERVICE}`, at the driver's release; CUDA starts only once it has configured the "
            "NVSwitches."
            if boards
            else "",
        ),
    )
