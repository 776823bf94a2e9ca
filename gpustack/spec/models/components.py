"""The spec's components: what the stack deploys on the nodes, and how it is delivered.

Device plugin and GFD, GPU Operator, NFD, monitoring (DCGM exporter, alerts, Grafana), HAMi
sharing, DRA, and the GitOps delivery (K3s HelmCharts, Argo CD). Chart versions default to the
versions the chart registry (``specs/charts.yaml``) pins.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from gpustack.charts import chart
from gpustack.shipped import default_critical_xids
from gpustack.spec.models.base import DNS_LABEL, DURATION, IMAGE_TAG, ChartVersioned, DnsSubdomain, Strict, version_string
from gpustack.spec.models.cluster import NoSharing, Sharing


class Gfd(Strict):
    enabled: bool = Field(True, description="Deploy GPU Feature Discovery (nvidia.com/gpu.* node labels).")
    sleepInterval: str | None = Field(
        None,
        pattern=DURATION,
        description="Label refresh interval; default 60s, or 0.6 s per node when that is longer.",
    )


class DevicePlugin(ChartVersioned):
    enabled: bool = Field(True, description="Deploy NVIDIA's device plugin (advertises nvidia.com/gpu).")
    version: str = Field(chart("nvidia-device-plugin").version, description="nvidia-device-plugin chart version.")
    gfd: Gfd = Field(default_factory=Gfd)
    sharing: Sharing = Field(default_factory=NoSharing, description="GPU sharing: none, timeSlicing or mps.")
    migStrategy: Literal["none", "single", "mixed"] = Field("none", description="How MIG devices are advertised.")


class GpuOperator(ChartVersioned):
    enabled: bool = Field(
        False,
        description="Deploy the GPU Operator; it then owns driver (for operator pools), toolkit, "
        "device plugin, GFD and DCGM exporter.",
    )
    version: str = Field(chart("gpu-operator").version, description="gpu-operator chart version.")


class Nfd(ChartVersioned):
    enabled: bool = Field(True, description="Deploy Node Feature Discovery.")
    version: str = Field(chart("node-feature-discovery").version, description="node-feature-discovery chart version.")
    sleepInterval: str | None = Field(
        None,
        pattern=DURATION,
        description="Worker relabel interval; default 60s, or 0.6 s per node when that is longer: "
        "hundreds of nodes relabelling often load etcd.",
    )



class DcgmExporter(ChartVersioned):
    enabled: bool = True
    version: str = Field(chart("dcgm-exporter").version, description="dcgm-exporter chart version.")
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
    temperatureMarginCelsius: int = Field(
        5,
        ge=0,
        description="GPUHighTemperature fires this many °C below each GPU's own slowdown temperature "
        "(DCGM_FI_DEV_SLOWDOWN_TEMP, which differs per model).",
    )
    temperatureCelsius: int = Field(
        85, description="GPUHighTemperature threshold for GPUs that report no slowdown temperature."
    )
    temperatureFor: str = Field("2m", pattern=DURATION)
    memoryUsedRatio: float = Field(0.9, gt=0, le=1, description="GPUMemoryNearFull threshold.")
    memoryFor: str = Field("5m", pattern=DURATION)
    memoryReservingContainers: list[str] = Field(
        default_factory=lambda: ["vllm"],
        description="Inference-server containers: they reserve most of the GPU memory at start by design "
        "(vLLM takes --gpu-memory-utilization, 0.9 by default) and sit idle without traffic, so "
        "GPUMemoryNearFull and GPUIdleButAllocated leave them out (matched on exported_container).",
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
        default_factory=lambda: list(default_critical_xids()),
        description="XID codes that must always alert "
        "(https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html).",
    )
    xidKeepFiringFor: str = Field(
        "1h",
        pattern=DURATION,
        description="Critical XID alerts keep firing this long after the last occurrence: a GPU that "
        "fell off the bus stays broken after the exporter's XID window has passed.",
    )
    gpuGoneFor: str = Field("5m", pattern=DURATION, description="GPULost, GPUExporterDown/Absent, GPUUnallocatable, GPUFabricManagerDown: for how long.")
    runbookBaseUrl: str | None = Field(
        None,
        description="Absolute URL where the rendered stack README can be read (e.g. its page in your Git "
        "host); runbook_url annotations point to its alert sections. Default: the README's page in "
        "gitops.argocd.repoURL on GitHub or GitLab; required with another Git host; without Argo CD the "
        "relative README.md, which Alertmanager, Slack and PagerDuty cannot open (the rendered README says so).",
    )

    @field_validator("runbookBaseUrl")
    @classmethod
    def _absolute(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("https://", "http://")):
            raise ValueError(
                "must be an absolute URL (https://…): Alertmanager, Slack and PagerDuty open only absolute links"
            )
        return value


class AlertReceiver(Strict):
    """Where Alertmanager sends alerts; the credential is read from a Secret, never written in the spec."""

    type: Literal["webhook", "slack", "pagerduty", "email"]
    secretName: str = Field(
        pattern=DNS_LABEL,
        description="Secret in monitoring.namespace holding the credential (mounted into Alertmanager): "
        "webhook/slack: the URL, pagerduty: the routing key, email: the SMTP password.",
    )
    secretKey: str = Field("credential", pattern=r"^[-._a-zA-Z0-9]+$", description="Key of the Secret.")
    channel: str | None = Field(None, description="slack: the channel (default: the webhook's own).")
    to: str | None = Field(None, description="email: recipient address.")
    sender: str | None = Field(None, description="email: From address.")
    smarthost: str | None = Field(None, description="email: SMTP server host:port.")
    username: str | None = Field(None, description="email: SMTP user (default: the sender).")

    @model_validator(mode="after")
    def _email_needs_addresses(self) -> AlertReceiver:
        if self.type == "email" and not (self.to and self.sender and self.smarthost):
            raise ValueError("an email receiver needs to, sender and smarthost")
        return self


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
        False, description="Lab only: anonymous Admin access. Never in production."
    )
    adminSecret: str = Field(
        "grafana-admin",
        pattern=DNS_LABEL,
        description="Secret with keys admin-user and admin-password in the monitoring namespace "
        "(grafana.admin.existingSecret): generated in the cluster when missing, so the chart never "
        "makes a new password on each sync.",
    )


# A volume size in binary units (Kubernetes quantities: https://kubernetes.io/docs/reference/kubernetes-api/common-definitions/quantity/).
STORAGE_SIZE = r"^[1-9][0-9]*(Mi|Gi|Ti)$"


class Monitoring(ChartVersioned):
    enabled: bool = True
    release: str = Field(
        "kube-prometheus-stack",
        pattern=DNS_LABEL,
        description="kube-prometheus-stack release name; rules are labelled release=<release>.",
    )
    namespace: str = Field(
        "monitoring",
        pattern=DNS_LABEL,
        description="Namespace of kube-prometheus-stack (Prometheus, Alertmanager, Grafana): Pod Security baseline "
        "once its node agents run in agentsNamespace.",
    )
    agentsNamespace: str = Field(
        "monitoring-agents",
        pattern=DNS_LABEL,
        description="Namespace of the node agents Pod Security baseline refuses (dcgm-exporter's chart, with "
        "node-exporter beside it; with the GPU Operator both run in its namespace): privileged.",
    )
    version: str = Field(chart("kube-prometheus-stack").version, description="kube-prometheus-stack chart version.")
    dcgmExporter: DcgmExporter = Field(default_factory=DcgmExporter)
    grafana: Grafana = Field(default_factory=Grafana)
    alerts: Alerts = Field(default_factory=Alerts)
    receiver: AlertReceiver | None = Field(
        None,
        description="Alertmanager's paging receiver: critical alerts, grouped per alert, namespace and node. "
        "Default none: the chart's `null` receiver drops every alert (the rendered README says so).",
    )
    warningReceiver: AlertReceiver | None = Field(
        None,
        description="Receiver for warning and info alerts (user-caused XIDs among them), as a daily digest per "
        "alert name. Default none: they go to `receiver` as that digest (PagerDuty gets severity warning).",
    )
    retention: str = Field(
        "15d", pattern=r"^[0-9]+(ms|s|m|h|d|w|y)$", description="How long Prometheus keeps samples."
    )
    persistence: bool = Field(
        True,
        description="PersistentVolumeClaims for Prometheus and Alertmanager. false: emptyDir volumes of the "
        "same size, whose data is lost when the pod moves.",
    )
    storageClass: str | None = Field(
        None,
        description="StorageClass of the claims; default none: the cluster's default StorageClass "
        "(without one the claims stay Pending and Prometheus does not start).",
    )
    prometheusStorage: str = Field(
        "50Gi",
        pattern=STORAGE_SIZE,
        description="Size of Prometheus's volume; Prometheus deletes its oldest blocks at 80 % of it (retentionSize).",
    )
    alertmanagerStorage: str = Field("2Gi", pattern=STORAGE_SIZE, description="Size of Alertmanager's volume.")
    replicas: int = Field(
        1,
        ge=1,
        le=5,
        description="Prometheus and Alertmanager replicas. From 2: spread over nodes, with a "
        "PodDisruptionBudget so a drain takes one at a time (a budget for a single replica would block "
        "every drain, so there is none).",
    )



class Hami(ChartVersioned):
    enabled: bool = False
    version: str = Field(chart("hami").version, description="hami chart version.")
    pools: list[str] | None = Field(
        None, description="Node pools HAMi serves; default all. The NVIDIA device plugin must not serve them."
    )
    splitCount: int = Field(10, ge=1, description="vGPUs per physical GPU (devicePlugin.deviceSplitCount).")
    memoryScaling: float = Field(1.0, gt=0, description="devicePlugin.deviceMemoryScaling (>1 oversubscribes).")
    coreScaling: float = Field(1.0, gt=0, description="devicePlugin.deviceCoreScaling.")
    schedulerImageTag: str | None = Field(
        None,
        pattern=IMAGE_TAG,
        description="kube-scheduler image tag for HAMi's scheduler; default: the chart derives "
        "it from the cluster version (chart >= 2.7 key scheduler.kubeScheduler.image.tag).",
    )
    admissionWebhook: bool = Field(
        True,
        description="HAMi's mutating webhook (scheduler.admissionWebhook.enabled), which sends pods asking for "
        "HAMi resources to hami-scheduler. Its failurePolicy is Ignore: a pod created while it is down "
        "reaches the default scheduler.",
    )
    schedulerName: bool = Field(
        True,
        description="Rendered workloads on HAMi pools set schedulerName: hami-scheduler themselves. At least "
        "one of admissionWebhook and schedulerName must hold.",
    )

    @field_validator("schedulerImageTag", mode="before")
    @classmethod
    def _quote_tag(cls, value: Any) -> Any:
        return version_string(value)


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
    deviceClassName: DnsSubdomain | None = Field(None, description="Default: the driver's own DeviceClass.")
    count: int = Field(1, ge=1, description="Devices per claim (allocationMode ExactCount).")
    selectors: list[str] = Field(default_factory=list, description="CEL expressions on the device.")
    capacity: Capacity | None = Field(None, description="Consumable capacity (needs DRAConsumableCapacity).")


class DeviceClassSpec(Strict):
    name: str = Field(
        pattern=r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$",
        description="DeviceClass name, not one the driver chart creates (e.g. l4.gpustack.io).",
    )
    selectors: list[str] = Field(
        default_factory=list,
        description="CEL expressions on the device, ANDed with `device.driver == <driver>` and the device type.",
    )
    migProfile: str | None = Field(
        None,
        description="NVIDIA driver: the class selects MIG devices of this profile (type mig), e.g. 1g.10gb; "
        "default whole GPUs (type gpu). HAMi's driver publishes its shares only (type hami-gpu).",
    )


class Dra(ChartVersioned):
    enabled: bool = False
    driver: Literal["hami", "nvidia"] = Field("hami", description="DRA driver: HAMi (hami-core) or NVIDIA.")
    version: str | None = Field(None, description="Driver chart version (default per driver).")
    deviceClasses: list[DeviceClassSpec] = Field(
        default_factory=list, description="Extra DeviceClasses; the driver chart creates its own."
    )
    claimTemplates: list[ClaimTemplate] = Field(
        default_factory=list, description="ResourceClaimTemplates with one request named gpu."
    )


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
    prune: bool = Field(
        False,
        description="Automated sync deletes what was removed from Git (syncPolicy.automated.prune). Off: a "
        "removed object stays and the Application shows OutOfSync until you delete it.",
    )
    selfHeal: bool = Field(
        True,
        description="Automated sync reverts changes made in the cluster (syncPolicy.automated.selfHeal); it "
        "never deletes anything.",
    )
    cascadeDelete: bool = Field(
        False,
        description="Give each child Application the resources finalizer, so deleting it (by hand, or by the "
        "root Application pruning it) deletes the charts and objects it deployed. Off: deleting an "
        "Application leaves the GPU stack running. The root Application never has it.",
    )

    @model_validator(mode="after")
    def _needs_repo(self) -> ArgoCd:
        if self.enabled and not self.repoURL:
            raise ValueError("argocd.enabled needs repoURL (the Git repository of the rendered output)")
        return self


class FluxSourceRef(Strict):
    """The Flux source holding the rendered stack: by default the GitRepository ``flux bootstrap`` creates."""

    kind: Literal["GitRepository", "OCIRepository", "Bucket"] = "GitRepository"
    name: str = Field("flux-system", pattern=DNS_LABEL)
    namespace: str = Field("flux-system", pattern=DNS_LABEL)


class Flux(Strict):
    enabled: bool = Field(
        False,
        description="Emit Flux objects under flux/: Kustomizations per layer (stack.yaml, for clusters/<cluster>/ "
        "of a repository bootstrapped by `flux bootstrap`), sources, namespaces and one HelmRelease per chart.",
    )
    sourceRef: FluxSourceRef = Field(
        default_factory=FluxSourceRef, description="The source the Kustomizations read the rendered stack from."
    )
    path: str | None = Field(
        None, description="Path of the rendered stack in that source; default output/<metadata.name>."
    )
    namespace: str = Field(
        "flux-system", pattern=DNS_LABEL, description="Namespace of the Kustomizations, sources and HelmReleases."
    )
    chartReference: Literal["chartSpec", "chartRef"] = Field(
        "chartSpec",
        description="chartSpec: each HelmRelease names its chart in spec.chart.spec, from a HelmRepository (or the "
        "GitRepository of a chart kept in Git). chartRef: spec.chartRef to an OCIRepository for the charts published "
        "as OCI artifacts (specs/charts.yaml `oci`); the others keep spec.chart.spec.",
    )
    values: Literal["inline", "configMap"] = Field(
        "inline",
        description="inline: the Helm values in each HelmRelease's spec.values; configMap: in a ConfigMap next to it, "
        "read through spec.valuesFrom.",
    )
    interval: str = Field("10m", pattern=DURATION, description="How often Flux reconciles every object.")
    timeout: str = Field(
        "15m", pattern=DURATION, description="How long a Helm action or a layer's health checks may take."
    )
    retries: int = Field(
        3,
        ge=0,
        description="Failed installs and upgrades are retried this many times (install/upgrade.remediation.retries); "
        "a failed upgrade is then rolled back.",
    )
    prune: bool = Field(
        True, description="Each Kustomization deletes the objects removed from its folder in Git (spec.prune)."
    )


class Gitops(Strict):
    k3sHelmCharts: bool | None = Field(
        None,
        description="Emit helm.cattle.io/v1 HelmCharts for K3s auto-deploy; default on for k3s unless Flux "
        "delivers the stack.",
    )
    argocd: ArgoCd = Field(default_factory=ArgoCd)
    flux: Flux = Field(default_factory=Flux)

    def stack_path(self, stack_name: str) -> str:
        """The rendered stack's folder in the delivery's Git repository (``gpustack render``'s default folder)."""
        chosen = self.flux.path if self.flux.enabled else self.argocd.path
        return (chosen or f"output/{stack_name}").strip("/")
