"""What ``gpustack lint`` reads of a live cluster: one table, which the client lists and
``--print-rbac`` turns into a ClusterRole, so the role grants exactly what is read.

Every read is ``list`` (plus ``get`` of ``/version``): never watch, never write.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Purpose = Literal["context", "workloads"]


@dataclass(frozen=True)
class Read:
    """One collection the linter lists: its API group (``""``: core), version and resource."""

    group: str
    version: str
    resource: str  # the plural, as RBAC names it
    kind: str
    purpose: Purpose
    namespaced: bool = True
    # Optional: a cluster without the API (no DRA) or a role without the grant (Helm's release
    # Secrets) gives a note, not an error.
    optional: bool = False
    labels: str | None = None  # a label selector the list is limited to
    crd: bool = False  # a custom resource: listed only where its CRD is installed, at its stored version

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def __str__(self) -> str:
        """``plural.group``, as RBAC and a CRD's name spell it (``nodes`` for the core group)."""
        return f"{self.resource}.{self.group}" if self.group else self.resource


VERSION_PATH = "/version"  # the server's version: a non-resource URL, read with get
# Helm 3 keeps each release revision in a Secret labelled owner=helm, name=<release>,
# status, version=<revision> (https://helm.sh/docs/topics/advanced/#storage-backends): the
# deployed revision of each release is the release as it runs.
HELM_RELEASES = "owner=helm,status=deployed"

CONTEXT = (
    Read("", "v1", "nodes", "Node", "context", namespaced=False),
    Read("node.k8s.io", "v1", "runtimeclasses", "RuntimeClass", "context", namespaced=False),
    Read("resource.k8s.io", "v1", "deviceclasses", "DeviceClass", "context", namespaced=False, optional=True),
    Read("resource.k8s.io", "v1", "resourceslices", "ResourceSlice", "context", namespaced=False, optional=True),
    Read("apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", "context",
         namespaced=False),
    Read("", "v1", "secrets", "Secret", "context", optional=True, labels=HELM_RELEASES),
)

# The running workloads (``--cluster``): the built-in controllers, bare Pods, and the custom
# resources with pod templates that the loader finds pod specs in (gpustack/lint/facts/podspec.py);
# a custom resource's version here is a default: the client lists the version its CRD stores.
WORKLOADS = (
    Read("apps", "v1", "deployments", "Deployment", "workloads"),
    Read("apps", "v1", "statefulsets", "StatefulSet", "workloads"),
    Read("apps", "v1", "daemonsets", "DaemonSet", "workloads"),
    Read("batch", "v1", "jobs", "Job", "workloads"),
    Read("batch", "v1", "cronjobs", "CronJob", "workloads"),
    Read("", "v1", "pods", "Pod", "workloads"),
    Read("leaderworkerset.x-k8s.io", "v1", "leaderworkersets", "LeaderWorkerSet", "workloads", crd=True),
    Read("jobset.x-k8s.io", "v1alpha2", "jobsets", "JobSet", "workloads", crd=True),
    Read("ray.io", "v1", "rayclusters", "RayCluster", "workloads", crd=True),
    Read("ray.io", "v1", "rayjobs", "RayJob", "workloads", crd=True),
    Read("ray.io", "v1", "rayservices", "RayService", "workloads", crd=True),
    Read("kubeflow.org", "v1", "pytorchjobs", "PyTorchJob", "workloads", crd=True),
    Read("kubeflow.org", "v1", "mpijobs", "MPIJob", "workloads", crd=True),
    Read("batch.volcano.sh", "v1alpha1", "jobs", "Job", "workloads", crd=True),
    Read("serving.knative.dev", "v1", "services", "Service", "workloads", crd=True),
)

READS = CONTEXT + WORKLOADS
