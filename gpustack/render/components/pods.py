"""What every pod the stack renders is built from: GPU resource names, labels, hardened
containers, the GPU pod spec of a pool (runtime class, scheduler, selector, tolerations), Jobs.

The workloads, the smoke Jobs, the MinIO users Job and the NetworkPolicies (which select pods by
these labels) share them.
"""

from __future__ import annotations

from typing import Any

from gpustack.render.components import hami, runtime
from gpustack.spec.models import GpuStack
from gpustack.spec.models.cluster import NodePool
from gpustack.spec.pools import hami_pools

GPU = "nvidia.com/gpu"
GPU_MEMORY = "nvidia.com/gpumem"  # HAMi, MiB
GPU_CORES = "nvidia.com/gpucores"  # HAMi, percent
APP_LABEL, INSTANCE_LABEL = "app.kubernetes.io/name", "app.kubernetes.io/instance"
# Every pod the workloads render carries it: the NetworkPolicies select them by it.
MANAGED_BY = {"app.kubernetes.io/managed-by": "gpustack"}
# MinIO, the loader and the CUDA samples run as this unprivileged user (the images default to root).
UNPRIVILEGED_USER = 1000


def job(
    name: str, namespace: str, labels: dict[str, str], pod_spec: dict[str, Any], *, backoff_limit: int
) -> dict[str, Any]:
    """A batch/v1 Job whose Pods carry the Job's labels."""
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {
            "backoffLimit": backoff_limit,
            "template": {"metadata": {"labels": labels}, "spec": pod_spec},
        },
    }


def runtime_class_name(stack: GpuStack) -> str | None:
    """``nvidia`` unless containerd's default runtime is nvidia (K3s: https://docs.k3s.io/advanced)."""
    return None if stack.spec.cluster.nvidiaDefaultRuntime else runtime.RUNTIME_CLASS


def scheduled_by_hami(stack: GpuStack, pool: NodePool) -> bool:
    """Whether GPU pods on ``pool`` name hami-scheduler themselves (``sharing.hami.schedulerName``)."""
    hami_spec = stack.spec.sharing.hami
    return hami_spec.enabled and hami_spec.schedulerName and pool in hami_pools(stack)


def hardened_container(name: str, image: str, *, limits: dict[str, int]) -> dict[str, Any]:
    # Extended resources: limits alone imply equal requests.
    return {
        "name": name,
        "image": image,
        "resources": {"limits": limits},
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
            "privileged": False,
        },
    }


def gpu_pod_spec(
    stack: GpuStack, pool: NodePool, containers: list[dict[str, Any]], *, restart_policy: str
) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if scheduled_by_hami(stack, pool):
        spec["schedulerName"] = hami.SCHEDULER_NAME
    runtime_class = runtime_class_name(stack)
    if runtime_class:
        spec["runtimeClassName"] = runtime_class
    if len(stack.spec.nodePools) > 1 and pool.labels:
        spec["nodeSelector"] = dict(pool.labels)
    if pool.taints:
        spec["tolerations"] = [{"key": t.key, "operator": "Exists", "effect": t.effect} for t in pool.taints]
    spec["restartPolicy"] = restart_policy
    spec["securityContext"] = {"seccompProfile": {"type": "RuntimeDefault"}}
    spec["containers"] = containers
    return spec


def labels(*, app: str, instance: str, component: str) -> dict[str, str]:
    return {
        APP_LABEL: app,
        INSTANCE_LABEL: instance,
        "app.kubernetes.io/component": component,
        **MANAGED_BY,
    }


def selector(app: str, instance: str) -> dict[str, str]:
    """The labels that select the pods of one workload (also read by the NetworkPolicies)."""
    return {APP_LABEL: app, INSTANCE_LABEL: instance}


def read_only_non_root(pod_spec: dict[str, Any]) -> dict[str, Any]:
    """Pod Security "restricted" for the CUDA images (root by default): nvidia-smi and the nbody
    sample only open the GPU's device nodes, which the driver creates readable and writable by
    every user, and write nothing.

    Not for vLLM's image: it runs as root and writes its caches under /root (Hugging Face, torch
    compile, Triton) and /tmp, so it keeps a writable root and its user (namespace "baseline").
    MinIO and the model loader run unprivileged (``unprivileged_pod``) but write outside their
    volumes (MinIO its certificate folder under $HOME, Python its caches), so their root stays
    writable.
    """
    pod_spec["securityContext"] = unprivileged_pod()
    for container in pod_spec["containers"]:
        container["securityContext"]["readOnlyRootFilesystem"] = True
    return pod_spec


def unprivileged_pod() -> dict[str, Any]:
    return {
        "runAsNonRoot": True,
        "runAsUser": UNPRIVILEGED_USER,
        "runAsGroup": UNPRIVILEGED_USER,
        "fsGroup": UNPRIVILEGED_USER,
        "seccompProfile": {"type": "RuntimeDefault"},
    }
