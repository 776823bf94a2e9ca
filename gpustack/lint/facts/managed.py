"""Which managed cloud a set runs on (EKS, GKE, AKS), and what that changes for a pod's tolerations.

Their API servers run the ExtendedResourceToleration admission plugin, which upstream leaves
off (https://kubernetes.io/docs/reference/access-authn-authz/admission-controllers/#extendedresourcetoleration):
to every pod that requests an extended resource (``nvidia.com/gpu``) in a container or init
container it adds ``{key: <resource>, operator: Exists, effect: NoSchedule}``, so a taint named
after the resource keeps only the pods that do not ask for it off the node. EKS enables it on
every platform version (https://docs.aws.amazon.com/eks/latest/userguide/platform-versions.html,
https://github.com/aws/containers-roadmap/issues/739); GKE taints its GPU nodes
``nvidia.com/gpu=present:NoSchedule`` and relies on it
(https://cloud.google.com/kubernetes-engine/docs/how-to/gpus); AKS lists it among the admission
controllers it runs, a list users cannot change (https://learn.microsoft.com/azure/aks/faq, since
Kubernetes 1.19: https://github.com/Azure/AKS/issues/1449). kubeadm, K3s and Talos keep
upstream's default list unless the API server's flags add it.

The cloud comes from ``--distribution`` (or the config's, or the spec's), else, without a spec,
from what only that cloud has:

- node labels a pod requires (``eks.amazonaws.com/…``, ``karpenter.k8s.aws/…``,
  ``cloud.google.com/gke-…``, ``kubernetes.azure.com/…``): the pod runs there (GS004 reads the
  same table for containerd's default runtime);
- objects of the set: Karpenter's AWS node classes (``EC2NodeClass``, ``AWSNodeTemplate``) and
  NodePools or Provisioners that use them or require ``karpenter.k8s.aws/…`` labels, an eksctl
  ``ClusterConfig``; GKE's ``ComputeClass`` and other objects of its own API groups; Karpenter's
  Azure node class (``AKSNodeClass``, AKS's node auto-provisioning) and NodePools that use it;
  scripts, setup notes and Terraform that create the cloud's cluster or node pools
  (``input/hostscripts``: ``eksctl create cluster``, ``az aks nodepool add``, ``google_container_node_pool``).
  The set's evidence counts when it names one cloud and the set holds no control-plane config of
  its own (a kubeadm, K3s or Talos config): a set that names several says nothing.

``set_cloud`` is plain data (part of a rule's ``set_fact``), computed once per set.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from gpustack.lint.facts import hostscripts, talos
from gpustack.lint.facts.clusterconfig import is_k3s_config
from gpustack.lint.facts.podspec import node_label_tests
from gpustack.lint.model import PodSpec, Resource, get_value
from gpustack.lint.releases.helmvalues import mapping

if TYPE_CHECKING:
    from gpustack.lint.context import LintContext

MANAGED = frozenset({"gke", "eks", "aks"})
# Distributions whose API server keeps upstream's default admission plugins (no ExtendedResourceToleration)
# unless its flags add it: those gpustack's specs describe. Elsewhere (RKE2, k0s, OpenShift…) nothing
# here says, and upstream's default is an assumption.
UPSTREAM_ADMISSION = frozenset({"k3s", "kubeadm", "talos"})
# Node labels only a managed cloud sets: a pod that requires one runs there (GKE's
# cloud.google.com/gke-accelerator; the others follow the same reasoning).
MANAGED_LABEL_PREFIXES = (
    ("cloud.google.com/gke-", "gke"),
    ("cloud.google.com/compute-class", "gke"),
    ("eks.amazonaws.com/", "eks"),
    ("karpenter.k8s.aws/", "eks"),
    ("sagemaker.amazonaws.com/", "eks"),
    ("kubernetes.azure.com/", "aks"),
)
# API groups of objects that only one cloud serves, and Karpenter's node-class groups per cloud.
_GROUPS = {"cloud.google.com": "gke", "networking.gke.io": "gke", "eksctl.io": "eks"}
_NODE_CLASS_GROUPS = {"karpenter.k8s.aws": "eks", "karpenter.azure.com": "aks"}
_NODE_CLASS_KINDS = {"EC2NodeClass": "eks", "AWSNodeTemplate": "eks", "AKSNodeClass": "aks"}
_KARPENTER_LABELS = (("karpenter.k8s.aws/", "eks"), ("karpenter.azure.com/", "aks"))


def pod_cloud(pod: PodSpec) -> str | None:
    """The managed cloud whose node labels the pod requires, if any."""
    for test in node_label_tests(pod):
        if test.required and test.selects:
            for prefix, cloud in MANAGED_LABEL_PREFIXES:
                if test.key.startswith(prefix):
                    return cloud
    return None


def set_cloud(ctx: LintContext) -> str | None:
    """The one managed cloud the set's objects name, or None (none, several, or a control plane
    the set configures itself); computed once per context (GS004, GS006 and GS028 ask)."""
    return ctx.memo(("managed", "set cloud"), lambda: _set_cloud(ctx))


def _set_cloud(ctx: LintContext) -> str | None:
    clouds: set[str] = set()
    for resource in ctx.resources:
        if _self_run_cluster(resource):
            return None
        clouds.update(_clouds(resource))
    return clouds.pop() if len(clouds) == 1 else None


def extended_resource_toleration(pod: PodSpec, ctx: LintContext, cloud: str | None) -> bool | None:
    """Whether the API server runs ExtendedResourceToleration for ``pod``: True on a managed
    cloud, False where the distribution keeps upstream's defaults or a spec describes the
    cluster, None where nothing says which (upstream's default, off, is then an assumption).
    ``cloud`` is the set's (``set_cloud``)."""
    if ctx.cluster is not None:
        return ctx.distribution in MANAGED
    distribution = pod_cloud(pod) or ctx.distribution or cloud
    if distribution in MANAGED:
        return True
    return False if distribution in UPSTREAM_ADMISSION else None


def requested_extended_resources(pod: PodSpec) -> tuple[str, ...]:
    """The extended resources the pod's containers and init containers request (a limit alone
    defaults the request), sorted: what the admission plugin adds tolerations for."""
    names = {
        str(name)
        for container in pod.containers()
        if container.group in ("containers", "initContainers")
        for section in ("requests", "limits")
        for name in mapping(get_value(container.data, "resources", section))
        if _extended(str(name))
    }
    return tuple(sorted(names))


def admitted_tolerations(pod: PodSpec) -> list[Mapping[str, Any]]:
    """The tolerations the admission plugin adds to ``pod``."""
    return [{"key": name, "operator": "Exists", "effect": "NoSchedule"} for name in requested_extended_resources(pod)]


def _extended(name: str) -> bool:
    """Kubernetes' ``IsExtendedResourceName``: a domain-prefixed name outside ``kubernetes.io``,
    not a quota's ``requests.`` name."""
    domain, slash, rest = name.partition("/")
    native = domain == "kubernetes.io" or domain.endswith(".kubernetes.io")
    return bool(slash and rest) and not native and not name.startswith("requests.")


def _clouds(resource: Resource) -> Iterator[str]:
    if (scripted := hostscripts.managed_cloud(resource)) is not None:
        yield scripted
        return
    group = resource.api_group if resource.kind else ""
    if group in _GROUPS:
        yield _GROUPS[group]
    if group in _NODE_CLASS_GROUPS:
        yield _NODE_CLASS_GROUPS[group]
    if resource.kind in ("NodePool", "Provisioner") and group == "karpenter.sh":
        yield from _karpenter_clouds(resource.data)


def _karpenter_clouds(data: Mapping[str, Any]) -> Iterator[str]:
    """The cloud of a Karpenter NodePool (v1alpha5 Provisioner): its node class reference's group,
    or the cloud provider's own labels among its requirements."""
    for found in (get_value(data, "spec", "template", "spec", "nodeClassRef"), get_value(data, "spec", "providerRef")):
        ref = mapping(found)
        group = str(ref.get("group") or str(ref.get("apiVersion", "")).partition("/")[0])
        if group in _NODE_CLASS_GROUPS:
            yield _NODE_CLASS_GROUPS[group]
        elif ref.get("kind") in _NODE_CLASS_KINDS:
            yield _NODE_CLASS_KINDS[ref["kind"]]
    for listed in (get_value(data, "spec", "template", "spec", "requirements"), get_value(data, "spec", "requirements")):
        for item in listed if isinstance(listed, list) else ():
            key = str(mapping(item).get("key", ""))
            yield from (cloud for prefix, cloud in _KARPENTER_LABELS if key.startswith(prefix))


def _self_run_cluster(resource: Resource) -> bool:
    """A config of a cluster the set runs itself (Talos, K3s, kubeadm): not a managed cloud's."""
    if resource.kind is None:
        return talos.is_machine_config(resource) or talos.is_talconfig(resource) or is_k3s_config(resource)
    return resource.api_group == "kubeadm.k8s.io"
