"""Where a vLLM server reads its model, per source of the spec's ``model``: its first argument,
the flags, environment, volumes and Secrets that source needs, and what the stack leaves to the
reader. The workloads component builds the Deployment around these.

- S3 (``uri``): streamed with Run:ai's model streamer (``--load-format=runai_streamer``),
  credentials from the Secret the spec names;
- Hugging Face (``huggingFace``): vLLM downloads the model id when it starts, into an emptyDir
  cache; the token of a gated model comes from the Secret the spec names (env ``HF_TOKEN``),
  never inline;
- a PVC (``pvc``): mounted read-only, vLLM loads the folder.
"""

from __future__ import annotations

from typing import Any

from gpustack.render import secret_names
from gpustack.spec.models import GpuStack
from gpustack.spec.models.workloads import HuggingFaceSource, Minio, ModelLoader, PvcSource, S3Source, Vllm

HF_CACHE = "/cache/huggingface"
PVC_MOUNT = "/models"
HF_TOKEN_KEY = "HF_TOKEN"
S3_KEYS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")


def model_args(spec: Vllm) -> list[str]:
    """The model argument of ``vllm serve`` and the flags of its source."""
    source = spec.model
    if isinstance(source, S3Source):
        return [source.uri, "--load-format=runai_streamer"]
    if isinstance(source, HuggingFaceSource):
        return [source.huggingFace, *([f"--revision={source.revision}"] if source.revision else [])]
    return [f"{PVC_MOUNT}/{source.path}".rstrip("/")]


def env(stack: GpuStack, spec: Vllm) -> list[dict[str, Any]]:
    source = spec.model
    if isinstance(source, S3Source):
        return s3_env(source.endpoint, secret_names.s3_credentials(stack, source, writes=False))
    if isinstance(source, HuggingFaceSource):
        token = secret_env(source.tokenSecret, (HF_TOKEN_KEY,)) if source.tokenSecret else []
        return [{"name": "HF_HOME", "value": HF_CACHE}, *token]
    return []


def volumes(spec: Vllm) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The pod's volumes for the model and the container's mounts of them."""
    source = spec.model
    if isinstance(source, HuggingFaceSource):
        return [{"name": "model-cache", "emptyDir": {}}], [{"name": "model-cache", "mountPath": HF_CACHE}]
    if isinstance(source, PvcSource):
        claim = {"claimName": source.pvc, "readOnly": True}
        return [{"name": "model", "persistentVolumeClaim": claim}], [
            {"name": "model", "mountPath": PVC_MOUNT, "readOnly": True}
        ]
    return [], []


def secrets(stack: GpuStack, spec: Vllm) -> list[tuple[str, tuple[str, ...]]]:
    """The Secrets the model's source reads: (name, keys)."""
    source = spec.model
    if isinstance(source, S3Source):
        return [(secret_names.s3_credentials(stack, source, writes=False), S3_KEYS)]
    if isinstance(source, HuggingFaceSource) and source.tokenSecret:
        return [(source.tokenSecret, (HF_TOKEN_KEY,))]
    return []


def s3_env(endpoint: str, secret: str) -> list[dict[str, Any]]:
    """What Run:ai's streamer needs for an S3-compatible store (vLLM's Run:ai Model Streamer page)."""
    return [
        {"name": "AWS_ENDPOINT_URL", "value": endpoint},
        # vLLM copies AWS_ENDPOINT_URL into the streamer's own variable only when
        # --model-loader-extra-config is given: set it directly.
        {"name": "RUNAI_STREAMER_S3_ENDPOINT", "value": endpoint},
        # The streamer addresses buckets as <bucket>.<host> unless told otherwise; MinIO serves paths.
        {"name": "RUNAI_STREAMER_S3_USE_VIRTUAL_ADDRESSING", "value": "0"},
        # Without it boto3 asks the EC2 metadata service for credentials and ignores MinIO's
        # keys.
        {"name": "AWS_EC2_METADATA_DISABLED", "value": "true"},
        *secret_env(secret, S3_KEYS),
    ]


def secret_env(secret: str, keys: tuple[str, ...], names: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
    return [
        {"name": name, "valueFrom": {"secretKeyRef": {"name": secret, "key": key}}}
        for key, name in zip(keys, names or keys, strict=True)
    ]


def prerequisites(stack: GpuStack, spec: Vllm) -> list[str]:
    """What the model's source needs that this stack does not provide."""
    source = spec.model
    who = f"vLLM `{spec.namespace}/{spec.name}`"
    if isinstance(source, HuggingFaceSource):
        return [
            f"{who} downloads {source.huggingFace} from Hugging Face each time it starts (into an emptyDir): its "
            "nodes must reach huggingface.co."
        ]
    if isinstance(source, PvcSource):
        return [
            f"**Prerequisite** for {who}: PersistentVolumeClaim `{spec.namespace}/{source.pvc}` holding the model's "
            f"files{f' under {source.path}/' if source.path else ''} (safetensors, config and tokenizer), which this "
            "stack does not create; it is mounted read-only."
        ]
    workloads = stack.spec.workloads
    notes = []
    if not any(isinstance(w, Minio) and w.serves(source.endpoint) for w in workloads):
        notes.append(
            f"**Prerequisite** for {who}: an S3-compatible store at "
            f"{source.endpoint}, which this stack does not deploy (a `minio` workload in the spec would)."
        )
    if not any(isinstance(w, ModelLoader) and w.destination.uri == source.uri for w in workloads):
        notes.append(
            f"**Prerequisite** for {who}: the model's safetensors under "
            f"{source.uri}, which nothing in this stack uploads (a `modelLoader` workload would), e.g. "
            f"`mc mirror <model folder> <alias>/{source.uri.removeprefix('s3://')}`."
        )
    return notes
