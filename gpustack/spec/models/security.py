"""The spec's security baseline: on by default, each item with its own opt-out."""

from __future__ import annotations

from pydantic import Field

from gpustack.spec.models.base import Strict


class Security(Strict):
    networkPolicies: bool = Field(
        True,
        description="NetworkPolicies for the workloads' pods: deny all traffic, then allow what the stack needs "
        "(DNS, clients to vLLM's port, vLLM and the model loader to their S3 store, the loader to Hugging Face); "
        "and for the charts' pods: deny ingress, then allow Prometheus, the monitoring stack's pods among "
        "themselves and the API server's calls to the admission webhooks.",
    )
    podSecurityLabels: bool = Field(
        True,
        description="Pod Security admission labels (enforce, warn, audit) on every namespace the stack creates: "
        "privileged only for the charts' GPU node agents, restricted where every pod meets it, baseline elsewhere.",
    )
    minioWorkloadUsers: bool = Field(
        True,
        description="A MinIO of the spec gets one user per role instead of its root credentials in the "
        "workloads: vLLM reads with a read-only user, the model loader writes with a user limited to its "
        "buckets (a Job creates them from Secrets <minio>-reader-s3 and <minio>-writer-s3).",
    )
    vllmIngressFrom: list[str] = Field(
        default_factory=list,
        description="CIDRs allowed to reach vLLM's port (e.g. your load balancer's or ingress controller's "
        "range). Empty: any source, in or out of the cluster.",
    )
