"""The spec's cluster and its node pools: metadata, Kubernetes, GPUs, driver, toolkit, sharing, MIG.

What the nodes are: the cluster's distribution and version, the GPU pools (GPU model and count,
driver and toolkit, time-slicing or MPS, MIG layout) and the pools without GPUs.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, field_validator

from gpustack.spec.gpu_catalogue import GpuModel
from gpustack.spec.models.base import (
    DNS_LABEL,
    K8S_MINOR,
    DriverVersion,
    LabelKey,
    Labels,
    LabelValue,
    MAX_NODES,
    NEWEST_MINOR,
    OLDEST_MINOR,
    Strict,
    Versioned,
    version_string,
)


class Metadata(Strict):
    name: str = Field(
        pattern=DNS_LABEL,
        description="Stack name (DNS-1123 label); render writes to output/<name> by default.",
    )
    description: str | None = Field(None, description="Free text, copied into the stack README.")


HA_GUIDE = "https://kubernetes.io/docs/setup/production-environment/tools/kubeadm/high-availability/"
BACKUP_GUIDE = "https://kubernetes.io/docs/tasks/administer-cluster/configure-upgrade-etcd/#backing-up-an-etcd-cluster"


class EtcdSnapshots(Strict):
    """etcd snapshots of a kubeadm cluster, taken by a CronJob on a control-plane node."""

    enabled: bool = Field(
        True,
        description="kubeadm: a CronJob in kube-system saves an etcd snapshot (`etcdctl snapshot save`) on a "
        f"control-plane node into snapshotsDir, keeping the newest `keep` ({BACKUP_GUIDE}). Copy them off the "
        "node: a snapshot on the node it protects is lost with it.",
    )
    schedule: str = Field(
        "0 */6 * * *",
        pattern=r"^(@(hourly|daily|weekly|monthly|yearly|annually|midnight)|(\S+\s+){4}\S+)$",
        description="The CronJob's schedule (cron syntax, the controller manager's time zone).",
    )
    keep: int = Field(28, ge=1, le=1000, description="Snapshots kept on the node (the oldest are deleted).")


class ControlPlane(Strict):
    count: int = Field(
        1,
        ge=1,
        le=7,
        description="kubeadm: control-plane nodes, each with a stacked etcd member: 1, or an odd number for high "
        "availability (3 survive the loss of one, 5 of two; etcd needs a majority). More than one needs "
        f"cluster.controlPlaneEndpoint, a load-balanced address in front of them ({HA_GUIDE}); the README's "
        "steps then upload the control-plane certificates at `kubeadm init` and join the other nodes with "
        "`kubeadm join --control-plane`. K3s and Talos: leave it out (their own HA: K3s servers with "
        "--cluster-init, Talos controlplane machines).",
    )
    etcdSnapshots: EtcdSnapshots = Field(default_factory=EtcdSnapshots)


class Cluster(Strict):
    distribution: Literal["k3s", "kubeadm", "talos"] = Field(
        description="k3s (embedded containerd, RuntimeClass nvidia registered by K3s), kubeadm, or talos "
        "(Talos Linux: driver and toolkit from NVIDIA system extensions, machine-config patches per pool)."
    )
    kubernetesVersion: str = Field(
        "1.36",
        pattern=K8S_MINOR,
        description=f'Kubernetes minor version as a string, e.g. "1.36", from 1.{OLDEST_MINOR} to '
        f"1.{NEWEST_MINOR}. Selects feature-gate defaults and the schema rendered objects are validated against.",
    )
    featureGates: dict[str, bool] = Field(
        default_factory=dict,
        description="Extra feature gates. Gates the rest of the spec needs are added automatically.",
    )
    nvidiaDefaultRuntime: bool = Field(
        False,
        description="Make nvidia the default containerd runtime (K3s default-runtime: nvidia; "
        "kubeadm: nvidia-ctk runtime configure --set-as-default; Talos: a containerd CRI drop-in in the GPU "
        "pools' machine-config patches). Off: pods use runtimeClassName.",
    )
    acceptVisibleDevicesEnvvar: bool = Field(
        False,
        description="Let unprivileged containers pick GPUs with NVIDIA_VISIBLE_DEVICES (the NVIDIA Container "
        "Toolkit's accept-nvidia-visible-devices-envvar-when-unprivileged, true in the toolkit itself). Off: "
        "the toolkit ignores the variable in containers without CAP_SYS_ADMIN and the device plugins hand GPUs "
        "over as volume mounts (NVIDIA's and HAMi's) or CDI (the GPU Operator's), so a pod with "
        "NVIDIA_VISIBLE_DEVICES=all gets only the GPUs the scheduler gave it. On: for platforms whose "
        "unprivileged tools pick GPUs with the variable; any pod of RuntimeClass nvidia can then take every "
        "GPU of its node. Talos: its toolkit extension has no config to set, so the toolkit accepts the variable "
        "either way (the stack README says what to do).",
    )
    k3sVersion: str | None = Field(
        None,
        description="K3s release, e.g. v1.36.4+k3s1 (only for distribution k3s): the README's install "
        "command pins it.",
    )
    kubeadmVersion: str | None = Field(
        None,
        pattern=r"^v1\.[0-9]{2}\.[0-9]+$",
        description="Kubernetes release for kubeadm, e.g. v1.35.2 (only for distribution kubeadm): "
        "ClusterConfiguration kubernetesVersion and the pinned packages. Default: the newest patch of the "
        "minor when the packages are installed; the README's init step then writes the installed kubeadm's "
        "exact release into the configuration (never a `stable-<minor>` label resolved over the network).",
    )
    talosVersion: str | None = Field(
        None,
        pattern=r"^v1\.[0-9]+\.[0-9]+$",
        description="Talos Linux release, e.g. v1.13.0 (required for distribution talos, only there): the NVIDIA "
        "system extensions are built per release, so the installer image and its schematic name it.",
    )
    controlPlaneEndpoint: str | None = Field(
        None,
        pattern=r"^[A-Za-z0-9.:\[\]-]+:[0-9]{1,5}$",
        description="kubeadm: stable address of the API server, host:port (a DNS name or virtual IP in front "
        "of every control-plane node), ClusterConfiguration controlPlaneEndpoint and the pools' join "
        "endpoint. It is written into the API server's certificate, so a control plane started without it "
        "cannot grow to several nodes. Default: the ${CONTROL_PLANE_ENDPOINT} variable, filled in with "
        "envsubst when `kubeadm init` runs (the README's step).",
    )
    controlPlane: ControlPlane = Field(
        default_factory=ControlPlane,
        description="kubeadm: the control-plane nodes (how many) and etcd's snapshots.",
    )
    podSubnet: str | None = Field(
        None,
        pattern=r"^[0-9a-f.:]+/[0-9]{1,3}$",
        description="Pod network CIDR (kubeadm networking.podSubnet, K3s cluster-cidr); it must match "
        "the CNI's. Default: 10.244.0.0/16 on kubeadm and Talos (Cilium takes each node's share of it), "
        "K3s' own on K3s.",
    )
    cni: Literal["cilium", "none"] = Field(
        "cilium",
        description="The pod network kubeadm and Talos stacks install after the control plane starts: cilium "
        "(which enforces the NetworkPolicies), or none, where you install your own, one that enforces "
        "NetworkPolicy (Calico, or a policy engine beside Flannel), in that step. Talos's own Flannel is off "
        "either way. K3s keeps its Flannel and network policy controller.",
    )
    serverAddresses: list[str] = Field(
        default_factory=list,
        description="IP addresses of the control-plane nodes (K3s servers). On K3s the controller "
        "manager, scheduler and kube-proxy run inside the k3s process, not as pods: "
        "kube-prometheus-stack scrapes them at these addresses, and without them those jobs are off.",
    )

    @field_validator("kubernetesVersion", "k3sVersion", "kubeadmVersion", "talosVersion", mode="before")
    @classmethod
    def _quote(cls, value: Any) -> Any:
        return version_string(value)

    @field_validator("kubernetesVersion")
    @classmethod
    def _supported(cls, value: str) -> str:
        if not OLDEST_MINOR <= int(value.split(".")[1]) <= NEWEST_MINOR:
            raise ValueError(f"Kubernetes {value} is not one gpustack renders: 1.{OLDEST_MINOR} to 1.{NEWEST_MINOR}")
        return value

    @property
    def minor(self) -> int:
        return int(self.kubernetesVersion.split(".")[1])


# --- node pools -----------------------------------------------------------------------------


class Gpu(Strict):
    model: str = Field(description="GPU SKU from the catalogue (specs/gpus.yaml), e.g. L4, H100-80GB-SXM.")
    count: int = Field(1, ge=1, le=16, description="GPUs per node.")
    custom: GpuModel | None = Field(
        None, description="Facts for a GPU that is not in the catalogue; `model` then names it."
    )


class Taint(Strict):
    key: LabelKey
    value: LabelValue | None = None
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]


class Driver(Versioned):
    source: Literal["host", "operator"] = Field(
        "host",
        description="host: installed on the node (apt + DKMS, mounted at /; on Talos: NVIDIA system "
        "extensions); operator: the GPU Operator's driver container (mounted at /run/nvidia/driver), not on Talos.",
    )
    version: DriverVersion | None = Field(
        None,
        description='Driver branch or release, e.g. "595" or "595.84", of a branch in '
        "specs/driver-branches.yaml: the host steps lock apt onto it (nvidia-driver-pinning-<version>) and "
        "install NVIDIA's CUDA-repository driver, compute-only on datacenter GPUs. Default: the newest release. "
        "Not on Talos, where the Talos release fixes the extensions' driver release: choose driver.branch.",
    )
    modules: Literal["open", "proprietary"] | None = Field(
        None,
        description="Talos only: the kernel-module flavour, NVIDIA's open GPU kernel modules (extension "
        "nvidia-open-gpu-kernel-modules) or the proprietary ones (nonfree-kmod-nvidia). Default: open on "
        "Turing and newer GPUs (Blackwell has no other), proprietary before.",
    )
    branch: Literal["production", "lts"] | None = Field(
        None,
        description="Talos only: the driver branch of the NVIDIA system extensions, production (newer "
        "releases) or lts (NVIDIA's long-term support branch). Default: production.",
    )
    fabricManager: bool = Field(
        True,
        description="NVSwitch boards (8 × A100/H100/H200/B200 SXM) with a host driver: the host steps install "
        "NVIDIA Fabric Manager at the driver's version. false: you run it another way (gpustack lint GS044 "
        "then looks for it in the manifests). The GPU Operator's driver container starts its own.",
    )


class Toolkit(Versioned):
    mode: Literal["auto", "legacy", "cdi"] = Field(
        "auto",
        description="NVIDIA Container Toolkit mode: auto (the toolkit picks: just-in-time CDI where NVML "
        "finds the GPUs from release 1.20, the legacy hook before), legacy (OCI hook) or cdi. Talos: auto "
        "only (its extension configures the toolkit).",
    )
    version: str | None = Field(
        None,
        pattern=r"^[0-9]+\.[0-9]+\.[0-9]+$",
        description='Toolkit release installed on the host, e.g. "1.20.0": the README\'s apt command pins '
        "its packages to it. Without the GPU Operator only (the operator runs its own toolkit), and not on "
        "Talos (the nvidia-container-toolkit extension of the Talos release). "
        "Default: the newest release when the command runs.",
    )


class SystemPool(Strict):
    """Nodes without GPUs for the cluster's own services (Prometheus, Grafana, the NFD master)."""

    name: str = Field(pattern=DNS_LABEL, description="Pool name (DNS-1123 label).")
    count: int = Field(1, ge=1, le=MAX_NODES, description="Number of nodes in the pool.")
    labels: Labels = Field(default_factory=dict, description="Labels the pool's nodes carry.")
    taints: list[Taint] = Field(default_factory=list, description="Taints the pool's nodes carry.")


class NoSharing(Strict):
    strategy: Literal["none"] = "none"


class TimeSlicing(Strict):
    strategy: Literal["timeSlicing"]
    replicas: int = Field(ge=2, description="Pods that may share one GPU.")
    renameByDefault: bool = Field(False, description="Advertise nvidia.com/gpu.shared instead of nvidia.com/gpu.")
    failRequestsGreaterThanOne: bool = Field(
        True, description="Reject pods asking for more than one shared GPU (they get no more compute)."
    )


class Mps(Strict):
    strategy: Literal["mps"]
    replicas: int = Field(ge=2, description="MPS clients per GPU (memory and compute split evenly).")
    renameByDefault: bool = False


Sharing = Annotated[NoSharing | TimeSlicing | Mps, Field(discriminator="strategy")]


class PoolMig(Strict):
    strategy: Literal["single", "mixed"] = Field(
        "mixed",
        description="How the device plugin advertises the pool's MIG devices: mixed as "
        "nvidia.com/mig-<profile>, single as nvidia.com/gpu (one profile only).",
    )
    layout: dict[str, int] = Field(
        min_length=1,
        description="MIG profile → instances on each GPU of the pool, e.g. {1g.10gb: 4, 3g.40gb: 1}; "
        "profiles from the catalogue's migProfiles, at most 7 compute and 8 memory slices per GPU.",
    )


class NodePool(Strict):
    name: str = Field(pattern=DNS_LABEL, description="Pool name (DNS-1123 label).")
    count: int = Field(1, ge=1, le=MAX_NODES, description="Number of nodes in the pool.")
    gpu: Gpu
    labels: Labels = Field(default_factory=dict, description="Labels the pool's nodes carry.")
    taints: list[Taint] = Field(default_factory=list, description="Taints the pool's nodes carry.")
    driver: Driver = Field(default_factory=Driver)
    toolkit: Toolkit = Field(default_factory=Toolkit)
    sharing: Sharing | None = Field(
        None,
        description="Time-slicing or MPS for this pool's GPUs (default: devicePlugin.sharing). Applied "
        "through a device plugin config of the pool's name, selected by the node label "
        "nvidia.com/device-plugin.config.",
    )
    mig: PoolMig | None = Field(
        None,
        description="MIG layout of this pool's GPUs: applied by the GPU Operator's MIG manager (node label "
        "nvidia.com/mig.config) or with nvidia-mig-parted on the host.",
    )
