"""GS071: a GPU pod names a RuntimeClass that nothing in the set creates.

The RuntimeClass admission plugin refuses a pod whose ``runtimeClassName`` names no RuntimeClass
("pod rejected: RuntimeClass "nvidia" not found",
https://github.com/kubernetes/kubernetes/blob/master/plugin/pkg/admission/runtimeclass/admission.go):
a Deployment's or DaemonSet's controller then creates no pod at all, only FailedCreate events.
RuntimeClasses are cluster objects someone creates: the set's own RuntimeClass objects; the
GPU Operator (its ``nvidia`` classes, ``operator.runtimeClass``); HAMi's chart with
``devicePlugin.createRuntimeClass``; K3s and RKE2, which ship ``nvidia``, ``crun`` and the Wasm
runtimes' (https://github.com/k3s-io/k3s/blob/master/manifests/runtimes.yaml); a script, guide
or Terraform file that creates one. Stated only where the set says which cluster it is for and
that cluster brings no such class: a warning where the set defines RuntimeClasses of its own that
leave this one out, runs K3s or RKE2 (a name they do not ship) or the configuration names the
distribution; information where only Talos machine configs or a managed cloud suggest the
cluster, whose classes may come from another repository. Nothing outside the files is known,
and the message says so.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.lint.context import LintContext
from gpustack.lint.facts import hostdriver, hostscripts, talos
from gpustack.lint.facts.clusterconfig import is_k3s_config
from gpustack.lint.facts.clusterpolicy import cluster_policies, operatorhub_operator
from gpustack.lint.facts.managed import set_cloud
from gpustack.lint.facts.podspec import subject
from gpustack.lint.facts.registered import names_of_roles
from gpustack.lint.model import Hit, Severity, get_value
from gpustack.lint.registry import Rule
from gpustack.lint.releases import dispatch

# K3s's manifests/runtimes.yaml (RKE2 ships the same classes).
K3S_CLASSES = frozenset({
    "nvidia", "nvidia-experimental", "crun", "lunatic", "slight", "spin", "wws", "wasmedge", "wasmer", "wasmtime",
})
K3S_LIKE = frozenset({"k3s", "rke2"})


def check(ctx: LintContext) -> Iterator[Hit]:
    asked = [(pod, name) for pod in ctx.pod_specs if (pod.gpu_consumer or pod.system_component)
             and isinstance(name := pod.spec.get("runtimeClassName"), str) and name]
    if not asked or _scripts_create_classes(ctx):
        return
    defined = {str(resource.ref.name) for resource in ctx.of_kind("RuntimeClass")}
    created, operator = _created(ctx)
    k3s_like = ctx.distribution in K3S_LIKE or any(is_k3s_config(r) for r in ctx.of_kind(None))
    found = _cluster(ctx, defined, k3s_like)
    if found is None:
        return
    cluster, severity = found
    for pod, name in asked:
        if name in defined or name in created or (k3s_like and name in K3S_CLASSES):
            continue
        if name.startswith("nvidia") and operator:
            continue
        yield Hit(
            pod.resource,
            (*pod.path, "runtimeClassName"),
            f"{subject(pod)} names RuntimeClass `{name}`, which nothing in the set creates ({cluster}): on a "
            f"cluster built from these files the API server refuses its pods (pod rejected: RuntimeClass \"{name}\" "
            "not found) and none is created; a class made by hand on a running cluster is lost with it "
            "(assumed: nothing outside these files creates it)",
            severity=severity,
            fix=f"Add a RuntimeClass `{name}` (`handler: nvidia` for NVIDIA's runtime) to the set, or name one the cluster has.",
        )


def _scripts_create_classes(ctx: LintContext) -> bool:
    """Whether a script, guide or Terraform file of the set creates RuntimeClasses (names not read)."""
    return any(hostscripts.says(resource, hostscripts.RUNTIME_CLASS_KEY) for resource in ctx.of_kind(None))


def _created(ctx: LintContext) -> tuple[set[str], bool]:
    """The RuntimeClass names the set's charts create (the GPU Operator's ``operator.runtimeClass``,
    HAMi's with ``devicePlugin.createRuntimeClass``), and whether the set deploys the GPU Operator
    at all (its ``nvidia`` classes): a release, a ClusterPolicy, an OperatorHub Subscription, a
    script's install."""
    names, operator = set(), False
    operators, sharing = names_of_roles("gpu-operator"), names_of_roles("gpu-sharing")
    for release in dispatch.releases(ctx):
        if release.chart in operators:
            operator = True
            if isinstance(name := get_value(release.values, "operator", "runtimeClass"), str):
                names.add(name)
        elif release.chart in sharing and get_value(release.values, "devicePlugin", "createRuntimeClass") is True:
            names.add(str(get_value(release.values, "devicePlugin", "runtimeClassName") or ""))
    operator = operator or bool(cluster_policies(ctx)) or operatorhub_operator(ctx) or any(
        hostscripts.says(resource, hostscripts.PLUGIN_KEY) and "gpu-operator" in str(resource.data[hostscripts.PLUGIN_KEY])
        for resource in ctx.of_kind(None)
    )
    return names, operator


def _cluster(ctx: LintContext, defined: set[str], k3s_like: bool) -> tuple[str, Severity | None] | None:
    """What says which cluster the set is for and that it brings no such RuntimeClass, with the
    finding's severity; None where nothing does. The set's own RuntimeClasses, K3s's fixed list
    and a distribution the user names are evidence enough for a warning; a cluster the set only
    suggests (Talos machine configs, a managed cloud) gives information: its classes may come
    from another repository."""
    if defined:
        return f"the set defines its RuntimeClasses: {', '.join(sorted(defined))}", None
    if k3s_like:
        return "K3s and RKE2 ship only their own runtimes' classes", None
    if ctx.distribution:
        return f"the cluster is {ctx.distribution}", None
    if (cloud := set_cloud(ctx)) is not None:
        return f"the set is for {cloud.upper()}, which creates no RuntimeClass", Severity.INFO
    if hostdriver.host_stack(ctx).releases or any(talos.is_machine_config(r) or talos.is_talconfig(r) for r in ctx.of_kind(None)):
        return "the set is for Talos, which creates no RuntimeClass", Severity.INFO
    return None


RULE = Rule("GS071", "set", check)
