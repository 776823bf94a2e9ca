"""The spec's workloads: the GPU smoke test, the nbody benchmark, vLLM serving, MinIO, the model loader.

Optional objects render adds after the GPU stack, told apart by their ``type``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import Discriminator, Field, Tag

from gpustack.spec.models.base import DNS_LABEL, S3_URI, DnsSubdomain, Strict


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
    uri: str = Field(
        pattern=S3_URI,
        description="s3://bucket/path of the model: an S3 bucket name, then letters, digits, '.', '_', '-' and '/'.",
    )
    endpoint: str = Field(description="S3 endpoint, e.g. http://minio.vllm.svc.cluster.local:9000.")
    credentialsSecret: str = Field(
        pattern=DNS_LABEL, description="Secret with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY."
    )


HF_REPO = r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$"
# A branch, tag or commit of a Hugging Face repository (Git ref characters, no shell ones).
GIT_REVISION = r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,254}$"


TOKEN_SECRET = (
    "Secret with the Hugging Face token under key HF_TOKEN (gated models): the container's HF_TOKEN "
    "reads it from the Secret."
)


class HuggingFaceSource(Strict):
    huggingFace: str = Field(
        pattern=HF_REPO,
        description="Hugging Face model id, e.g. Qwen/Qwen2.5-1.5B-Instruct: vLLM downloads it when it starts.",
    )
    revision: str | None = Field(None, pattern=GIT_REVISION, description="Branch, tag or commit; default main.")
    # The token is a Secret's name only: a token written into the spec would end up in Git.
    tokenSecret: str | None = Field(None, pattern=DNS_LABEL, description=TOKEN_SECRET)


class PvcSource(Strict):
    pvc: DnsSubdomain = Field(
        description="PersistentVolumeClaim in the workload's namespace holding the model's files (safetensors, "
        "config, tokenizer), mounted read-only."
    )
    path: str = Field(
        "",
        pattern=r"^([A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*)?$",
        description="Folder of the model inside the volume; default its root.",
    )


def _model_source(value: Any) -> str | None:
    """Which source a ``model`` mapping is: the one of uri, huggingFace and pvc it holds."""
    keys = {"uri": "s3", "huggingFace": "huggingFace", "pvc": "pvc"}
    if isinstance(value, (S3Source, HuggingFaceSource, PvcSource)):
        return {S3Source: "s3", HuggingFaceSource: "huggingFace", PvcSource: "pvc"}[type(value)]
    found = [tag for key, tag in keys.items() if isinstance(value, dict) and key in value]
    return found[0] if len(found) == 1 else None


ModelSource = Annotated[
    Annotated[S3Source, Tag("s3")] | Annotated[HuggingFaceSource, Tag("huggingFace")] | Annotated[PvcSource, Tag("pvc")],
    Discriminator(
        _model_source,
        custom_error_type="model_source",
        custom_error_message="the model needs exactly one source: uri (S3, with endpoint and credentialsSecret), "
        "huggingFace (a model id) or pvc (a PersistentVolumeClaim)",
    ),
]


QUANTITY = r"^[0-9]+(\.[0-9]+)?(m|Ki|Mi|Gi|Ti)?$"
# Images pinned for the workloads: vLLM 0.28.0, MinIO server and
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

    def serves(self, endpoint: str) -> bool:
        """Whether an S3 endpoint names this MinIO's Service (short or fully qualified host name)."""
        base = f"{self.name}.{self.namespace}"
        return urlsplit(endpoint).hostname in {base, f"{base}.svc", f"{base}.svc.cluster.local"}


class ModelLoader(Strict):
    type: Literal["modelLoader"]
    name: str = Field("model-loader", pattern=DNS_LABEL)
    namespace: str = Field("default", pattern=DNS_LABEL)
    huggingFaceModel: str = Field(
        pattern=HF_REPO,
        description="Hugging Face repository to download, e.g. Qwen/Qwen2.5-1.5B-Instruct.",
    )
    revision: str | None = Field(
        None, pattern=GIT_REVISION, description="Branch, tag or commit of the repository; default main."
    )
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
    model: ModelSource = Field(
        description="Where vLLM reads the model: S3 (uri, endpoint, credentialsSecret; streamed with Run:ai's "
        "streamer), huggingFace (downloaded at start), or pvc (a volume holding its files). Exactly one."
    )
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
    apiKeySecret: str | None = Field(
        "vllm-api-key",
        pattern=DNS_LABEL,
        description="Secret whose key VLLM_API_KEY clients must send as a bearer token (vLLM reads the "
        "environment variable like --api-key); generated in the cluster when missing; null: no key.",
    )
    shmSize: str = Field(
        "2Gi",
        pattern=QUANTITY,
        description="/dev/shm (a memory emptyDir; the container runtime's default is 64 MiB, too small "
        "for PyTorch's worker processes and tensor parallelism).",
    )


Workload = Annotated[SmokeTest | Nbody | Vllm | Minio | ModelLoader, Field(discriminator="type")]
