"""Dynamic Resource Allocation: the driver chart, extra DeviceClasses, ResourceClaimTemplates, gates.

The driver charts create their own DeviceClasses (``gpu.nvidia.com``,
``hami-core-gpu.project-hami.io``); gpustack renders only the extra classes the spec names and
the claim templates, so Helm and Argo CD never fight over an object.
"""

from __future__ import annotations

from typing import Any

from gpustack import charts
from gpustack.charts import Chart
from gpustack.render.component import Contribution, RenderContext, add_object, chart_release
from gpustack.render.components import nfd
from gpustack.render.requests import requests
from gpustack.spec import featuregates
from gpustack.spec.deviceclasses import class_selectors
from gpustack.spec.models import GpuStack
from gpustack.spec.models.components import Capacity, ClaimTemplate, DeviceClassSpec

API_VERSION = "resource.k8s.io/v1"
REQUEST_NAME = "gpu"
WAVE = 1  # with the device plugins, after NFD
# Where the GPU Operator's driver container mounts the driver (its hostPaths.driverInstallDir).
OPERATOR_DRIVER_ROOT = "/run/nvidia/driver"


# A folder of Talos's writable /var for HAMi's vGPU library (Talos keeps / and /usr read-only:
# https://www.talos.dev/v1.13/learn-more/architecture/#the-file-system).
TALOS_VGPU_PATH = "/var/lib/hami/vgpu"


def driver(stack: GpuStack) -> Chart:
    """The chart of the spec's DRA driver (its ``dra_driver`` is the driver name). Each release
    and its namespace take the chart's name (HAMi's chart refuses the default namespace)."""
    return charts.dra_driver_chart(stack.spec.dra.driver)


def driver_root(stack: GpuStack) -> str:
    """``/`` for host-installed drivers (both charts' default), the operator's mount otherwise.

    Bind-mounting / onto /run/nvidia/driver would suit a manifest written for the
    operator; gpustack sets the chart value instead.
    """
    sources = {pool.driver.source for pool in stack.spec.nodePools}
    return OPERATOR_DRIVER_ROOT if sources == {"operator"} else "/"


def values(stack: GpuStack) -> dict[str, Any]:
    result: dict[str, Any] = {
        "nvidiaDriverRoot": driver_root(stack),
        # The charts guard GPU allocation behind this flag until the device plugin is known to be
        # off on the nodes; the spec checks make sure it is.
        "gpuResourcesEnabledOverride": True,
    }
    if stack.spec.dra.driver == "hami" and stack.spec.cluster.distribution == "talos":
        # The chart mounts driver.vgpuInitPath (default /usr/local/vgpu) as a hostPath of type
        # DirectoryOrCreate, which the kubelet cannot create under Talos's read-only /usr.
        result["driver"] = {"vgpuInitPath": TALOS_VGPU_PATH}
    kubelet_plugin: dict[str, Any] = {}
    if stack.spec.dra.driver == "hami":
        # NVIDIA's chart has this affinity by default; HAMi's runs on every node.
        kubelet_plugin["affinity"] = nfd.gpu_node_affinity()
        # The chart's containers.*.resources default to {}: no requests.
        kubelet_plugin["containers"] = {
            "init": {"resources": requests("hami-dra-init")},
            "gpus": {"resources": requests("hami-dra-plugin")},
        }
    tolerations = nfd.gpu_tolerations(stack, chart_defaults=_chart_tolerations(stack))
    if tolerations:
        kubelet_plugin["tolerations"] = tolerations
    if kubelet_plugin:
        result["kubeletPlugin"] = kubelet_plugin
    return result


def device_class(spec: DeviceClassSpec, dra_driver: Chart) -> dict[str, Any]:
    """An extra DeviceClass: the driver's devices of one type, narrowed by the spec's CEL selectors."""
    expressions = class_selectors(spec, str(dra_driver.dra_driver))
    return {
        "apiVersion": API_VERSION,
        "kind": "DeviceClass",
        "metadata": {"name": spec.name},
        "spec": {"selectors": [{"cel": {"expression": expression}} for expression in expressions]},
    }


def claim_template(spec: ClaimTemplate, dra_driver: Chart) -> dict[str, Any]:
    exactly: dict[str, Any] = {
        "deviceClassName": spec.deviceClassName or dra_driver.dra_driver,
        "allocationMode": "ExactCount",
        "count": spec.count,
    }
    if spec.selectors:
        exactly["selectors"] = [{"cel": {"expression": expression}} for expression in spec.selectors]
    if spec.capacity:
        # Quantities are strings in the API (e.g. {cores: "30", memory: "4Gi"}).
        requests: dict[str, str] = {}
        if spec.capacity.cores is not None:
            requests["cores"] = str(spec.capacity.cores)
        if spec.capacity.memory is not None:
            requests["memory"] = spec.capacity.memory
        exactly["capacity"] = {"requests": requests}
    return {
        "apiVersion": API_VERSION,
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": spec.name, "namespace": spec.namespace},
        "spec": {"spec": {"devices": {"requests": [{"name": REQUEST_NAME, "exactly": exactly}]}}},
    }


# A smoke Job's share of a HAMi GPU (smoke.py). HAMi's kubelet plugin publishes cores and memory
# with request policies whose defaults are the whole device (cores 100, all memory:
# https://github.com/Project-HAMi/k8s-dra-driver/blob/main/cmd/hami-kubelet-plugin/hami_core.go), so
# a claim that names no capacity takes the card. nvidia-smi launches no kernel and allocates no memory.
SMOKE_CAPACITY = Capacity(cores=1, memory="256Mi")


def consumable_capacity(stack: GpuStack) -> bool:
    """Whether the components run with DRAConsumableCapacity: the spec's gate, else on where the
    claim templates ask for capacity (``features``), else the version's default."""
    user = stack.spec.cluster.featureGates.get("DRAConsumableCapacity")
    if user is not None:
        return user
    if any(template.capacity for template in stack.spec.dra.claimTemplates):
        return True
    state = featuregates.GATES["DRAConsumableCapacity"].state(stack.spec.cluster.minor)
    return bool(state and state.default)


def smoke_claim(stack: GpuStack, name: str, namespace: str) -> dict[str, Any]:
    """The claim template of a smoke Job: one device of the driver's own class; with HAMi's driver
    a small share where the cluster can request one (never turning a gate on for it)."""
    capacity = SMOKE_CAPACITY if stack.spec.dra.driver == "hami" and consumable_capacity(stack) else None
    return claim_template(ClaimTemplate(name=name, namespace=namespace, capacity=capacity), driver(stack))


def features(stack: GpuStack) -> list[featuregates.Feature]:
    used: list[featuregates.Feature] = ["dra"]
    if any(template.capacity for template in stack.spec.dra.claimTemplates):
        used.append("dra-consumable-capacity")
    return used


def build(chart: Any, ctx: RenderContext) -> Contribution:
    stack = ctx.stack
    dra = stack.spec.dra
    if not dra.enabled:
        return Contribution()
    dra_driver = driver(stack)
    for spec in dra.deviceClasses:
        add_object(chart, device_class(spec, dra_driver))
    for template in dra.claimTemplates:
        add_object(chart, claim_template(template, dra_driver))
    release = chart_release(
        dra_driver.name,
        name=dra_driver.name,
        version=dra.version or dra_driver.version,
        namespace=dra_driver.name,
        values=values(stack),
        wave=WAVE,
    )
    gates = featuregates.component_gates(
        minor=stack.spec.cluster.minor, user_gates=stack.spec.cluster.featureGates, features=features(stack)
    )
    return Contribution(releases=[release], feature_gates=gates, notes=_notes(stack, dra_driver, gates))


def _chart_tolerations(stack: GpuStack) -> tuple[dict[str, Any], ...]:
    if stack.spec.dra.driver == "nvidia":
        # NVIDIA's chart tolerates the nvidia.com/gpu taint already (values.yaml kubeletPlugin).
        return ({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},)
    return ()


def _notes(stack: GpuStack, dra_driver: Chart, gates: dict[str, dict[str, bool]]) -> list[str]:
    root, name = driver_root(stack), dra_driver.dra_driver
    notes = [
        f"DRA driver `{name}` creates its own DeviceClass `{name}`; gpustack adds only "
        "the classes and ResourceClaimTemplates of the spec. A claim is allocated when a pod that uses it is "
        "scheduled: a ResourceClaim nobody uses stays pending.",
        f"The driver's kubelet plugin looks for the NVIDIA driver under `{root}` (`nvidiaDriverRoot`). gpustack "
        "follows upstream, whose default is `/` for host-installed drivers: no need to bind-mount `/` onto "
        "/run/nvidia/driver.",
    ]
    if stack.spec.dra.driver == "hami" and stack.spec.cluster.distribution == "talos":
        notes.append(
            f"On Talos the HAMi driver's vGPU library goes to `{TALOS_VGPU_PATH}` (`driver.vgpuInitPath`): the chart's "
            "/usr/local/vgpu is a hostPath the kubelet would have to create under Talos's read-only /usr. The driver "
            "0.1.0 also looks for the NVIDIA libraries where Talos's extensions do not put them "
            "(https://github.com/Project-HAMi/k8s-dra-driver/issues/46): check that its kubelet plugin starts "
            "(`kubectl -n hami-dra-driver get pods`) before relying on the pool."
        )
    if dra_driver.path:
        notes.append(
            f"The `{dra_driver.name}` chart is not published to a Helm repository: Argo CD installs it from "
            f"{dra_driver.repository} (folder `{dra_driver.path}`), K3s' helm-controller cannot, so on K3s without "
            "Argo CD install it with the Helm command of the apply order. "
            f"The chart is pinned to tag {dra_driver.version}; `dra.version` selects another tag of that repository."
        )
    version = stack.spec.cluster.kubernetesVersion
    if gates:
        flags = "; ".join(f"{component}: {', '.join(sorted(g))}" for component, g in gates.items())
        notes.append(f"DRA feature gates for Kubernetes {version} (in `cluster/`): {flags}.")
    elif "dra-consumable-capacity" in features(stack):
        notes.append(
            f"Capacity requests need DRAConsumableCapacity, beta and on by default in Kubernetes {version}: "
            "no gate to set (https://kubernetes.io/docs/reference/command-line-tools-reference/feature-gates/)."
        )
    return notes
