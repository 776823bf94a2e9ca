"""Cross-field checks of the cluster and its node pools: GPU models, vendor, names, versions, drivers, MIG.

Each check yields a ``Finding``, ``(path, message)``; the message names what to change.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator

from gpustack.spec.gpu_catalogue import load_catalogue
from gpustack.spec.labelling import SECONDS_PER_NODE, duration_seconds, nodes, shortest_seconds
from gpustack.spec.models import GpuStack
from gpustack.spec.models.cluster import Mps, NodePool
from gpustack.spec.models.workloads import Nbody, SmokeTest, Vllm
from gpustack.spec.partitioning import (
    COMPUTE_SLICES,
    DEVICE_PLUGIN_CONFIG_LABEL,
    MEMORY_SLICES,
    MIG_CONFIG_LABEL,
    mig_pools,
    mig_slices,
)
from gpustack.spec.pools import SKIP_DRIVER_LABEL, gpu_model, hami_pools, on_nvswitch, repels, workload_pool
from gpustack.suggest import did_you_mean

Finding = tuple[tuple[str | int, ...], str]


def _pool_path(index: int, *rest: str | int) -> tuple[str | int, ...]:
    return ("spec", "nodePools", index, *rest)


def check_gpu_models(stack: GpuStack) -> Iterator[Finding]:
    catalogue = load_catalogue()
    for i, pool in enumerate(stack.spec.nodePools):
        if pool.gpu.custom is None and catalogue.resolve(pool.gpu.model) is None:
            hint = did_you_mean(catalogue.suggestions(pool.gpu.model))
            yield _pool_path(i, "gpu", "model"), (
                f"unknown GPU model {pool.gpu.model!r}; {hint + ' ' if hint else ''}`gpustack gpus` lists "
                "the catalogue. For another GPU add gpu.custom with its facts (see `gpustack schema`)"
            )


NVIDIA_PCI_VENDOR = "10de"


def check_vendor(stack: GpuStack) -> Iterator[Finding]:
    """Everything gpustack renders (device plugin, GPU Operator, DCGM, HAMi) is NVIDIA's."""
    for i, pool in enumerate(stack.spec.nodePools):
        custom = pool.gpu.custom
        if custom is not None and custom.pciVendor != NVIDIA_PCI_VENDOR:
            yield _pool_path(i, "gpu", "custom", "pciVendor"), (
                f"pool {pool.name!r} has a GPU of PCI vendor {custom.pciVendor}, not NVIDIA ({NVIDIA_PCI_VENDOR}): "
                "gpustack renders NVIDIA's stack only (driver, device plugin, GPU Operator, DCGM); deploy that "
                "vendor's own device plugin and leave this pool out of the spec"
            )


def check_labelling_interval(stack: GpuStack) -> Iterator[Finding]:
    """A relabel interval the spec sets must suit the fleet (what `gpustack lint` GS021 asks)."""
    wanted = shortest_seconds(stack)
    for path, value in (
        (("spec", "nfd", "sleepInterval"), stack.spec.nfd.sleepInterval),
        (("spec", "devicePlugin", "gfd", "sleepInterval"), stack.spec.devicePlugin.gfd.sleepInterval),
    ):
        if value is not None and 0 < duration_seconds(value) < wanted:
            yield path, (
                f"{value} relabels {nodes(stack)} nodes too often for etcd ({SECONDS_PER_NODE} s per node): "
                f"use at least {wanted:.0f}s, or leave it out for a default that suits the fleet"
            )


def check_unique_pools(stack: GpuStack) -> Iterator[Finding]:
    seen: set[str] = set()
    pools = [("nodePools", i, p.name) for i, p in enumerate(stack.spec.nodePools)]
    pools += [("systemPools", i, p.name) for i, p in enumerate(stack.spec.systemPools)]
    for section, i, name in pools:
        if name in seen:
            yield ("spec", section, i, "name"), f"node pool {name!r} is defined twice; pool names must be unique"
        seen.add(name)


# The field that pins each distribution's release.
RELEASE_FIELD = {"k3s": "k3sVersion", "kubeadm": "kubeadmVersion", "talos": "talosVersion"}


def check_cluster(stack: GpuStack) -> Iterator[Finding]:
    cluster = stack.spec.cluster
    path = ("spec", "cluster")
    own = f"{cluster.distribution} takes {RELEASE_FIELD[cluster.distribution]}"
    if cluster.kubeadmVersion and cluster.distribution != "kubeadm":
        yield (*path, "kubeadmVersion"), f"kubeadmVersion is for distribution kubeadm; {own}"
    if cluster.controlPlaneEndpoint and cluster.distribution != "kubeadm":
        yield (*path, "controlPlaneEndpoint"), (
            "controlPlaneEndpoint is for distribution kubeadm; K3s agents join the server address of the README's "
            "step, Talos nodes the endpoint of their machine config"
        )
    if cluster.kubeadmVersion and cluster.kubeadmVersion.split(".")[1] != str(cluster.minor):
        yield (*path, "kubeadmVersion"), (
            f"kubeadmVersion {cluster.kubeadmVersion} is not of Kubernetes {cluster.kubernetesVersion}: "
            "make the two agree"
        )
    if cluster.k3sVersion and cluster.distribution != "k3s":
        yield (*path, "k3sVersion"), f"k3sVersion is for distribution k3s; {own}"
    k3s_minor = re.fullmatch(r"v1\.([0-9]+)\.[0-9]+\+k3s[0-9]+", cluster.k3sVersion or "")
    if cluster.k3sVersion is not None and k3s_minor is None:
        yield (*path, "k3sVersion"), (
            f"k3sVersion {cluster.k3sVersion!r} is not a K3s release such as v1.36.4+k3s1 (the install script's "
            "INSTALL_K3S_VERSION)"
        )
    elif k3s_minor is not None and k3s_minor.group(1) != str(cluster.minor):
        yield (*path, "k3sVersion"), (
            f"k3sVersion {cluster.k3sVersion} is not of Kubernetes {cluster.kubernetesVersion}: make the two agree"
        )
    for i, address in enumerate(cluster.serverAddresses):
        try:
            ipaddress.ip_address(address)
        except ValueError:
            yield (*path, "serverAddresses", i), (
                f"{address!r} is not an IP address; kube-prometheus-stack's endpoints take the servers' IPs"
            )
    if cluster.podSubnet:
        try:
            ipaddress.ip_network(cluster.podSubnet)
        except ValueError:
            yield (*path, "podSubnet"), f"{cluster.podSubnet!r} is not a network in CIDR notation, e.g. 10.244.0.0/16"


def check_system_pool(stack: GpuStack) -> Iterator[Finding]:
    """kubeadm and Talos taint their control plane: with every pool tainted, the monitoring stack
    and the NFD master (no GPU tolerations) would stay Pending."""
    spec = stack.spec
    if spec.cluster.distribution not in ("kubeadm", "talos") or not all(repels(p.taints) for p in spec.nodePools):
        return
    if any(not repels(p.taints) for p in spec.systemPools):
        return
    yield ("spec", "nodePools"), (
        f"every node pool is tainted and {spec.cluster.distribution} taints the control plane, so Prometheus, Grafana, "
        "kube-state-metrics and the NFD master have nowhere to run: add an untainted pool under "
        "spec.systemPools (nodes without GPUs), or leave one pool untainted"
    )


def check_fabric_manager_off(stack: GpuStack) -> Iterator[Finding]:
    """An NVSwitch board with a host driver and ``driver.fabricManager: false`` runs no Fabric
    Manager the stack knows of, so GPU pods rendered there never start (and GS044 says so): the
    smoke Job of the pool, and the workloads placed on it."""
    gpu_workloads = [w for w in stack.spec.workloads if isinstance(w, (Vllm, SmokeTest, Nbody))]
    for i, pool in enumerate(stack.spec.nodePools):
        if pool.driver.source != "host" or pool.driver.fabricManager or not on_nvswitch(pool):
            continue
        placed = [f"workload {w.name}" for w in gpu_workloads if workload_pool(stack, w) is pool]
        pods = (["its smoke Job"] if stack.spec.smokeJobs else []) + placed
        if pods:
            what = ", ".join(pods)
            yield _pool_path(i, "driver", "fabricManager"), (
                f"{pool.name}'s NVSwitch boards need NVIDIA Fabric Manager before CUDA starts, and with false nothing "
                f"in the rendered stack runs it, so the GPU pods it renders there ({what}) would never start: set "
                "true (the host steps install it), or render no GPU pods there (smokeJobs: false, no workload on "
                "the pool) and deploy the stack with what runs Fabric Manager"
            )


def check_driver_source(stack: GpuStack) -> Iterator[Finding]:
    operator = stack.spec.gpuOperator.enabled
    for i, pool in enumerate(stack.spec.nodePools):
        if pool.driver.source == "operator" and not operator:
            yield _pool_path(i, "driver", "source"), (
                f"pool {pool.name!r} expects the GPU Operator's driver container but "
                "spec.gpuOperator.enabled is false: enable the operator or set driver.source: host"
            )
        if (
            operator
            and pool.driver.source == "host"
            and any(p.driver.source == "operator" for p in stack.spec.nodePools)
            and pool.labels.get(SKIP_DRIVER_LABEL) != "false"
        ):
            yield _pool_path(i, "driver", "source"), (
                f"pool {pool.name!r} keeps its host driver while the GPU Operator deploys its driver container "
                f"to GPU nodes: add `{SKIP_DRIVER_LABEL}: \"false\"` to the pool's labels (and label its nodes "
                "so), or the operator installs a second driver on them"
            )
        if operator and pool.toolkit.version:
            yield _pool_path(i, "toolkit", "version"), (
                f"pool {pool.name!r}: the GPU Operator runs its own toolkit container, so no toolkit package "
                "is installed on the host to pin: remove toolkit.version (the operator's toolkit follows its chart)"
            )
        if _reads_no_containerd_2_config(stack, pool):
            yield _pool_path(i, "toolkit", "version"), (
                f"pool {pool.name!r}: toolkit {pool.toolkit.version}'s nvidia-ctk cannot read containerd 2's config "
                "(version 3), which the kubeadm host steps install; it reads it from toolkit 1.17.4 on "
                f"({TOOLKIT_RELEASE_NOTES}): set toolkit.version to 1.17.4 or later"
            )
        if pool.driver.source == "operator" and pool.toolkit.mode == "legacy":
            yield _pool_path(i, "toolkit", "mode"), (
                f"pool {pool.name!r}: the GPU Operator installs its own toolkit and injects devices "
                "through CDI (cdi.enabled: true); the host-side legacy OCI hook mode cannot be used "
                "with an operator-managed driver. Use toolkit.mode: auto or cdi"
            )


# nvidia-ctk reads containerd's config version 3 (containerd 2) from toolkit 1.17.4: its release notes,
# "Add support for containerd version 3 config files".
TOOLKIT_RELEASE_NOTES = "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/release-notes.html"
CONTAINERD_2_TOOLKIT = (1, 17, 4)


def _reads_no_containerd_2_config(stack: GpuStack, pool: NodePool) -> bool:
    """A kubeadm pool whose host toolkit, pinned, predates containerd 2's config."""
    version = pool.toolkit.version
    return (stack.spec.cluster.distribution == "kubeadm" and not stack.spec.gpuOperator.enabled and version is not None
            and tuple(int(part) for part in version.split(".")) < CONTAINERD_2_TOOLKIT)


def check_mig(stack: GpuStack) -> Iterator[Finding]:
    """The cluster-wide migStrategy: pools without MIG then serve whole GPUs, so one MIG pool is enough."""
    plugin = stack.spec.devicePlugin
    if plugin.migStrategy == "none":
        return
    if not any(gpu_model(pool).mig_capable for pool in stack.spec.nodePools):
        yield ("spec", "devicePlugin", "migStrategy"), (
            f"migStrategy {plugin.migStrategy!r} but no pool has MIG-capable GPUs "
            f"({', '.join(sorted({p.gpu.model for p in stack.spec.nodePools}))}): set migStrategy: none or use a "
            "MIG-capable GPU (A100, H100, H200)"
        )
    if mig_pools(stack):
        yield ("spec", "devicePlugin", "migStrategy"), (
            "pools set their own mig (strategy and layout): leave devicePlugin.migStrategy at none"
        )
    if isinstance(plugin.sharing, Mps):
        yield ("spec", "devicePlugin", "sharing", "strategy"), (
            "MPS sharing does not work on MIG devices: use migStrategy: none or sharing strategy timeSlicing"
        )


def check_pool_partitioning(stack: GpuStack) -> Iterator[Finding]:
    """Per-pool sharing and MIG layouts: the device plugin must apply them, the GPU must have the profiles."""
    spec = stack.spec
    hami = {p.name for p in hami_pools(stack)}
    for i, pool in enumerate(spec.nodePools):
        yield from _config_label_problems(i, pool)
        if pool.sharing is not None or pool.mig is not None:
            yield from _pool_config_problems(stack, i, pool, in_hami=pool.name in hami)
        if pool.mig is not None:
            yield from _layout_problems(i, pool)
    strategies = {pool.mig.strategy for pool in mig_pools(stack) if pool.mig is not None}
    if spec.gpuOperator.enabled and len(strategies) > 1:
        yield ("spec", "nodePools"), (
            "the GPU Operator applies one mig.strategy to every node, the pools ask for single and mixed: "
            "use one strategy on every MIG pool"
        )


def _pool_config_problems(stack: GpuStack, i: int, pool: NodePool, *, in_hami: bool) -> Iterator[Finding]:
    field = "sharing" if pool.sharing is not None else "mig"
    if in_hami:
        yield _pool_path(i, field), f"pool {pool.name!r} is served by HAMi, which splits GPUs itself: remove {field}"
    elif not stack.spec.devicePlugin.enabled:
        yield _pool_path(i, field), (
            f"pool {pool.name!r} sets {field}, which NVIDIA's device plugin applies, but devicePlugin.enabled is false"
        )
    if pool.sharing is not None and pool.mig is not None and pool.sharing.strategy != "none":
        yield _pool_path(i, "sharing"), f"pool {pool.name!r} sets both sharing and a MIG layout: choose one"


def _config_label_problems(i: int, pool: NodePool) -> Iterator[Finding]:
    """The labels selecting a pool's configs must name the configs the stack renders for it."""
    own_config = {DEVICE_PLUGIN_CONFIG_LABEL: pool.sharing is not None or pool.mig is not None,
                  MIG_CONFIG_LABEL: pool.mig is not None}
    for label in (DEVICE_PLUGIN_CONFIG_LABEL, MIG_CONFIG_LABEL):
        value = pool.labels.get(label)
        if value is not None and value != pool.name:
            yield _pool_path(i, "labels", label), (
                f"gpustack names pool {pool.name!r}'s configs after the pool: the label must be {label}={pool.name}"
            )
        elif value is not None and not own_config[label]:
            # config-manager and mig-parted fail on a name their config file lacks:
            # https://github.com/NVIDIA/k8s-device-plugin/blob/v0.19.3/cmd/config-manager/main.go
            agent = "the MIG manager" if label == MIG_CONFIG_LABEL else "the device plugin's config-manager"
            yield _pool_path(i, "labels", label), (
                f"pool {pool.name!r} sets no {'mig' if label == MIG_CONFIG_LABEL else 'sharing or mig'} of its own, so "
                f"the stack renders no config {value!r} and {agent} fails on its nodes (\"specified config {value} "
                "does not exist\"): remove the label, and the pool takes the default config"
            )


def _layout_problems(i: int, pool: NodePool) -> Iterator[Finding]:
    assert pool.mig is not None
    model = gpu_model(pool)
    path = _pool_path(i, "mig", "layout")
    if not model.mig_capable:
        yield _pool_path(i, "mig"), f"pool {pool.name!r} has {pool.gpu.model} GPUs, which cannot do MIG"
        return
    compute = memory = 0
    for profile, count in pool.mig.layout.items():
        slices = mig_slices(profile, model)
        if slices is None:
            yield (*path, profile), (
                f"{pool.gpu.model} has no MIG profile {profile!r}; it has {', '.join(model.migProfiles)}"
            )
            return
        if count < 1:
            yield (*path, profile), f"{profile}: the count must be at least 1"
            return
        compute += slices[0] * count
        memory += slices[1] * count
    if compute > COMPUTE_SLICES or memory > MEMORY_SLICES:
        yield path, (
            f"the layout takes {compute} compute and {memory} memory slices of a {pool.gpu.model} "
            f"({model.memoryMiB} MiB), which has {COMPUTE_SLICES} and {MEMORY_SLICES}: use fewer or smaller instances"
        )
    if pool.mig.strategy == "single" and len(pool.mig.layout) > 1:
        yield _pool_path(i, "mig", "strategy"), (
            "strategy single advertises every MIG device as nvidia.com/gpu, so all must be one profile: "
            "use one profile or strategy mixed"
        )
