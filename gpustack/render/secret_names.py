"""The names of the Secrets the rendered stack reads that the spec does not name itself.

One place for them: the workloads read them, the MinIO users Job creates users from them, and
the Secrets Job (``components/secrets``) generates them under these names.
"""

from __future__ import annotations

from gpustack.spec.models import GpuStack
from gpustack.spec.models.workloads import Minio, ModelLoader, S3Source, Vllm

# The two least-privileged MinIO users of a MinIO workload (``minio_users``), keys
# AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY like the root user's Secret.
MINIO_READER = "{store}-reader-s3"  # read-only on the models' buckets: vLLM
MINIO_WRITER = "{store}-writer-s3"  # read-write on the buckets it uploads to: the model loader


def minio_reader(store: str) -> str:
    return MINIO_READER.format(store=store)


def minio_writer(store: str) -> str:
    return MINIO_WRITER.format(store=store)


def minio_role_secret(store: str, role: str) -> str:
    """The Secret of a MinIO workload user's role (``reader``, ``writer``)."""
    return minio_writer(store) if role == "writer" else minio_reader(store)


def minio_user(store: str, role: str) -> str:
    """A role's MinIO user name: the users Job creates it, the Secrets Job writes it into the role's Secret."""
    return f"gpustack-{store}-{role}"


def minio_roles(stack: GpuStack, store: Minio) -> dict[str, list[str]]:
    """Role (``reader``, ``writer``) → the buckets its workloads use on ``store``; empty when
    ``security.minioWorkloadUsers`` is off."""
    if not stack.spec.security.minioWorkloadUsers:
        return {}
    found: dict[str, set[str]] = {"reader": set(), "writer": set()}
    for workload in stack.spec.workloads:
        if isinstance(workload, Vllm) and isinstance(workload.model, S3Source) and store.serves(workload.model.endpoint):
            found["reader"].add(_bucket(workload.model))
        elif isinstance(workload, ModelLoader) and store.serves(workload.destination.endpoint):
            found["writer"].add(_bucket(workload.destination))
    return {role: sorted(buckets) for role, buckets in found.items() if buckets}


def _bucket(source: S3Source) -> str:
    return source.uri.removeprefix("s3://").split("/", 1)[0]


def s3_credentials(stack: GpuStack, source: S3Source, *, writes: bool) -> str:
    """The Secret a workload reads for an S3 source: its MinIO user's where the stack creates one
    (``security.minioWorkloadUsers`` and the endpoint is a MinIO of the spec), else the Secret the
    spec names."""
    if stack.spec.security.minioWorkloadUsers:
        for store in stack.spec.workloads:
            if isinstance(store, Minio) and store.serves(source.endpoint):
                return minio_writer(store.name) if writes else minio_reader(store.name)
    return source.credentialsSecret
