"""The names of the Secrets the rendered stack reads that the spec does not name itself.

One place for them: the workloads read them, the MinIO users Job creates users from them, and
whatever creates the Secrets (the README's commands, or a generator) takes their names from here.
"""

from __future__ import annotations

from gpustack.spec.models import GpuStack
from gpustack.spec.models.workloads import Minio, S3Source

# The two least-privileged MinIO users of a MinIO workload (``minio_users``), keys
# AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY like the root user's Secret.
MINIO_READER = "{store}-reader-s3"  # read-only on the models' buckets: vLLM
MINIO_WRITER = "{store}-writer-s3"  # read-write on the buckets it uploads to: the model loader


def minio_reader(store: str) -> str:
    return MINIO_READER.format(store=store)


def minio_writer(store: str) -> str:
    return MINIO_WRITER.format(store=store)


def s3_credentials(stack: GpuStack, source: S3Source, *, writes: bool) -> str:
    """The Secret a workload reads for an S3 source: its MinIO user's where the stack creates one
    (``security.minioWorkloadUsers`` and the endpoint is a MinIO of the spec), else the Secret the
    spec names."""
    if stack.spec.security.minioWorkloadUsers:
        for store in stack.spec.workloads:
            if isinstance(store, Minio) and store.serves(source.endpoint):
                return minio_writer(store.name) if writes else minio_reader(store.name)
    return source.credentialsSecret
