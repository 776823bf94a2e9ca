"""Cross-field checks of the deployed components: DCGM profiling, HAMi, DRA, feature gates, workloads, runbooks.

Each check yields a ``Finding`` like the pool checks; the constants here bound what render
writes (vLLM's memory share, the DeviceClass names the DRA charts own).
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack import charts
from gpustack.spec import runbooks
from gpustack.spec.featuregates import gate_problems
from gpustack.spec.models import GpuStack
from gpustack.spec.pool_checks import Finding
from gpustack.spec.pools import gpu_model, hami_pool_labels, hami_pools, workload_pool

DRA_MIN_MINOR = 34  # resource.k8s.io/v1 is served from Kubernetes 1.34
# vLLM's --gpu-memory-utilization ceiling gpustack renders: leaves room for the CUDA context.
MAX_GPU_MEMORY_UTILIZATION = 0.95


def check_profiling(stack: GpuStack) -> Iterator[Finding]:
    if stack.spec.monitoring.dcgmExporter.profiling != "on":
        return
    geforce = [p.name for p in stack.spec.nodePools if not gpu_model(p).dcgmProfiling]
    if geforce:
        yield ("spec", "monitoring", "dcgmExporter", "profiling"), (
            f"profiling: on, but pools {', '.join(geforce)} have GPUs without DCGM profiling "
            "metrics (GeForce): use profiling: auto, which enables them where they exist"
        )


def check_hami(stack: GpuStack) -> Iterator[Finding]:
    hami = stack.spec.sharing.hami
    if not hami.enabled:
        return
    names = {p.name for p in stack.spec.nodePools}
    for j, name in enumerate(hami.pools or []):
        if name not in names:
            yield ("spec", "sharing", "hami", "pools", j), f"no node pool named {name!r}"
    if not hami.admissionWebhook and not hami.schedulerName:
        yield ("spec", "sharing", "hami", "schedulerName"), (
            "with admissionWebhook: false and schedulerName: false, no pod reaches hami-scheduler: the default "
            "scheduler places them without HAMi's device accounting; set one of them true"
        )
    served = hami_pools(stack)
    # The GPU Operator's device plugin follows devicePlugin.enabled too (next to HAMi,
    # set devicePlugin.enabled=false in the GPU Operator: https://github.com/Project-HAMi/HAMi).
    if stack.spec.devicePlugin.enabled and len(served) == len(stack.spec.nodePools):
        yield ("spec", "devicePlugin", "enabled"), (
            "HAMi and the NVIDIA device plugin would both advertise nvidia.com/gpu on "
            f"the same nodes ({', '.join(p.name for p in served)}): set spec.devicePlugin.enabled: false, "
            "or limit sharing.hami.pools to pools the device plugin does not serve"
        )
    others = [p for p in stack.spec.nodePools if p not in served]
    if served and others:
        labels = hami_pool_labels(stack)
        if not labels or any(labels.items() <= p.labels.items() for p in others):
            yield ("spec", "sharing", "hami", "pools"), (
                "HAMi's device plugin selects its nodes by label: give the pools "
                f"{', '.join(p.name for p in served)} a common entry in nodePools[].labels that pools "
                f"{', '.join(p.name for p in others)} do not carry"
            )
    if stack.spec.devicePlugin.sharing.strategy != "none" and served:
        yield ("spec", "devicePlugin", "sharing", "strategy"), (
            "time-slicing/MPS sharing and HAMi both split GPUs: choose one"
        )


# DeviceClasses the DRA driver charts create themselves: gpustack never
# renders these names, so Helm/Argo CD never fight over their ownership.
DRIVER_DEVICE_CLASSES = frozenset(name for chart in charts.registry().values() for name in chart.device_classes)


def check_dra(stack: GpuStack) -> Iterator[Finding]:
    dra = stack.spec.dra
    cluster = stack.spec.cluster
    if not dra.enabled:
        if dra.claimTemplates or dra.deviceClasses:
            yield ("spec", "dra", "enabled"), "claimTemplates/deviceClasses are set but dra.enabled is false"
        return
    if cluster.minor < DRA_MIN_MINOR:
        yield ("spec", "cluster", "kubernetesVersion"), (
            f"DRA (resource.k8s.io/v1) needs Kubernetes >= 1.{DRA_MIN_MINOR}; "
            f"the cluster is {cluster.kubernetesVersion}: upgrade or set dra.enabled: false"
        )
    uses_capacity = any(t.capacity for t in dra.claimTemplates)
    if uses_capacity and cluster.featureGates.get("DRAConsumableCapacity") is False:
        yield ("spec", "cluster", "featureGates", "DRAConsumableCapacity"), (
            "claim templates request capacity (cores/memory), which needs DRAConsumableCapacity: "
            "remove the `false` or drop the capacity requests"
        )
    if dra.driver == "nvidia" and uses_capacity:
        for j, template in enumerate(dra.claimTemplates):
            if template.capacity:
                yield ("spec", "dra", "claimTemplates", j, "capacity"), (
                    "NVIDIA's DRA driver publishes no consumable cores/memory capacity; "
                    "use driver: hami for fractional GPUs or remove capacity"
                )
    # Both DRA drivers publish nvidia.com/gpu (extendedResourceName) and allocate the same GPUs
    # as a device plugin on the node (the DRA driver charts warn about it).
    if stack.spec.devicePlugin.enabled:
        yield ("spec", "devicePlugin", "enabled"), (
            "the DRA driver needs the NVIDIA device plugin disabled on the same nodes "
            "(both allocate the GPUs and publish nvidia.com/gpu): set devicePlugin.enabled: false"
        )
    if stack.spec.sharing.hami.enabled:
        yield ("spec", "sharing", "hami", "enabled"), (
            "HAMi's device plugin and a DRA driver would allocate the same GPUs: "
            "use HAMi's DRA driver (dra.driver: hami) without sharing.hami"
        )
    sources = {p.driver.source for p in stack.spec.nodePools}
    if len(sources) > 1:
        yield ("spec", "dra", "driver"), (
            "the DRA driver chart takes one driver root, but the pools mix host-installed and "
            "GPU Operator drivers: use one driver.source on every pool"
        )
    for j, device_class in enumerate(dra.deviceClasses):
        if device_class.name in DRIVER_DEVICE_CLASSES:
            yield ("spec", "dra", "deviceClasses", j, "name"), (
                f"DeviceClass {device_class.name} is created by the DRA driver chart; "
                "give gpustack's extra class a name of its own"
            )


def check_feature_gates(stack: GpuStack) -> Iterator[Finding]:
    cluster = stack.spec.cluster
    for gate, message in gate_problems(minor=cluster.minor, gates=cluster.featureGates):
        yield ("spec", "cluster", "featureGates", gate), message


def check_workloads(stack: GpuStack) -> Iterator[Finding]:
    served = {p.name for p in hami_pools(stack)}
    for j, workload in enumerate(stack.spec.workloads):
        if workload.type != "vllm":
            continue
        pool = workload_pool(stack, workload)
        if pool is None:
            yield ("spec", "workloads", j, "pool"), f"no node pool named {workload.pool!r}"
            continue
        visible = gpu_model(pool).memoryMiB
        if workload.share is not None:
            if not stack.spec.sharing.hami.enabled:
                yield ("spec", "workloads", j, "share"), (
                    "a GPU share (memoryMiB/cores) needs sharing.hami.enabled: true"
                )
            elif pool.name not in served:
                yield ("spec", "workloads", j, "share"), f"pool {pool.name!r} is not served by HAMi"
            if workload.share.memoryMiB > visible:
                yield ("spec", "workloads", j, "share", "memoryMiB"), (
                    f"{workload.share.memoryMiB} MiB is more than the {visible} MiB of a {pool.gpu.model}"
                )
            visible = min(visible, workload.share.memoryMiB)
        if workload.modelMemoryMiB is not None and workload.modelMemoryMiB > MAX_GPU_MEMORY_UTILIZATION * visible:
            yield ("spec", "workloads", j, "modelMemoryMiB"), (
                f"{workload.modelMemoryMiB} MiB does not fit in {MAX_GPU_MEMORY_UTILIZATION:.0%} of the "
                f"{visible} MiB the container sees: raise share.memoryMiB or pick a larger GPU"
            )


def check_runbook_base(stack: GpuStack) -> Iterator[Finding]:
    """Alerts delivered from a Git repository whose README page gpustack cannot form need runbookBaseUrl."""
    monitoring = stack.spec.monitoring
    argocd = stack.spec.gitops.argocd
    if not (monitoring.enabled and monitoring.alerts.enabled) or monitoring.alerts.runbookBaseUrl:
        return
    if argocd.enabled and argocd.repoURL and runbooks.repository_readme(stack) is None:
        folder = stack.spec.gitops.stack_path(stack.metadata.name)
        # Located at repoURL, the line that makes it necessary (runbookBaseUrl is not in the file).
        yield ("spec", "gitops", "argocd", "repoURL"), (
            f"the alerts' runbook links point into the rendered README, and gpustack can form its page only on "
            f"GitHub or GitLab, not in {argocd.repoURL}: set monitoring.alerts.runbookBaseUrl to the https URL "
            f"of {folder}/README.md at revision {argocd.targetRevision} in that repository's web view"
        )


def check_delivery(stack: GpuStack) -> Iterator[Finding]:
    """One delivery per stack: two would install every chart twice and fight over its objects."""
    gitops = stack.spec.gitops
    if not gitops.flux.enabled:
        return
    if gitops.argocd.enabled:
        yield ("spec", "gitops", "flux", "enabled"), (
            "Flux and Argo CD would both install every chart and fight over its objects: enable one of "
            "gitops.flux and gitops.argocd"
        )
    if gitops.k3sHelmCharts:
        yield ("spec", "gitops", "k3sHelmCharts"), (
            "K3s HelmCharts and Flux HelmReleases would both install every chart: remove k3sHelmCharts: true "
            "(with Flux it defaults to off)"
        )
