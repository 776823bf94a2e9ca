"""Optional workloads: a GPU smoke-test Pod, the nbody benchmark Job, vLLM serving from S3.

Every container is hardened (no privilege, all capabilities dropped: the nvidia runtime injects
the GPU, DESIGN §6 GS002/GS023) and runs with RuntimeClass nvidia unless nvidia is containerd's
default runtime.
"""

from __future__ import annotations

import math
from typing import Any

from gpustack.render import runtime
from gpustack.render.component import Contribution, RenderContext, add_object
from gpustack.spec.checks import MAX_GPU_MEMORY_UTILIZATION, gpu_model, hami_pools
from gpustack.spec.models import GpuStack, Nbody, NodePool, SmokeTest, Vllm

GPU = "nvidia.com/gpu"
GPU_MEMORY = "nvidia.com/gpumem"  # HAMi, MiB (upstream-facts §7)
GPU_CORES = "nvidia.com/gpucores"  # HAMi, percent
VLLM_PORT = 8000
# vLLM's own default; used when nothing says how much of the visible memory the model needs.
DEFAULT_GPU_MEMORY_UTILIZATION = 0.9


def build(chart: Any, ctx: RenderContext) -> Contribution:
    stack = ctx.stack
    notes = []
    for workload in stack.spec.workloads:
        if isinstance(workload, SmokeTest):
            add_object(chart, smoke_test(stack, workload))
        elif isinstance(workload, Nbody):
            add_object(chart, nbody(stack, workload))
        else:
            add_object(chart, vllm_deployment(stack, workload))
            add_object(chart, vllm_service(workload))
            notes.append(_vllm_note(workload))
    return Contribution(notes=notes)


def smoke_test(stack: GpuStack, spec: SmokeTest) -> dict[str, Any]:
    """A Pod that prints nvidia-smi's table and exits (seed 001 §6)."""
    container = _container("nvidia-smi", spec.image, limits={GPU: 1})
    container["command"] = ["nvidia-smi"]
    labels = _labels(app="gpu-smoke-test", instance=spec.name, component="smoke-test")
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": spec.name, "namespace": spec.namespace, "labels": labels},
        "spec": _pod_spec(stack, stack.spec.nodePools[0], [container], restart_policy="Never"),
    }


def nbody(stack: GpuStack, spec: Nbody) -> dict[str, Any]:
    """The CUDA nbody benchmark as a Job (seed 001 §7: args and 3,000,000 bodies on an L4)."""
    container = _container("nbody", spec.image, limits={GPU: 1})
    container["args"] = ["nbody", "-gpu", "-benchmark", f"-numbodies={spec.bodies}"]
    labels = _labels(app="nbody", instance=spec.name, component="benchmark")
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": spec.name, "namespace": spec.namespace, "labels": labels},
        "spec": {
            # A benchmark that fails reports it; retrying only repeats the failure.
            "backoffLimit": 0,
            "template": {
                "metadata": {"labels": labels},
                "spec": _pod_spec(stack, stack.spec.nodePools[0], [container], restart_policy="Never"),
            },
        },
    }


def vllm_deployment(stack: GpuStack, spec: Vllm) -> dict[str, Any]:
    """vLLM streaming the model from S3/MinIO with Run:ai's streamer (seed 001 §10, §11)."""
    pool = _pool(stack, spec)
    limits: dict[str, int] = {GPU: spec.gpus}
    if spec.share is not None:
        limits[GPU_MEMORY] = spec.share.memoryMiB
        if spec.share.cores is not None:
            limits[GPU_CORES] = spec.share.cores
    container = _container("vllm", spec.image, limits=limits)
    container["args"] = vllm_args(stack, spec)
    container["env"] = _s3_env(spec)
    container["ports"] = [{"name": "http", "containerPort": VLLM_PORT}]
    probe = {"httpGet": {"path": "/health", "port": "http"}, "periodSeconds": 10}
    # Streaming the weights takes minutes (seed 001 §10: 4 min for 13.5 GB); allow 10.
    container["startupProbe"] = {**probe, "failureThreshold": 60}
    container["readinessProbe"] = probe
    labels = _labels(app="vllm", instance=spec.name, component="inference")
    pod_spec = _pod_spec(stack, pool, [container], restart_policy="Always")
    if spec.gpus > 1:
        # Tensor parallelism exchanges data through shared memory; the default /dev/shm is 64 MiB.
        container["volumeMounts"] = [{"name": "dshm", "mountPath": "/dev/shm"}]
        pod_spec["volumes"] = [{"name": "dshm", "emptyDir": {"medium": "Memory"}}]
    deployment_spec: dict[str, Any] = {
        "replicas": spec.replicas,
        "selector": {"matchLabels": _selector(spec)},
        "template": {"metadata": {"labels": labels}, "spec": pod_spec},
    }
    if needs_recreate(stack, spec):
        # A rolling update starts the new pod while the old one holds its GPU (share): with no
        # spare capacity the new pod stays Pending and the rollout deadlocks (seed 001 §11).
        deployment_spec["strategy"] = {"type": "Recreate"}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": spec.name, "namespace": spec.namespace, "labels": labels},
        "spec": deployment_spec,
    }


def vllm_service(spec: Vllm) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": spec.name,
            "namespace": spec.namespace,
            "labels": _labels(app="vllm", instance=spec.name, component="inference"),
        },
        "spec": {
            "selector": _selector(spec),
            "ports": [{"name": "http", "port": VLLM_PORT, "targetPort": "http"}],
        },
    }


def vllm_args(stack: GpuStack, spec: Vllm) -> list[str]:
    args = [
        spec.model.uri,
        "--load-format=runai_streamer",
        f"--served-model-name={spec.servedModelName or spec.name}",
        f"--gpu-memory-utilization={gpu_memory_utilization(stack, spec)}",
    ]
    if spec.gpus > 1:
        args.append(f"--tensor-parallel-size={spec.gpus}")
    if spec.maxModelLen is not None:
        args.append(f"--max-model-len={spec.maxModelLen}")
    return args


def gpu_memory_utilization(stack: GpuStack, spec: Vllm) -> float:
    """What vLLM may take of the memory it sees: the HAMi share when there is one.

    The ratio applies to the share, not the card (seed 001 §11: 0.28 × 8000 MiB = 2240 MiB
    failed a 2.98 GiB model, 0.80 passed): modelMemoryMiB / visible memory, rounded up to two
    decimals and capped at 0.95; vLLM's default 0.9 without modelMemoryMiB.
    """
    if spec.modelMemoryMiB is None:
        return DEFAULT_GPU_MEMORY_UTILIZATION
    visible = spec.share.memoryMiB if spec.share else gpu_model(_pool(stack, spec)).memoryMiB
    return min(math.ceil(spec.modelMemoryMiB * 100 / visible) / 100, MAX_GPU_MEMORY_UTILIZATION)


def needs_recreate(stack: GpuStack, spec: Vllm) -> bool:
    """Whether a rolling update could deadlock: a HAMi share, or no whole GPU left for a surge pod.

    The linter's GS005 makes the same judgement with the spec as context (DESIGN §10).
    """
    pool = _pool(stack, spec)
    if spec.share is not None or pool in hami_pools(stack):
        return True
    gpus = pool.count * pool.gpu.count
    used = sum(w.replicas * w.gpus for w in stack.spec.workloads if isinstance(w, Vllm) and _pool(stack, w) == pool)
    return gpus - used < spec.gpus


def runtime_class_name(stack: GpuStack) -> str | None:
    """``nvidia`` unless containerd's default runtime is nvidia (K3s needs it: upstream-facts §4)."""
    return None if stack.spec.cluster.nvidiaDefaultRuntime else runtime.RUNTIME_CLASS


def _pool(stack: GpuStack, spec: Vllm) -> NodePool:
    pools = {pool.name: pool for pool in stack.spec.nodePools}
    return pools[spec.pool] if spec.pool else stack.spec.nodePools[0]


def _container(name: str, image: str, *, limits: dict[str, int]) -> dict[str, Any]:
    # Extended resources: limits alone imply equal requests (DESIGN §9).
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


def _pod_spec(
    stack: GpuStack, pool: NodePool, containers: list[dict[str, Any]], *, restart_policy: str
) -> dict[str, Any]:
    spec: dict[str, Any] = {}
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


def _s3_env(spec: Vllm) -> list[dict[str, Any]]:
    secret = spec.model.credentialsSecret
    return [
        {"name": "AWS_ENDPOINT_URL", "value": spec.model.endpoint},
        # Without it boto3 asks the EC2 metadata service for credentials and ignores MinIO's
        # keys (seed 001 §10).
        {"name": "AWS_EC2_METADATA_DISABLED", "value": "true"},
        *(
            {"name": key, "valueFrom": {"secretKeyRef": {"name": secret, "key": key}}}
            for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")
        ),
    ]


def _labels(*, app: str, instance: str, component: str) -> dict[str, str]:
    return {
        "app.kubernetes.io/name": app,
        "app.kubernetes.io/instance": instance,
        "app.kubernetes.io/component": component,
        "app.kubernetes.io/managed-by": "gpustack",
    }


def _selector(spec: Vllm) -> dict[str, str]:
    return {"app.kubernetes.io/name": "vllm", "app.kubernetes.io/instance": spec.name}


def _vllm_note(spec: Vllm) -> str:
    return (
        f"vLLM `{spec.namespace}/{spec.name}` streams {spec.model.uri} from {spec.model.endpoint}: create the "
        f"Secret first, `kubectl -n {spec.namespace} create secret generic {spec.model.credentialsSecret} "
        "--from-literal=AWS_ACCESS_KEY_ID=… --from-literal=AWS_SECRET_ACCESS_KEY=…`."
    )
