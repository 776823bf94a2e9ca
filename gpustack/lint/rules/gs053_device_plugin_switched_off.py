"""GS053: the device plugin switched off while workloads request ``nvidia.com/gpu``.

The GPU Operator, the nvidia-device-plugin chart and HAMi each deploy their plugin while
``devicePlugin.enabled`` is not false (a ClusterPolicy's ``spec.devicePlugin.enabled`` too).
Switched off, and with no other device plugin in the set, no node advertises
``nvidia.com/gpu``: every pod that requests it stays Pending (``Insufficient nvidia.com/gpu``).
A DRA driver does not replace it for them: it hands out GPUs through resource claims, never the
extended resource. Quiet when any other plugin (NVIDIA's, the operator's, HAMi's) is deployed
in the set, and for files a Kustomization leaves out.

A set that deploys no device plugin at all gets the same finding as information, where it looks
like a whole cluster's repository (it configures nodes, creates the cluster, or releases several
charts) and names no platform that brings its own plugin (GKE, Bottlerocket's NVIDIA variants, the
GPU Operator from OpenShift's OperatorHub) or installs one by hand in a script or note (``helm
install`` of the operator, the device plugin or HAMi, ``kubectl apply`` of NVIDIA's static
manifest): the plugin may be installed outside the files linted.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.lint.context import LintContext
from gpustack.lint.facts import deviceplugins, hostdriver, hostscripts, talos
from gpustack.lint.facts.clusterconfig import is_k3s_config
from gpustack.lint.facts.managed import set_cloud
from gpustack.lint.facts.clusterpolicy import cluster_policies, operatorhub_operator
from gpustack.lint.facts.consumers import is_gpu_workload
from gpustack.lint.facts.quantities import gpu_requests
from gpustack.lint.facts.registered import plugin_vendors
from gpustack.lint.model import Hit, Path, PodSpec, Resource, Severity, get_value
from gpustack.lint.registry import Rule
from gpustack.lint.releases import deployed, dispatch

SWITCH = ("devicePlugin", "enabled")


def _switched_off(ctx: LintContext) -> Iterator[tuple[str, Resource, Path]]:
    """Deployments of a device plugin whose values or ClusterPolicy switch it off."""
    for release in dispatch.releases(ctx):
        if release.chart in plugin_vendors() and get_value(release.values, *SWITCH) is False:
            yield str(release), *release.where(*SWITCH)
    for policy in cluster_policies(ctx):
        if policy.get(("spec", *SWITCH)) is False:
            yield f"ClusterPolicy {policy.ref.name}", policy, ("spec", *SWITCH)


def _asks_plugin_resource(pod: PodSpec) -> bool:
    """Whether the pod asks for a resource only a device plugin advertises (``nvidia.com/gpu``,
    its time-sliced ``.shared`` and MIG resources)."""
    return is_gpu_workload(pod) and any(
        name == "nvidia.com/gpu" or name.startswith(("nvidia.com/gpu.", "nvidia.com/mig-"))
        for container in pod.containers() for name in gpu_requests(container)
    )


def check(ctx: LintContext) -> Iterator[Hit]:
    left_out = deployed.left_out(ctx)
    switched = [item for item in _switched_off(ctx) if item[1].file not in left_out]
    if not switched and (not _whole_cluster(ctx) or _brings_its_own(ctx)):
        return  # the cheap tests first: most sets are neither
    if any(plugin.resource.file not in left_out for plugin in deviceplugins.set_plugins(ctx)):
        return
    asking = [pod for pod in ctx.pod_specs if pod.resource.file not in left_out and _asks_plugin_resource(pod)]
    if not asking:
        return
    names = ", ".join(str(pod.resource.ref) for pod in asking[:3]) + (f" and {len(asking) - 3} more" if len(asking) > 3 else "")
    if not switched:
        yield from _no_plugin(ctx, asking, names)
        return
    for name, resource, path in switched:
        yield Hit(
            resource,
            path,
            f"{name} switches its device plugin off and the set deploys no other, while {names} "
            f"{'requests' if len(asking) == 1 else 'request'} nvidia.com/gpu: no node advertises the resource, so "
            f"{'it stays' if len(asking) == 1 else 'they stay'} Pending (Insufficient nvidia.com/gpu)",
            fix="Keep one device plugin (`devicePlugin.enabled: true`), or move the workloads to DRA resource claims.",
        )


def _no_plugin(ctx: LintContext, asking: list[PodSpec], names: str) -> Iterator[Hit]:
    """Information where a whole cluster's set deploys no device plugin (the module docstring)."""
    first = min(asking, key=lambda pod: (pod.resource.file, pod.resource.document))
    yield Hit(
        first.resource,
        first.path,
        f"{names} {'requests' if len(asking) == 1 else 'request'} nvidia.com/gpu, and the set deploys no device plugin "
        "(no NVIDIA device plugin, GPU Operator or HAMi) nor names a platform that brings one (GKE, Bottlerocket): "
        f"unless one is installed outside these files, no node advertises the resource and "
        f"{'it stays' if len(asking) == 1 else 'they stay'} Pending (Insufficient nvidia.com/gpu)",
        severity=Severity.INFO,
        fix="Deploy NVIDIA's device plugin (its chart or the GPU Operator) with the set, for the GPU nodes.",
    )


def _whole_cluster(ctx: LintContext) -> bool:
    """Whether the set looks like a cluster's own repository: it sets up nodes or the cluster, or
    releases several charts."""
    for resource in ctx.of_kind(None):
        if (hostscripts.is_host_script(resource) or talos.is_machine_config(resource)
                or talos.is_talconfig(resource) or is_k3s_config(resource)):
            return True
    return len(dispatch.releases(ctx)) >= WHOLE_CLUSTER_RELEASES


WHOLE_CLUSTER_RELEASES = 3  # a GitOps repository of a cluster releases its infrastructure, not one app


# KAITO's workspace chart deploys NVIDIA's device plugin with the controller that serves these
# kinds (https://github.com/kaito-project/kaito/blob/main/charts/kaito/workspace/templates/nvidia-device-plugin-ds.yaml).
KAITO_GROUP = "kaito.sh"


def _brings_its_own(ctx: LintContext) -> bool:
    """Whether the set names a platform or installer that brings NVIDIA's device plugin: GKE,
    Bottlerocket, OperatorHub's GPU Operator, KAITO (its Workspace objects), or a script, note or
    Terraform file that installs one."""
    if set_cloud(ctx) == "gke" or hostdriver.bottlerocket_node_classes(ctx):
        return True
    if any(resource.api_group == KAITO_GROUP for resource in ctx.of_kind("Workspace", "InferenceSet")):
        return True
    if any(hostscripts.says(resource, hostscripts.PLUGIN_KEY) for resource in ctx.of_kind(None)):
        return True
    return operatorhub_operator(ctx)


RULE = Rule("GS053", "set", check)
