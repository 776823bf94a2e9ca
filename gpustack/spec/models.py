"""Pydantic models of the spec file (``apiVersion: gpustack.io/v1alpha1, kind: GpuStack``).

Every default is explicit here and appears in the generated JSON Schema
(``specs/gpustack.schema.json``). Unknown keys are errors. Version fields are strings: an
unquoted ``1.30`` is the number 1.3 in YAML, so numbers are refused with "quote it".
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from gpustack.spec.gpu_catalogue import GpuModel

DNS_LABEL = r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"
K8S_MINOR = r"^1\.[0-9]{2}$"
DURATION = r"^([0-9]+(ms|s|m|h))+$"
# The Kubernetes minors a stack can target: from the oldest whose OpenAPI schema
# kubernetes-validate ships (render validates every object against it) to the newest whose
# feature-gate defaults gpustack.spec.featuregates knows (tests hold both to it).
OLDEST_MINOR, NEWEST_MINOR = 25, 37
# Kubernetes' documented scalability limit: https://kubernetes.io/docs/setup/best-practices/cluster-large/
MAX_NODES = 5000
# What each pattern means, for error messages ("should match pattern '^[a-z0-9]…'" says little).
PATTERN_MEANINGS = {
    DNS_LABEL: "must be a DNS-1123 label: lowercase letters, digits and '-', "
    "starting and ending with a letter or digit, at most 63 characters",
    K8S_MINOR: 'must be a Kubernetes minor version such as "1.36"',
    DURATION: 'must be a duration such as "60s", "5m" or "1h30m"',
}


def _version_string(value: Any) -> Any:
    """Refuse numbers where a version string is expected (YAML turns 1.30 into 1.3)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        written = _as_written(value)
        raise ValueError(
            f'must be a string: quote it, "{written}" (unquoted, YAML reads the number {value})'
        )
    return value


def _as_written(number: int | float) -> str:
    """The number as the YAML file spelled it (ruamel keeps 1.30 apart from 1.3)."""
    from gpustack.yamlio import dump

    return dump({"v": number}).split(":", 1)[1].strip()


class Strict(BaseModel):
    """No unknown keys, and no conversions: ``count: true`` is not 1, ``"3"`` is not 3."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, strict=True)


class Versioned(Strict):
    """Mixin for sections with a ``version`` string."""

    @field_validator("version", mode="before", check_fields=False)
    @classmethod
    def _quote_version(cls, value: Any) -> Any:
        return _version_string(value)


# --- metadata and cluster -------------------------------------------------------------------


class Metadata(Strict):
    name: str = Field(
        pattern=DNS_LABEL,
        description="Stack name (DNS-1123 label); render writes to output/<name> by default.",
    )
    description: str | None = Field(None, description="Free text, copied into the stack README.")


class Cluster(Strict):
    distribution: Literal["k3s", "kubeadm"] = Field(
        description="k3s (embedded containerd, RuntimeClass nvidia registered by K3s) or kubeadm."
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
        "kubeadm: nvidia-ctk runtime configure --set-as-default). Off: pods use runtimeClassName.",
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
        "ClusterConfiguration kubernetesVersion and the pinned packages. Default: stable-<minor>, "
        "the newest patch when `kubeadm init` runs.",
    )
    podSubnet: str | None = Field(
        None,
        pattern=r"^[0-9a-f.:]+/[0-9]{1,3}$",
        description="Pod network CIDR (kubeadm networking.podSubnet, K3s cluster-cidr); it must match "
        "the CNI's. Default: 10.244.0.0/16 on kubeadm (Flannel's), K3s' own on K3s.",
    )
    serverAddresses: list[str] = Field(
        default_factory=list,
        description="IP addresses of the control-plane nodes (K3s servers). On K3s the controller "
        "manager, scheduler and kube-proxy run inside the k3s process, not as pods: "
        "kube-prometheus-stack scrapes them at these addresses, and without them those jobs are off.",
    )

    @field_validator("kubernetesVersion", "k3sVersion", "kubeadmVersion", mode="before")
    @classmethod
    def _quote(cls, value: Any) -> Any:
        return _version_string(value)

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
    key: str
    value: str | None = None
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]


class Driver(Versioned):
    source: Literal["host", "operator"] = Field(
        "host",
        description="host: installed on the node (apt + DKMS, mounted at /); operator: the GPU "
        "Operator's driver container (mounted at /run/nvidia/driver).",
    )
    version: str | None = Field(None, description='Driver branch or version, e.g. "595" or "595.84".')


class Toolkit(Versioned):
    mode: Literal["auto", "legacy", "cdi"] = Field(
        "auto",
        description="NVIDIA Container Toolkit mode: auto (the toolkit picks: just-in-time CDI where NVML "
        "finds the GPUs from release 1.20, the legacy hook before), legacy (OCI hook) or cdi.",
    )
    version: str | None = Field(
        None,
        pattern=r"^[0-9]+\.[0-9]+\.[0-9]+$",
        description='Toolkit release installed on the host, e.g. "1.20.0": the README\'s apt command pins '
        "its packages to it. Without the GPU Operator only (the operator runs its own toolkit). "
        "Default: the newest release when the command runs.",
    )


class SystemPool(Strict):
    """Nodes without GPUs for the cluster's own services (Prometheus, Grafana, the NFD master)."""

    name: str = Field(pattern=DNS_LABEL, description="Pool name (DNS-1123 label).")
    count: int = Field(1, ge=1, le=MAX_NODES, description="Number of nodes in the pool.")
    labels: dict[str, str] = Field(default_factory=dict, description="Labels the pool's nodes carry.")
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
    labels: dict[str, str] = Field(default_factory=dict, description="Labels the pool's nodes carry.")
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


# --- device plugin, operator, NFD ----------------------------------------------------------


class Gfd(Strict):
    enabled: bool = Field(True, description="Deploy GPU Feature Discovery (nvidia.com/gpu.* node labels).")
    sleepInterval: str | None = Field(
        None,
        pattern=DURATION,
        description="Label refresh interval; default 60s, or 0.6 s per node when that is longer.",
    )


class DevicePlugin(Versioned):
    enabled: bool = Field(True, description="Deploy NVIDIA's device plugin (advertises nvidia.com/gpu).")
    version: str = Field("0.20.0", description="nvidia-device-plugin chart version.")
    gfd: Gfd = Field(default_factory=Gfd)
    sharing: Sharing = Field(default_factory=NoSharing, description="GPU sharing: none, timeSlicing or mps.")
    migStrategy: Literal["none", "single", "mixed"] = Field("none", description="How MIG devices are advertised.")


class GpuOperator(Versioned):
    enabled: bool = Field(
        False,
        description="Deploy the GPU Operator; it then owns driver (for operator pools), toolkit, "
        "device plugin, GFD and DCGM exporter.",
    )
    version: str = Field("v26.7.0", description="gpu-operator chart version.")


class Nfd(Versioned):
    enabled: bool = Field(True, description="Deploy Node Feature Discovery.")
    version: str = Field("0.19.0", description="node-feature-discovery chart version.")
    sleepInterval: str | None = Field(
        None,
        pattern=DURATION,
        description="Worker relabel interval; default 60s, or 0.6 s per node when that is longer: "
        "hundreds of nodes relabelling often load etcd.",
    )


# --- monitoring -----------------------------------------------------------------------------


class DcgmExporter(Versioned):
    enabled: bool = True
    version: str = Field("4.8.2", description="dcgm-exporter chart version.")
    profiling: Literal["auto", "on", "off"] = Field(
        "auto",
        description="DCGM_FI_PROF_* profiling fields: auto = on for datacenter GPUs, off for GeForce.",
    )
    podAttribution: bool = Field(
        True,
        description="Also copy the labels of the pod using a GPU onto its metrics "
        "(kubernetes.enablePodLabels, allowlisted to app labels). The pod, namespace and "
        "container labels come from the kubelet pod-resources API either way.",
    )


class Alerts(Strict):
    enabled: bool = True
    temperatureCelsius: int = Field(85, description="GPUHighTemperature threshold.")
    temperatureFor: str = Field("2m", pattern=DURATION)
    memoryUsedRatio: float = Field(0.9, gt=0, le=1, description="GPUMemoryNearFull threshold.")
    memoryFor: str = Field("5m", pattern=DURATION)
    memoryReservingContainers: list[str] = Field(
        default_factory=lambda: ["vllm"],
        description="Containers that reserve most of the GPU memory at start by design (vLLM takes "
        "--gpu-memory-utilization, 0.9 by default): GPUMemoryNearFull leaves their GPUs out.",
    )
    idleUtilPercent: int = Field(5, ge=0, le=100, description="GPUIdleButAllocated: utilisation below this...")
    idleMemoryMiB: int = Field(1024, ge=0, description="...while more than this much memory is held.")
    idleFor: str = Field("15m", pattern=DURATION)
    underfilledUtilPercent: int = Field(
        90, ge=0, le=100, description="GPUBusyButUnderfilled: GPU_UTIL above this..."
    )
    underfilledSmActive: float = Field(
        0.5,
        ge=0,
        le=1,
        description="...while DCGM_FI_PROF_SM_ACTIVE (the share of SM cycles with a warp resident) "
        "is below this.",
    )
    underfilledFor: str = Field("30m", pattern=DURATION)
    criticalXids: list[int] = Field(
        default_factory=lambda: [31, 43, 79, 92],
        description="XID codes that must always alert "
        "(https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html).",
    )
    xidKeepFiringFor: str = Field(
        "1h",
        pattern=DURATION,
        description="Critical XID alerts keep firing this long after the last occurrence: a GPU that "
        "fell off the bus stays broken after the exporter's XID window has passed.",
    )
    gpuGoneFor: str = Field("5m", pattern=DURATION, description="GPUMissing/GPUUnallocatable: for how long.")
    runbookBaseUrl: str | None = Field(
        None,
        description="Where the rendered stack README can be read (e.g. its URL in your Git host); "
        "runbook_url annotations point to its alert section. Default: the relative path README.md.",
    )


class GrafanaDashboard(Strict):
    gnetId: int = Field(ge=1, description="grafana.com dashboard id.")
    revision: int = Field(
        1, ge=1, description="Dashboard revision to download (the Grafana chart's default is 1)."
    )


class Grafana(Strict):
    dashboards: list[GrafanaDashboard] = Field(
        default_factory=lambda: [
            GrafanaDashboard(gnetId=12239, revision=2),  # NVIDIA DCGM Exporter, per GPU
            GrafanaDashboard(gnetId=23382, revision=1),  # DCGM for Kubernetes, per pod
        ],
        description="grafana.com dashboards provisioned through grafana.dashboardProviders "
        "(12239: per GPU; 23382: per pod, with its allocation table).",
    )
    anonymousAdmin: bool = Field(
        False, description="Lab only: anonymous Admin access (the seed's setting). Never in production."
    )


class Monitoring(Versioned):
    enabled: bool = True
    release: str = Field(
        "kube-prometheus-stack",
        pattern=DNS_LABEL,
        description="kube-prometheus-stack release name; rules are labelled release=<release>.",
    )
    namespace: str = Field("monitoring", pattern=DNS_LABEL)
    version: str = Field("88.5.3", description="kube-prometheus-stack chart version.")
    dcgmExporter: DcgmExporter = Field(default_factory=DcgmExporter)
    grafana: Grafana = Field(default_factory=Grafana)
    alerts: Alerts = Field(default_factory=Alerts)


# --- sharing (HAMi) and DRA ----------------------------------------------------------------


class Hami(Versioned):
    enabled: bool = False
    version: str = Field("2.10.0", description="hami chart version.")
    pools: list[str] | None = Field(
        None, description="Node pools HAMi serves; default all. The NVIDIA device plugin must not serve them."
    )
    splitCount: int = Field(10, ge=1, description="vGPUs per physical GPU (devicePlugin.deviceSplitCount).")
    memoryScaling: float = Field(1.0, gt=0, description="devicePlugin.deviceMemoryScaling (>1 oversubscribes).")
    coreScaling: float = Field(1.0, gt=0, description="devicePlugin.deviceCoreScaling.")
    schedulerImageTag: str | None = Field(
        None,
        description="kube-scheduler image tag for HAMi's scheduler; default: the chart derives "
        "it from the cluster version (chart >= 2.7 key scheduler.kubeScheduler.image.tag).",
    )

    @field_validator("schedulerImageTag", mode="before")
    @classmethod
    def _quote_tag(cls, value: Any) -> Any:
        return _version_string(value)


class SharingSection(Strict):
    hami: Hami = Field(default_factory=Hami)


class Capacity(Strict):
    cores: int | None = Field(None, ge=1, le=100, description="Percent of the GPU's cores.")
    memory: str | None = Field(None, pattern=r"^[0-9]+(Ki|Mi|Gi|Ti)?$", description="Memory, e.g. 4Gi.")

    @model_validator(mode="after")
    def _not_empty(self) -> Capacity:
        if self.cores is None and self.memory is None:
            raise ValueError("capacity needs cores, memory or both")
        return self


class ClaimTemplate(Strict):
    name: str = Field(pattern=DNS_LABEL, description="ResourceClaimTemplate name; pods reference it.")
    namespace: str = Field("default", pattern=DNS_LABEL, description="Namespace of the template and its pods.")
    deviceClassName: str | None = Field(None, description="Default: the driver's own DeviceClass.")
    count: int = Field(1, ge=1, description="Devices per claim (allocationMode ExactCount).")
    selectors: list[str] = Field(default_factory=list, description="CEL expressions on the device.")
    capacity: Capacity | None = Field(None, description="Consumable capacity (needs DRAConsumableCapacity).")


class DeviceClassSpec(Strict):
    name: str = Field(
        pattern=r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$",
        description="DeviceClass name, not one the driver chart creates (e.g. l4.gpustack.io).",
    )
    selectors: list[str] = Field(
        description="CEL expressions on the device, ANDed with `device.driver == <driver>`."
    )


class Dra(Versioned):
    enabled: bool = False
    driver: Literal["hami", "nvidia"] = Field("hami", description="DRA driver: HAMi (hami-core) or NVIDIA.")
    version: str | None = Field(None, description="Driver chart version (default per driver).")
    deviceClasses: list[DeviceClassSpec] = Field(
        default_factory=list, description="Extra DeviceClasses; the driver chart creates its own."
    )
    claimTemplates: list[ClaimTemplate] = Field(
        default_factory=list, description="ResourceClaimTemplates with one request named gpu."
    )


# --- GitOps and workloads ------------------------------------------------------------------


class ArgoCd(Strict):
    enabled: bool = Field(
        False, description="Emit an Argo CD app-of-apps under argocd/ (one Application per Helm release)."
    )
    repoURL: str | None = Field(None, description="Git repository holding the rendered output.")
    path: str | None = Field(
        None, description="Path of the rendered stack in that repository; default output/<metadata.name>."
    )
    targetRevision: str = Field("HEAD", description="Git revision Argo CD syncs the rendered output from.")
    project: str = Field("default", description="Argo CD project of the Applications.")
    namespace: str = Field("argocd", pattern=DNS_LABEL, description="Namespace Argo CD watches for Applications.")

    @model_validator(mode="after")
    def _needs_repo(self) -> ArgoCd:
        if self.enabled and not self.repoURL:
            raise ValueError("argocd.enabled needs repoURL (the Git repository of the rendered output)")
        return self


class Gitops(Strict):
    k3sHelmCharts: bool | None = Field(
        None, description="Emit helm.cattle.io/v1 HelmCharts for K3s auto-deploy; default on for k3s."
    )
    argocd: ArgoCd = Field(default_factory=ArgoCd)


class SmokeTest(Strict):
    type: Literal["smokeTest"]
    name: str = Field("gpu-smoke-test", pattern=DNS_LABEL)
    namespace: str = Field("default", pattern=DNS_LABEL)
    image: str = "nvcr.io/nvidia/cuda:13.0.1-base-ubuntu24.04"


class Nbody(Strict):
    type: Literal["nbody"]
    name: str = Field("nbody-benchmark", pattern=DNS_LABEL)
    namespace: str = Field("default", pattern=DNS_LABEL)
    image: str = "nvcr.io/nvidia/k8s/cuda-sample:nbody"
    bodies: int = Field(3000000, ge=1024, description="-numbodies of the CUDA nbody sample.")


class S3Source(Strict):
    uri: str = Field(pattern=r"^s3://[^/]+/.+$", description="s3://bucket/path of the model.")
    endpoint: str = Field(description="S3 endpoint, e.g. http://minio.vllm.svc.cluster.local:9000.")
    credentialsSecret: str = Field(
        pattern=DNS_LABEL, description="Secret with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY."
    )


QUANTITY = r"^[0-9]+(\.[0-9]+)?(m|Ki|Mi|Gi|Ti)?$"
# Images pinned for the workloads: vLLM as the field report ran it (0.28.0), MinIO server and
# client releases published together.
VLLM_IMAGE = "vllm/vllm-openai:v0.28.0"
MINIO_IMAGE = "quay.io/minio/minio:RELEASE.2025-09-07T16-13-09Z"
MC_IMAGE = "quay.io/minio/mc:RELEASE.2025-08-13T08-35-41Z"


class Minio(Strict):
    type: Literal["minio"]
    name: str = Field("minio", pattern=DNS_LABEL, description="Deployment, Service and PVC name.")
    namespace: str = Field("default", pattern=DNS_LABEL)
    image: str = MINIO_IMAGE
    storage: str = Field("40Gi", pattern=QUANTITY, description="PersistentVolumeClaim size for the objects.")
    storageClassName: str | None = Field(None, description="Storage class; default: the cluster's default.")
    credentialsSecret: str = Field(
        pattern=DNS_LABEL,
        description="Secret with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY: MinIO's root user and "
        "password, the same keys vLLM and the model loader read.",
    )

    def endpoint(self) -> str:
        """The in-cluster S3 endpoint of this MinIO."""
        return f"http://{self.name}.{self.namespace}.svc.cluster.local:9000"


class ModelLoader(Strict):
    type: Literal["modelLoader"]
    name: str = Field("model-loader", pattern=DNS_LABEL)
    namespace: str = Field("default", pattern=DNS_LABEL)
    huggingFaceModel: str = Field(
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$",
        description="Hugging Face repository to download, e.g. Qwen/Qwen2.5-1.5B-Instruct.",
    )
    revision: str | None = Field(None, description="Branch, tag or commit of the repository; default main.")
    destination: S3Source = Field(description="Where to upload it (the bucket is created when missing).")
    huggingFaceTokenSecret: str | None = Field(
        None, pattern=DNS_LABEL, description="Secret with HF_TOKEN, for gated models."
    )
    scratch: str = Field("40Gi", pattern=QUANTITY, description="Local space for the download (emptyDir).")
    image: str = Field(VLLM_IMAGE, description="Image with Python and huggingface_hub (vLLM's has both).")
    mcImage: str = Field(MC_IMAGE, description="MinIO client image for the upload.")


class GpuShare(Strict):
    memoryMiB: int = Field(ge=1, description="HAMi nvidia.com/gpumem.")
    cores: int | None = Field(None, ge=1, le=100, description="HAMi nvidia.com/gpucores (percent).")


class Vllm(Strict):
    type: Literal["vllm"]
    name: str = Field(pattern=DNS_LABEL)
    namespace: str = Field("default", pattern=DNS_LABEL)
    image: str = VLLM_IMAGE
    pool: str | None = Field(None, description="Node pool to run on (default: the first).")
    model: S3Source
    servedModelName: str | None = None
    replicas: int = Field(1, ge=0)
    gpus: int = Field(1, ge=1)
    share: GpuShare | None = Field(None, description="HAMi share of one GPU (needs sharing.hami).")
    modelMemoryMiB: int | None = Field(
        None, description="Weights plus KV cache wanted; sets --gpu-memory-utilization against the share."
    )
    maxModelLen: int | None = Field(None, ge=1)
    cpu: str = Field("2", pattern=QUANTITY, description="CPU request (the tokenizer and the API server run on it).")
    memory: str = Field(
        "8Gi",
        pattern=QUANTITY,
        description="Memory request and limit: the streamer's CPU buffer, the API server, and /dev/shm.",
    )
    shmSize: str = Field(
        "2Gi",
        pattern=QUANTITY,
        description="/dev/shm (a memory emptyDir; the container runtime's default is 64 MiB, too small "
        "for PyTorch's worker processes and tensor parallelism).",
    )


Workload = Annotated[SmokeTest | Nbody | Vllm | Minio | ModelLoader, Field(discriminator="type")]


# --- the document ---------------------------------------------------------------------------


class StackSpec(Strict):
    cluster: Cluster
    nodePools: list[NodePool] = Field(min_length=1)
    systemPools: list[SystemPool] = Field(
        default_factory=list,
        description="Node pools without GPUs (kubeadm: one JoinConfiguration each, like the GPU pools).",
    )
    devicePlugin: DevicePlugin = Field(default_factory=DevicePlugin)
    gpuOperator: GpuOperator = Field(default_factory=GpuOperator)
    nfd: Nfd = Field(default_factory=Nfd)
    monitoring: Monitoring = Field(default_factory=Monitoring)
    sharing: SharingSection = Field(default_factory=SharingSection)
    dra: Dra = Field(default_factory=Dra)
    gitops: Gitops = Field(default_factory=Gitops)
    workloads: list[Workload] = Field(default_factory=list)


class GpuStack(Strict):
    """A GPU stack: the cluster, its GPU node pools and the layers to deploy on them."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"$id": "urn:gpustack:schema:spec"},
    )

    apiVersion: Literal["gpustack.io/v1alpha1"]
    kind: Literal["GpuStack"]
    metadata: Metadata
    spec: StackSpec
