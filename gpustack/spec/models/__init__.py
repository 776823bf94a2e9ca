"""Pydantic models of the spec file (``apiVersion: gpustack.io/v1alpha1, kind: GpuStack``).

Every default is explicit here and appears in the generated JSON Schema
(``specs/gpustack.schema.json``). Unknown keys are errors. Version fields are strings: an
unquoted ``1.30`` is the number 1.3 in YAML, so numbers are refused with "quote it". The
document is assembled here from its sections: ``base`` (strictness, versions, patterns),
``cluster`` (cluster and node pools), ``components`` (what is deployed and how it is
delivered), ``monitoring`` (metrics, alerts and where they go) and ``workloads``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field

from gpustack.spec.models.base import Strict
from gpustack.spec.models.cluster import Cluster, Metadata, NodePool, SystemPool
from gpustack.spec.models.components import DevicePlugin, Dra, Gitops, GpuOperator, Nfd, SharingSection
from gpustack.spec.models.monitoring import Monitoring
from gpustack.spec.models.security import Security
from gpustack.spec.models.workloads import Workload


class StackSpec(Strict):
    cluster: Cluster
    nodePools: list[NodePool] = Field(min_length=1)
    systemPools: list[SystemPool] = Field(
        default_factory=list,
        description="Node pools without GPUs (kubeadm: one JoinConfiguration each, like the GPU pools).",
    )
    devicePlugin: DevicePlugin = Field(default_factory=DevicePlugin)
    gpuOperator: GpuOperator = Field(default_factory=GpuOperator)
    nfd: Nfd = Field(default_factory=Nfd)
    monitoring: Monitoring = Field(default_factory=Monitoring)
    sharing: SharingSection = Field(default_factory=SharingSection)
    dra: Dra = Field(default_factory=Dra)
    gitops: Gitops = Field(default_factory=Gitops)
    workloads: list[Workload] = Field(default_factory=list)
    security: Security = Field(default_factory=Security)
    smokeJobs: bool = Field(
        True,
        description="One Job per GPU pool that runs nvidia-smi on a GPU of the pool and fails when it cannot "
        "(an Argo CD PostSync hook with Argo CD).",
    )


class GpuStack(Strict):
    """A GPU stack: the cluster, its GPU node pools and the layers to deploy on them."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"$id": "urn:gpustack:schema:spec"},
    )

    apiVersion: Literal["gpustack.io/v1alpha1"]
    kind: Literal["GpuStack"]
    metadata: Metadata
    spec: StackSpec
