"""The spec's components: what the stack deploys on the nodes, and how it is delivered.

Device plugin and GFD, GPU Operator, NFD, HAMi
sharing, DRA, and the GitOps delivery (K3s HelmCharts, Argo CD). Chart versions default to the
versions the chart registry (``specs/charts.yaml``) pins.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from gpustack.charts import chart
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


class DriverUpgrade(Strict):
    """How the operator's upgrade controller replaces the driver it installs."""

    enabled: bool = Field(
        True,
        description="Roll driver changes one node at a time: wait for the stack's GPU Jobs, then evict "
        "GPU pods through the Eviction API (PodDisruptionBudgets honoured), draining the node under DRA; "
        "false leaves the chart's upgradePolicy (no wait, and pods with an emptyDir fail the upgrade).",
    )
    jobTimeoutSeconds: int = Field(
        0,
        ge=0,
        description="How long a node's upgrade waits for the stack's running GPU Jobs before evicting them; "
        "0 waits until they finish.",
    )


class GpuOperator(ChartVersioned):
    enabled: bool = Field(
        False,
        description="Deploy the GPU Operator; it then owns driver (for operator pools), toolkit, "
        "device plugin, GFD and DCGM exporter.",
    )
    version: str = Field(chart("gpu-operator").version, description="gpu-operator chart version.")
    driverUpgrade: DriverUpgrade = Field(
        default_factory=DriverUpgrade, description="The driver's upgrade policy, where the operator installs it."
    )


class Nfd(ChartVersioned):
    enabled: bool = Field(True, description="Deploy Node Feature Discovery.")
    version: str = Field(chart("node-feature-discovery").version, description="node-feature-discovery chart version.")
    sleepInterval: str | None = Field(
        None,
        pattern=DURATION,
        description="Worker relabel interval; default 60s, or 0.6 s per node when that is longer: "
        "hundreds of nodes relabelling often load etcd.",
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
    targetRevision: str = Field(
        "main",
        description="Git revision Argo CD syncs the rendered output from: a branch, or for production a tag or "
        "commit, so that nothing reaches the cluster before it is tagged.",
    )
    project: str | None = Field(
        None,
        description="Argo CD project of the Applications. Default: an AppProject named after the stack "
        "(in argocd/root.yaml), limited to the stack's repositories and namespaces; name another to use your "
        "own, and gpustack renders none.",
    )
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
