"""Optional workloads: a GPU smoke-test Pod, the nbody benchmark Job, vLLM serving from S3,
and, when the spec asks, the S3 store (MinIO) and a Job that uploads a model into it.

Every container is hardened (no privilege, all capabilities dropped: the nvidia runtime injects
the GPU; GS002/GS023) and runs with RuntimeClass nvidia unless nvidia is containerd's
default runtime.
"""

from __future__ import annotations

import math
import shlex
from typing import Any

from gpustack.render import secret_names
from gpustack.render.component import Contribution, RenderContext, add_object
from gpustack.render.components import model_sources, pods, smoke
from gpustack.render.components import secrets as secrets_module
from gpustack.spec.component_checks import MAX_GPU_MEMORY_UTILIZATION
from gpustack.spec.models import GpuStack
from gpustack.spec.models.cluster import NodePool
from gpustack.spec.models.workloads import MC_IMAGE, MINIO_IMAGE, Minio, ModelLoader, Nbody, S3Source, SmokeTest, Vllm
from gpustack.spec.pools import gpu_model, hami_pools, workload_pool

VLLM_PORT = 8000
# vLLM's own default; used when nothing says how much of the visible memory the model needs.
DEFAULT_GPU_MEMORY_UTILIZATION = 0.9
MINIO_API_PORT, MINIO_CONSOLE_PORT = 9000, 9001
VLLM_APP, MINIO_APP, LOADER_APP = "vllm", "minio", "model-loader"
# Every Hugging Face model has it; the loader uploads it last and vLLM waits for it.
MODEL_MARKER = "config.json"


def build(chart: Any, ctx: RenderContext) -> Contribution:
    stack = ctx.stack
    notes = []
    needed: dict[tuple[str, str, tuple[str, ...]], list[str]] = {}  # (namespace, Secret, keys) → who reads it
    for workload in stack.spec.workloads:
        if isinstance(workload, SmokeTest):
            add_object(chart, smoke_test(stack, workload))
        elif isinstance(workload, Nbody):
            add_object(chart, nbody(stack, workload))
        elif isinstance(workload, Minio):
            for obj in minio_objects(workload):
                add_object(chart, obj)
            if workload.image == MINIO_IMAGE:
                notes.append(minio_image_note(workload))
            needed.setdefault((workload.namespace, workload.credentialsSecret, model_sources.S3_KEYS), []).append(
                f"MinIO `{workload.name}`"
            )
        elif isinstance(workload, ModelLoader):
            upload_secret = secret_names.s3_credentials(stack, workload.destination, writes=True)
            add_object(chart, model_loader(workload, upload_secret))
            needed.setdefault((workload.namespace, upload_secret, model_sources.S3_KEYS), []).append(
                f"Job `{workload.name}`"
            )
            notes.append(
                f"Job `{workload.namespace}/{workload.name}` downloads {workload.huggingFaceModel} from Hugging Face "
                f"and mirrors it to {workload.destination.uri}; vLLM servers reading it wait in their init container `wait-for-model` until its `config.json`, uploaded last, is there."
            )
        else:
            add_object(chart, vllm_deployment(stack, workload))
            add_object(chart, vllm_service(workload))
            if workload.replicas > 1:
                add_object(chart, vllm_disruption_budget(workload))
            for secret, keys in model_sources.secrets(stack, workload):
                needed.setdefault((workload.namespace, secret, keys), []).append(f"vLLM `{workload.name}`")
            notes += model_sources.prerequisites(stack, workload)
            if workload.apiKeySecret:
                notes.append(
                    f"vLLM `{workload.namespace}/{workload.name}` answers only requests with "
                    f"`Authorization: Bearer` and key `{secrets_module.VLLM_API_KEY}` of Secret "
                    f"`{workload.apiKeySecret}` (`/health` stays open for the probes); an empty `apiKeySecret` in the spec turns the key off."
                )
    generated = {(namespace, name) for namespace, names in secrets_module.wanted(stack).items() for name in names}
    notes = [
        _secret_note(namespace, secret, keys, users)
        for (namespace, secret, keys), users in needed.items()
        if (namespace, secret) not in generated
    ] + notes
    return Contribution(notes=notes)


def smoke_test(stack: GpuStack, spec: SmokeTest) -> dict[str, Any]:
    """A Pod that prints nvidia-smi's table and exits (on HAMi's pools in a small share, as the smoke Jobs)."""
    pool = stack.spec.nodePools[0]
    container = pods.hardened_container("nvidia-smi", spec.image, limits=smoke.limits(stack, pool, pods.GPU))
    container["command"] = ["nvidia-smi"]
    labels = pods.labels(app="gpu-smoke-test", instance=spec.name, component="smoke-test")
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": spec.name, "namespace": spec.namespace, "labels": labels},
        "spec": pods.read_only_non_root(pods.gpu_pod_spec(stack, pool, [container], restart_policy="Never")),
    }


def nbody(stack: GpuStack, spec: Nbody) -> dict[str, Any]:
    """The CUDA nbody benchmark as a Job."""
    container = pods.hardened_container("nbody", spec.image, limits={pods.GPU: 1})
    container["args"] = ["nbody", "-gpu", "-benchmark", f"-numbodies={spec.bodies}"]
    labels = pods.labels(app="nbody", instance=spec.name, component="benchmark")
    pod_spec = pods.read_only_non_root(pods.gpu_pod_spec(stack, stack.spec.nodePools[0], [container], restart_policy="Never"))
    # A benchmark that fails reports it; retrying only repeats the failure.
    return pods.job(spec.name, spec.namespace, labels, pod_spec, backoff_limit=0)


def vllm_deployment(stack: GpuStack, spec: Vllm) -> dict[str, Any]:
    """vLLM serving the model from its source (``model_sources``: S3, Hugging Face or a PVC)."""
    pool = _pool(stack, spec)
    limits: dict[str, int] = {pods.GPU: spec.gpus}
    if spec.share is not None:
        limits[pods.GPU_MEMORY] = spec.share.memoryMiB
        if spec.share.cores is not None:
            limits[pods.GPU_CORES] = spec.share.cores
    container = pods.hardened_container("vllm", spec.image, limits=limits)
    # Memory limit = request: the node does not overcommit what the streamer buffers.
    container["resources"] = {
        "requests": {"cpu": spec.cpu, "memory": spec.memory},
        "limits": {**limits, "memory": spec.memory},
    }
    container["args"] = vllm_args(stack, spec)
    container["env"] = model_sources.env(stack, spec)
    if spec.apiKeySecret:
        # vLLM reads VLLM_API_KEY like --api-key, without the key on its command line
        # (https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html).
        container["env"] += model_sources.secret_env(spec.apiKeySecret, (secrets_module.VLLM_API_KEY,))
    container["ports"] = [{"name": "http", "containerPort": VLLM_PORT}]
    probe = {"httpGet": {"path": "/health", "port": "http"}, "periodSeconds": 10}
    # Streaming the weights takes minutes (about 4 min for 13.5 GB); allow 10. Liveness
    # and readiness start once the startup probe has passed.
    container["startupProbe"] = {**probe, "failureThreshold": 60}
    container["readinessProbe"] = probe
    container["livenessProbe"] = {**probe, "failureThreshold": 6}
    # PyTorch's worker processes and tensor parallelism use /dev/shm; the runtime gives 64 MiB.
    model_volumes, model_mounts = model_sources.volumes(spec)
    container["volumeMounts"] = [{"name": "dshm", "mountPath": "/dev/shm"}, *model_mounts]
    labels = pods.labels(app=VLLM_APP, instance=spec.name, component="inference")
    pod_spec = pods.gpu_pod_spec(stack, pool, [container], restart_policy="Always")
    if isinstance(spec.model, S3Source):
        pod_spec["initContainers"] = [model_gate(stack, spec.model)]
    pod_spec["volumes"] = [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": spec.shmSize}}, *model_volumes]
    deployment_spec: dict[str, Any] = {
        "replicas": spec.replicas,
        "selector": {"matchLabels": _selector(spec)},
        "template": {"metadata": {"labels": labels}, "spec": pod_spec},
    }
    if needs_recreate(stack, spec):
        # A rolling update starts the new pod while the old one holds its GPU (share): with no
        # spare capacity the new pod stays Pending and the rollout deadlocks.
        deployment_spec["strategy"] = {"type": "Recreate"}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": spec.name, "namespace": spec.namespace, "labels": labels},
        "spec": deployment_spec,
    }


def model_gate(stack: GpuStack, source: S3Source) -> dict[str, Any]:
    """An init container that waits until the model's ``config.json`` is in the store.

    Without it vLLM crash-loops, with growing back-off, until the model is uploaded. An init
    container gates every delivery alike (kubectl, K3s, Argo CD sync waves would order only the
    last): the pod starts once the model is there, however it got there. The model loader uploads
    ``config.json`` last, so its presence means the upload is complete. Hugging Face sources are
    downloaded by vLLM itself, and a PVC is the user's to fill: neither is gated.
    """
    container = pods.hardened_container("wait-for-model", MC_IMAGE, limits={})
    config = shlex.quote(f"store/{source.uri.removeprefix('s3://')}/{MODEL_MARKER}")
    container["command"] = [
        "sh",
        "-c",
        'until mc alias set store "$AWS_ENDPOINT_URL" "$AWS_ACCESS_KEY_ID" "$AWS_SECRET_ACCESS_KEY" --api S3v4 >/dev/null '
        f"&& mc stat {config} >/dev/null; do echo waiting for {config}; sleep 10; done",
    ]
    container["env"] = [
        {"name": "AWS_ENDPOINT_URL", "value": source.endpoint},
        {"name": "MC_CONFIG_DIR", "value": "/tmp/mc"},
        *model_sources.secret_env(secret_names.s3_credentials(stack, source, writes=False), model_sources.S3_KEYS),
    ]
    container["resources"] = {"requests": {"cpu": "10m", "memory": "32Mi"}, "limits": {"memory": "128Mi"}}
    return container


def vllm_service(spec: Vllm) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": spec.name,
            "namespace": spec.namespace,
            "labels": pods.labels(app=VLLM_APP, instance=spec.name, component="inference"),
        },
        "spec": {
            "selector": _selector(spec),
            "ports": [{"name": "http", "port": VLLM_PORT, "targetPort": "http"}],
        },
    }


def vllm_disruption_budget(spec: Vllm) -> dict[str, Any]:
    """At most one server of several down at a time in a drain (each reloads its model for minutes)."""
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": spec.name, "namespace": spec.namespace, "labels": dict(pods.MANAGED_BY)},
        "spec": {"maxUnavailable": 1, "selector": {"matchLabels": _selector(spec)}},
    }


def vllm_args(stack: GpuStack, spec: Vllm) -> list[str]:
    args = [
        *model_sources.model_args(spec),
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

    The ratio applies to the share, not the card (0.28 × 8000 MiB = 2240 MiB
    failed a 2.98 GiB model, 0.80 passed): modelMemoryMiB / visible memory, rounded up to two
    decimals and capped at 0.95; vLLM's default 0.9 without modelMemoryMiB.
    """
    if spec.modelMemoryMiB is None:
        return DEFAULT_GPU_MEMORY_UTILIZATION
    visible = spec.share.memoryMiB if spec.share else gpu_model(_pool(stack, spec)).memoryMiB
    return min(math.ceil(spec.modelMemoryMiB * 100 / visible) / 100, MAX_GPU_MEMORY_UTILIZATION)


def needs_recreate(stack: GpuStack, spec: Vllm) -> bool:
    """Whether a rolling update could deadlock: a HAMi share, or no whole GPU left for a surge pod.

    The linter's GS005 makes the same judgement with the spec as context.
    """
    pool = _pool(stack, spec)
    if spec.share is not None or pool in hami_pools(stack):
        return True
    gpus = pool.count * pool.gpu.count
    used = sum(w.replicas * w.gpus for w in stack.spec.workloads if isinstance(w, Vllm) and _pool(stack, w) == pool)
    return gpus - used < spec.gpus


def _pool(stack: GpuStack, spec: Vllm) -> NodePool:
    pool = workload_pool(stack, spec)
    assert pool is not None, "the spec's checks refuse a pool name no pool has"
    return pool


def _selector(spec: Vllm) -> dict[str, str]:
    return pods.selector(VLLM_APP, spec.name)


def _secret_note(namespace: str, secret: str, keys: tuple[str, ...], users: list[str]) -> str:
    literals = " ".join(f"--from-literal={key}=…" for key in keys)
    return (
        f"{', '.join(users)} read{'s' if len(users) == 1 else ''} Secret `{namespace}/{secret}`: create it first, "
        f"`kubectl -n {namespace} create secret generic {secret} {literals}`."
    )


def minio_image_note(spec: Minio) -> str:
    """Why the default MinIO image predates a security fix, and what the user can choose instead.

    MinIO's community edition became source-only in October 2025: the release that fixes
    CVE-2025-62506 (RELEASE.2025-10-15T17-29-55Z) was published as source, never as an image
    (https://github.com/minio/minio/issues/21647, https://github.com/minio/minio/issues/21661), and
    the repository was archived in 2026 (https://github.com/cncf/landscape/pull/5047). The flaw lets
    a restricted service account or STS credential take its parent user's rights
    (https://nvd.nist.gov/vuln/detail/CVE-2025-62506); the stack creates neither.
    """
    return (
        f"MinIO `{spec.namespace}/{spec.name}` runs `{MINIO_IMAGE}`, the last image MinIO published: its community "
        "edition became source-only in October 2025 (https://github.com/minio/minio/issues/21647) and its repository "
        "is archived, so RELEASE.2025-10-15T17-29-55Z, which fixes CVE-2025-62506 (a restricted service account or "
        "STS credential taking its parent user's rights), has no official image. The stack creates no such accounts "
        "(its workloads sign in as MinIO users: the root user, or those of `security.minioWorkloadUsers`), so as "
        "rendered the flaw gives no one more than they have. Before anyone adds some, or for a store that keeps "
        "receiving fixes, build that release (or a later one) into your own registry and set the workload's `image`, "
        "or point the models' `endpoint` at a maintained S3 service and drop the `minio` workload."
    )


def minio_objects(spec: Minio) -> list[dict[str, Any]]:
    """MinIO on one PersistentVolumeClaim: PVC, Deployment (Recreate: the volume is ReadWriteOnce), Service."""
    labels = pods.labels(app=MINIO_APP, instance=spec.name, component="object-store")
    minio_pods = pods.selector(MINIO_APP, spec.name)
    metadata = {"name": spec.name, "namespace": spec.namespace, "labels": labels}
    claim: dict[str, Any] = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": spec.storage}}}
    if spec.storageClassName:
        claim["storageClassName"] = spec.storageClassName
    container = pods.hardened_container("minio", spec.image, limits={})
    container["args"] = ["server", "/data", f"--console-address=:{MINIO_CONSOLE_PORT}"]
    container["env"] = model_sources.secret_env(
        spec.credentialsSecret, model_sources.S3_KEYS, ("MINIO_ROOT_USER", "MINIO_ROOT_PASSWORD")
    )
    container["ports"] = [
        {"name": "api", "containerPort": MINIO_API_PORT},
        {"name": "console", "containerPort": MINIO_CONSOLE_PORT},
    ]
    container["resources"] = {"requests": {"cpu": "250m", "memory": "512Mi"}, "limits": {"memory": "2Gi"}}
    container["readinessProbe"] = {"httpGet": {"path": "/minio/health/ready", "port": "api"}, "periodSeconds": 10}
    container["livenessProbe"] = {"httpGet": {"path": "/minio/health/live", "port": "api"}, "periodSeconds": 10}
    container["volumeMounts"] = [{"name": "data", "mountPath": "/data"}]
    pod_spec = {
        "securityContext": pods.unprivileged_pod(),
        "containers": [container],
        "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": spec.name}}],
    }
    return [
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": metadata, "spec": claim},
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": metadata,
            "spec": {
                "replicas": 1,
                "strategy": {"type": "Recreate"},
                "selector": {"matchLabels": minio_pods},
                "template": {"metadata": {"labels": labels}, "spec": pod_spec},
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": metadata,
            "spec": {
                "selector": minio_pods,
                "ports": [
                    {"name": "api", "port": MINIO_API_PORT, "targetPort": "api"},
                    {"name": "console", "port": MINIO_CONSOLE_PORT, "targetPort": "console"},
                ],
            },
        },
    ]


def model_loader(spec: ModelLoader, upload_secret: str) -> dict[str, Any]:
    """A Job that downloads a Hugging Face model and mirrors it into the S3 store.

    The download runs in an init container (huggingface_hub from the vLLM image), the upload
    in MinIO's client with the credentials of ``upload_secret``; both share an emptyDir of
    ``scratch`` size.
    """
    bucket, _, prefix = spec.destination.uri.removeprefix("s3://").partition("/")
    revision = f", revision={spec.revision!r}" if spec.revision else ""
    download = pods.hardened_container("download", spec.image, limits={})
    download["command"] = [
        "python3",
        "-c",
        "from huggingface_hub import snapshot_download; "
        f"snapshot_download(repo_id={spec.huggingFaceModel!r}, local_dir='/model'{revision})",
    ]
    download["env"] = [{"name": "HF_HOME", "value": "/model/.cache"}]
    if spec.huggingFaceTokenSecret:
        download["env"] += model_sources.secret_env(spec.huggingFaceTokenSecret, (model_sources.HF_TOKEN_KEY,))
    upload = pods.hardened_container("upload", spec.mcImage, limits={})
    target = shlex.quote(f"store/{bucket}/{prefix}")
    upload["command"] = [
        "sh",
        "-c",
        # --api S3v4: no probing request, which a user without ListAllMyBuckets could not make.
        'mc alias set store "$AWS_ENDPOINT_URL" "$AWS_ACCESS_KEY_ID" "$AWS_SECRET_ACCESS_KEY" --api S3v4 '
        f"&& mc mb --ignore-existing {shlex.quote(f'store/{bucket}')} "
        f"&& mc mirror --overwrite --exclude '.cache/*' --exclude {MODEL_MARKER} /model {target} "
        # Last: vLLM's init gate (model_gate) waits for it.
        f"&& mc cp /model/{MODEL_MARKER} {target}/{MODEL_MARKER}",
    ]
    upload["env"] = [
        {"name": "AWS_ENDPOINT_URL", "value": spec.destination.endpoint},
        {"name": "MC_CONFIG_DIR", "value": "/tmp/mc"},
        *model_sources.secret_env(upload_secret, model_sources.S3_KEYS),
    ]
    for container in (download, upload):
        container["resources"] = {
            "requests": {"cpu": "500m", "memory": "1Gi", "ephemeral-storage": spec.scratch},
            "limits": {"memory": "4Gi"},
        }
        container["volumeMounts"] = [{"name": "model", "mountPath": "/model"}]
    labels = pods.labels(app=LOADER_APP, instance=spec.name, component="model-upload")
    pod_spec = {
        "restartPolicy": "Never",
        "securityContext": pods.unprivileged_pod(),
        "initContainers": [download],
        "containers": [upload],
        "volumes": [{"name": "model", "emptyDir": {"sizeLimit": spec.scratch}}],
    }
    return pods.job(spec.name, spec.namespace, labels, pod_spec, backoff_limit=2)
