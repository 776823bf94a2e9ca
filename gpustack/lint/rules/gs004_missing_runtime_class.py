"""GS004: a GPU pod without ``runtimeClassName`` where nvidia is not the default runtime.

K3s (and RKE2, k0s) registers the ``nvidia`` RuntimeClass but keeps runc as containerd's
default; kubeadm clusters keep it unless ``nvidia-ctk runtime configure --set-as-default`` ran.
A pod that gets GPUs from the device plugin (or HAMi) without ``runtimeClassName: nvidia`` then
starts without the devices and driver files. The device
plugin, GFD and DCGM Exporter read GPUs through NVML and need it too.

Where no spec is given, the set itself may settle it (``runtimeevidence``): a Talos patch, K3s
or RKE2 config or GPU Operator that makes nvidia the default (or injects GPUs through CDI), a
Karpenter node class on Bottlerocket for the GPU nodes, objects that only OpenShift serves, or
on kubeadm NVIDIA's static device plugin as NVIDIA publishes it (no RuntimeClass), silences the rule; one that keeps runc the default makes it an error whatever the
distribution. A managed cloud (``--distribution``, config or the pod's node labels) and a spec
(``--spec`` or config ``spec:``, ``cluster.nvidiaDefaultRuntime``) win over the set's evidence.
Without any of it the finding is info, and says what it assumes.

The rule owns containerd's default runtime, so it also reports where the set means to make nvidia
the default and does not: a Talos CRI drop-in whose ``default_runtime_name`` sits in the TOML
table of the other CRI config version (``[plugins."io.containerd.grpc.v1.cri".containerd]`` is
containerd 1.x's; containerd 2, Talos v1.8 and later, reads
``[plugins."io.containerd.cri.v1.runtime".containerd]``), where containerd never reads it: an
error where the set (a Talos release, the drop-in's ``version``) says which containerd reads it,
a warning where it only assumes today's Talos. Any other containerd config of the set (a
ConfigMap's value, K3s or RKE2 ``config.toml.tmpl`` / ``config-v3.toml.tmpl``, a ``config.toml``)
that says ``version = 3`` (or is K3s's ``config-v3.toml.tmpl``) and keeps ``default_runtime_name``
or a ``runtimes`` table in containerd 1.x's table is an error too: containerd 2 reads a version 3
config as it is (it converts version 2 configs only), so runc stays the default or the runtime is
never registered (https://github.com/containerd/containerd/blob/main/docs/cri/config.md).

DRA claims are exempt: DRA drivers hand devices over through CDI, which containerd applies
under any runtime (a system DaemonSet with an admin claim, such as DCGM Exporter in DRA mode,
too). GKE, EKS and AKS make the nvidia runtime (or their own driver mounts) the
default; GKE has no ``nvidia`` RuntimeClass at all, so adding one gets pods rejected.
On OpenShift the GPU Operator installs the NVIDIA Container Toolkit as CRI-O's OCI hook, which
CRI-O applies to every container: GPU pods need no RuntimeClass there
(https://docs.nvidia.com/datacenter/cloud-native/openshift/latest/index.html), whatever
containerd settings the set holds (CRI-O reads none of them).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache

from gpustack.lint.context import RUNTIME_CLASS_DISTRIBUTIONS, LintContext
from gpustack.lint.facts import registered, runtimeevidence
from gpustack.lint.facts.components import pod_components
from gpustack.lint.facts.consumers import is_gpu_workload, visible_devices
from gpustack.lint.facts.managed import MANAGED, pod_cloud, set_cloud
from gpustack.lint.facts.podspec import subject
from gpustack.lint.facts.quantities import gpu_requests
from gpustack.lint.model import Hit, PodSpec, SetValue, Severity, get_value
from gpustack.lint.registry import Rule
from gpustack.lint.releases import dispatch, flux, k3s

# Distributions whose GPU stack hooks the nvidia runtime into every container (module docstring).
HOOKED = frozenset({"openshift"})
FIX = "Add `runtimeClassName: nvidia` to the pod spec."
RUNC_DEFAULT = "K3s, RKE2, k0s, kubeadm"
ASSUMED = "assumed: the set names no distribution, and on OpenShift, GKE, EKS or AKS none is needed"


def _distribution(pod: PodSpec, ctx: LintContext) -> str | None:
    """The context's distribution, or the managed cloud whose node labels the pod selects, or
    the one the set's objects, scripts and Terraform name (``managed.set_cloud``)."""
    return pod_cloud(pod) or ctx.distribution or ctx.set_fact(_set_context)[1]


def _set_context(ctx: LintContext) -> tuple[tuple[bool, str] | None, str | None]:
    """What the rule reads of the whole set (its ``set_fact``): the runtime evidence, and the
    managed cloud the set names."""
    return _evidence(ctx), set_cloud(ctx)


def _evidence(ctx: LintContext) -> tuple[bool, str] | None:
    """What the set says of the default runtime (whether GPU pods start without a
    RuntimeClass, and where it says so); None under a spec, which decides alone."""
    if ctx.cluster is not None or (evidence := runtimeevidence.default_runtime(ctx)) is None:
        return None
    return evidence.gpus_without_class, str(evidence)


def _severity(distribution: str | None, ctx: LintContext) -> Severity | None:
    """None: no finding. Error where the spec or the set says runc is the default; a warning
    where only the distribution's own default says so (the nodes may be set up outside the
    files: Ansible, cloud-init, a node image); info without any context.

    Precedence: a managed cloud or OpenShift, then the spec's ``cluster.nvidiaDefaultRuntime``,
    then the set's evidence, then the distribution's own default runtime."""
    if distribution in MANAGED or distribution in HOOKED:
        return None
    if ctx.cluster is not None:
        return None if ctx.cluster.nvidia_default_runtime else Severity.ERROR
    if (evidence := ctx.set_fact(_set_context)[0]) is not None:
        return None if evidence[0] else Severity.ERROR
    return Severity.INFO if distribution is None else Severity.WARNING


def _class_exists(severity: Severity, distribution: str | None) -> bool:
    return severity is Severity.ERROR or distribution in RUNTIME_CLASS_DISTRIBUTIONS


def _where(distribution: str | None, ctx: LintContext) -> str:
    """Where the message says runc is the default: the set's evidence, else the distribution,
    else what the rule assumes."""
    if (evidence := ctx.set_fact(_set_context)[0]) is not None:
        return f"where runc is the default runtime ({evidence[1]})"
    if distribution in RUNTIME_CLASS_DISTRIBUTIONS:
        return f"on {distribution}"
    if distribution is None:
        return f"where runc is the default runtime ({RUNC_DEFAULT}; {ASSUMED})"
    return f"where runc is the default runtime ({RUNC_DEFAULT})"


def _why(pod: PodSpec) -> str | None:
    """What makes the pod need the nvidia runtime, or None."""
    if is_gpu_workload(pod):
        for container in pod.containers():
            if requests := gpu_requests(container):
                return f"gets {', '.join(sorted(requests))} from the device plugin"
            if visible_devices(container):
                return "asks for GPUs through NVIDIA_VISIBLE_DEVICES"
        return None  # GPUs through DRA claims only
    if pod.system_component and pod.resource.kind == "DaemonSet" and not pod.spec.get("resourceClaims"):
        needing = [c.name for c in pod_components(pod) if c.runtime_class]
        if needing:
            return f"runs the {needing[0]}, which reads GPUs through NVML"
    return None


def check(pod: PodSpec, ctx: LintContext) -> Iterator[Hit]:
    runtime_class = pod.spec.get("runtimeClassName")
    if isinstance(runtime_class, str) and runtime_class.strip():
        return
    why = _why(pod)
    if why is None:
        return
    distribution = _distribution(pod, ctx)
    severity = _severity(distribution, ctx)
    if severity is None:
        return
    yield Hit(
        pod.resource,
        pod.path,
        f"{subject(pod)} sets no runtimeClassName but {why}: {_where(distribution, ctx)} its containers start "
        "without GPU devices or driver",
        severity=severity,
        fix=FIX,
        # Only where runc is surely the default, or the distribution registers the class:
        # elsewhere the class may not exist.
        edits=(SetValue((*pod.path, "runtimeClassName"), "nvidia"),) if _class_exists(severity, distribution) else (),
    )


RUNTIME_CLASS = "runtimeClassName"


@cache
def chart_runtime_class() -> dict[str, tuple[str, ...]]:
    """Charts whose GPU DaemonSets read NVML, and the value that sets their runtimeClassName
    (each chart's values.yaml; on K3s dcgm-exporter needs `--set runtimeClassName=nvidia`):
    HAMi's under its device plugin's values."""
    return {
        "nvidia-device-plugin": (RUNTIME_CLASS,),
        "dcgm-exporter": (RUNTIME_CLASS,),
        "hami": (*registered.bundle_values("hami", "device-plugin"), RUNTIME_CLASS),
    }


def check_values(ctx: LintContext) -> Iterator[Hit]:
    """Chart releases of GPU DaemonSets that leave runtimeClassName unset. A K3s HelmChart is
    K3s context for itself (RKE2's helm-controller reads it too; both keep runc the default).
    Then the set's containerd configs that set the default runtime (or a runtime) where
    containerd does not read it."""
    yield from _releases_without_class(ctx)
    yield from _misplaced_defaults(ctx)


def _misplaced_defaults(ctx: LintContext) -> Iterator[Hit]:
    for found in runtimeevidence.misplaced_defaults(ctx):
        said = f"{found.where} sets {found.said} under [{found.table}]"
        if found.certain:
            if found.runtime_table:
                outcome = (f"containerd never registers runtime {found.runtime_table}, and pods of a RuntimeClass whose "
                           "handler it is fail to start")
            else:
                outcome = "runc stays the default runtime, and GPU pods without runtimeClassName start without GPU devices or driver"
            message = (f"{said}, a table containerd does not read under CRI config version {found.version} "
                       f"({found.known or 'any Talos release'}): {outcome}")
        else:
            message = (f"{said}, containerd 1.x's table: from Talos v1.8 on, containerd 2 (CRI config version 3) reads only "
                       f"[{found.wanted}], and runc stays the default runtime (assumed: the set names no Talos release)")
        yield Hit(
            found.resource,
            found.path,
            message,
            severity=Severity.ERROR if found.certain else Severity.WARNING,
            fix=f"Move it under [{found.wanted}].",
        )


def _releases_without_class(ctx: LintContext) -> Iterator[Hit]:
    for release in dispatch.releases(ctx):
        keys = chart_runtime_class().get(release.chart)
        value = get_value(release.values, *keys) if keys else None
        if keys is None or (isinstance(value, str) and value.strip()):
            continue
        if release.chart == "hami" and get_value(release.values, "devicePlugin", "enabled") is False:
            continue
        if flux.patches_resource_claims(release):
            continue
        distribution = ctx.distribution or ("k3s" if k3s.declares(release) else None) or ctx.set_fact(_set_context)[1]
        severity = _severity(distribution, ctx)
        if severity is None:
            continue
        resource, path = release.where(*keys)
        yield Hit(
            resource,
            path,
            f"{release} leaves `{'.'.join(keys)}` unset: {_where(distribution, ctx)} its GPU DaemonSet reads GPUs through NVML "
            "and starts without GPU devices or driver",
            severity=severity,
            fix=f"Set `{'.'.join(keys)}: nvidia` in the chart's values.",
        )


RULE = Rule("GS004", "pod", check, values=check_values, set_fact=_set_context)
