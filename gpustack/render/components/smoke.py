"""A smoke Job per GPU pool: ``nvidia-smi`` on one GPU of the pool, failing loudly.

It proves, right after install, what every GPU workload needs on that pool: the driver, the
container runtime's nvidia hook (RuntimeClass), the device plugin advertising the pool's resource
and the pool's labels, taints and scheduler (HAMi). It fails rather than waits: ``backoffLimit``
bounds the retries and ``activeDeadlineSeconds`` a pod that never schedules (no device plugin,
wrong labels). With Argo CD it is a PostSync hook of the manifests Application, re-run on each
sync (https://argo-cd.readthedocs.io/en/stable/user-guide/resource_hooks/); elsewhere a plain
Job.

Pools whose GPUs only DRA hands out (no device plugin resource) claim one device of the DRA
driver's own DeviceClass through a ResourceClaimTemplate of the same name (dra.smoke_claim); the
DRA driver hands the device over through CDI, so those pods name no RuntimeClass: the nvidia
runtime would hand every GPU of the node to the CUDA image (NVIDIA_VISIBLE_DEVICES=all).
"""

from __future__ import annotations

from typing import Any

from gpustack.render.component import Contribution, RenderContext, add_object
from gpustack.render.components import dra, pods
from gpustack.render.requests import requests
from gpustack.spec.models import GpuStack
from gpustack.spec.models.cluster import NodePool
from gpustack.spec.models.workloads import SmokeTest
from gpustack.spec.partitioning import pool_mig_strategy, pool_sharing, registered_labels
from gpustack.spec.pools import gpu_model, hami_pools

NAMESPACE = "default"
IMAGE = SmokeTest.model_fields["image"].default
# Long enough for the GPU Operator's driver container to build and load on a new node.
DEADLINE_SECONDS = 1800
RETRIES = 2
PRODUCT_LABEL = "nvidia.com/gpu.product"  # set by GPU Feature Discovery
HOOK = {"argocd.argoproj.io/hook": "PostSync", "argocd.argoproj.io/hook-delete-policy": "BeforeHookCreation"}
# On HAMi's pools a container that names no nvidia.com/gpumem gets the whole card's memory
# (HAMi's nvidia.defaultMemory 0 = 100 %: pkg/device/nvidia/device.go GenerateResourceRequests,
# https://github.com/Project-HAMi/HAMi/blob/master/docs/config.md), so the smoke Job would wait
# until no share is left on the card. nvidia-smi allocates no CUDA memory: a small share is enough.
HAMI_MEMORY_MIB = 256


def name(pool: NodePool) -> str:
    return f"gpu-smoke-{pool.name}"


def gpu_resource(stack: GpuStack, pool: NodePool) -> str | None:
    """The resource one GPU (or the smallest MIG slice) of the pool is asked for by; None under DRA."""
    if stack.spec.dra.enabled and not stack.spec.devicePlugin.enabled and not stack.spec.sharing.hami.enabled:
        return None
    if pool.mig is not None and pool_mig_strategy(stack, pool) == "mixed" and pool.mig.layout:
        return f"nvidia.com/mig-{next(iter(pool.mig.layout))}"
    sharing = pool_sharing(stack, pool)
    if sharing.strategy != "none" and sharing.renameByDefault:
        return f"{pods.GPU}.shared"
    return pods.GPU


def limits(stack: GpuStack, pool: NodePool, resource: str) -> dict[str, int]:
    """One GPU of ``resource``, and on HAMi's pools a small share of its memory."""
    if pool in hami_pools(stack):
        return {resource: 1, pods.GPU_MEMORY: HAMI_MEMORY_MIB}
    return {resource: 1}


def job(stack: GpuStack, pool: NodePool, resource: str | None) -> dict[str, Any]:
    """The pool's smoke Job: one ``resource``, or under DRA (None) one device of its claim template."""
    container = pods.hardened_container("nvidia-smi", IMAGE, limits=limits(stack, pool, resource) if resource else {})
    container["command"] = ["nvidia-smi"]
    container["resources"] = {**requests("gpu-smoke-test"), **container["resources"]}
    if resource is None:
        del container["resources"]["limits"]
        container["resources"]["claims"] = [{"name": dra.REQUEST_NAME}]
    labels = {
        "app.kubernetes.io/name": "gpu-smoke-test",
        "app.kubernetes.io/instance": name(pool),
        "app.kubernetes.io/component": "smoke-test",
        "app.kubernetes.io/managed-by": "gpustack",
    }
    metadata: dict[str, Any] = {"name": name(pool), "namespace": NAMESPACE, "labels": labels}
    if stack.spec.gitops.argocd.enabled:
        metadata["annotations"] = dict(HOOK)
    pod_spec = pods.gpu_pod_spec(stack, pool, [container], restart_policy="Never")
    if resource is None:
        pod_spec.pop("runtimeClassName", None)
        pod_spec["resourceClaims"] = [{"name": dra.REQUEST_NAME, "resourceClaimTemplateName": name(pool)}]
    if len(stack.spec.nodePools) > 1 and "nodeSelector" not in pod_spec:
        pod_spec["nodeSelector"] = _pool_selector(stack, pool)
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": metadata,
        "spec": {
            "backoffLimit": RETRIES,
            "activeDeadlineSeconds": DEADLINE_SECONDS,
            "template": {"metadata": {"labels": labels}, "spec": pod_spec},
        },
    }


def _pool_selector(stack: GpuStack, pool: NodePool) -> dict[str, str]:
    """The labels a pool's nodes register with (its config labels), else GPU Feature Discovery's
    product label, which GFD suffixes with -SHARED under time-slicing or MPS unless the resource
    is renamed (https://github.com/NVIDIA/k8s-device-plugin#shared-access-to-gpus)."""
    registered = registered_labels(stack, pool)
    if registered:
        return registered
    sharing = pool_sharing(stack, pool)
    shared = sharing.strategy != "none" and not sharing.renameByDefault
    return {PRODUCT_LABEL: gpu_model(pool).product + ("-SHARED" if shared else "")}


def build(chart: Any, ctx: RenderContext) -> Contribution:
    stack = ctx.stack
    if not stack.spec.smokeJobs:
        return Contribution()
    notes = []
    for pool in stack.spec.nodePools:
        resource = gpu_resource(stack, pool)
        if resource is None:
            claim = dra.smoke_claim(stack, name(pool), NAMESPACE)
            add_object(chart, claim)
        add_object(chart, job(stack, pool, resource))
        notes.append(
            f"Job `{NAMESPACE}/{name(pool)}` runs `nvidia-smi` with {_what(stack, pool, resource)} on pool `{pool.name}` "
            + ("after each Argo CD sync (PostSync hook)" if stack.spec.gitops.argocd.enabled else "once installed")
            + f"; it fails after {RETRIES + 1} attempts or {DEADLINE_SECONDS // 60} minutes unscheduled: "
            f"`kubectl -n {NAMESPACE} get job {name(pool)}` shows `Complete`, its log the GPU table."
        )
    return Contribution(notes=notes)


def _what(stack: GpuStack, pool: NodePool, resource: str | None) -> str:
    """What the pool's smoke Job asks for, in the README's words."""
    if resource is None:
        exactly = dra.smoke_claim(stack, name(pool), NAMESPACE)["spec"]["spec"]["devices"]["requests"][0]["exactly"]
        share = exactly.get("capacity", {}).get("requests")
        return (
            f"one device of DeviceClass `{exactly['deviceClassName']}` (ResourceClaimTemplate `{name(pool)}`"
            + (f", {share['cores']} % of its cores and {share['memory']}: a claim naming no capacity takes the whole card"
               if share else "")
            + ")"
        )
    if pool in hami_pools(stack):
        return (f"one `{resource}` (a {HAMI_MEMORY_MIB} MiB share of its memory: HAMi gives a pod that names none "
                "the whole card)")
    return f"one `{resource}`"
