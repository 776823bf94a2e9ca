"""The monitoring section of the spec: kube-prometheus-stack, DCGM Exporter, the GPU alerts,
where Alertmanager sends them, Grafana, and where the monitoring data lives."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from gpustack.charts import chart
from gpustack.shipped import default_critical_xids
from gpustack.spec.models.base import DNS_LABEL, DURATION, ChartVersioned, Strict


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
