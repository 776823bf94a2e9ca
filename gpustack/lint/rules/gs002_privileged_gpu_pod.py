"""GS002: a GPU workload's container that runs privileged or adds SYS_ADMIN or ALL.

The nvidia runtime (``runtimeClassName: nvidia``) injects exactly the allocated devices and
driver files into a container that has dropped every capability: the NVIDIA device plugin
itself runs that way. ``privileged: true`` instead hands the container every device node of
the host, all GPUs included, and the host's kernel; the NVIDIA Container Toolkit counts a
container with ``CAP_SYS_ADMIN`` as privileged too and then honours ``NVIDIA_VISIBLE_DEVICES``
(``all`` in CUDA images) whatever the device plugin allocated
(https://github.com/NVIDIA/nvidia-container-toolkit/blob/main/cmd/nvidia-container-runtime-hook/container_config.go:
``getDevices``, ``privileged || AcceptEnvvarUnprivileged``). A pod that reaches GPUs without
requesting them (host paths, ``NVIDIA_VISIBLE_DEVICES``) counts too: the scheduler does not
know about its GPUs. ``allowPrivilegeEscalation: true`` alone is not reported here: without
added capabilities a setuid binary gains no more than the container's default set (GS023, an
opt-in rule, asks for ``false`` as hardening).

Only the containers that take GPUs themselves are judged: a GPU request or claim,
``NVIDIA_VISIBLE_DEVICES``, NVIDIA device nodes or driver files mounted from the host (GKE's
driver folder included), or NVIDIA software (image or command). A privileged container beside
them that does none of these (a docker-in-docker sidecar, a USB or network helper) is not
reported: it does see every ``/dev/nvidia*`` node, as any privileged container on a GPU node
does, but the toolkit injects no driver into it (no ``NVIDIA_VISIBLE_DEVICES``: "not a GPU
container", the hook's ``getNvidiaConfig``), so it cannot use them without bringing the host's
exact driver itself, and it reaches no more than the same container in a pod of its own, which
GS002 never reports either (the clean ``nvidia.com/gpu: 0`` example). Its privilege is generic
host access, Pod Security's baseline level's to refuse
(https://kubernetes.io/docs/concepts/security/pod-security-standards/), and GS002's fix (request
GPUs instead) does not apply to it: dockerd needs the privilege.

Evidence before severity: "every GPU of its node" harms only where the node has more GPUs
than the pod was given, or shares its GPUs between pods (MIG, HAMi). An error where that is
shown: the pod asks for a share (``nvidia.com/mig-*``, ``nvidia.com/gpumem``, ``*.shared``),
a pool of the spec (or live cluster) the pod can land on has more GPUs per node or splits
them, the pod's node selection names a larger GPU count or instance type, or a GPU node group
of the set the pod tolerates has larger nodes (``facts.node_gpus``). Without any, the rule
says that it assumes larger nodes and is information only: on public repositories read blind
such pods ran on one-GPU nodes (a home server's single card, time-sliced replicas of one card),
where privilege was for another device (a USB accelerator, a TV tuner) and reached no GPU beyond
the pod's own. Where the
spec shows that every pool the pod can land on has no more GPUs per node than it requests,
unsplit, privilege reaches no GPU beyond its own: not reported, as GS007 does not report
``NVIDIA_VISIBLE_DEVICES=all`` there; what remains is generic host access, as with the
sidecars above. A pod that reaches GPUs outside the scheduler stays an error whatever the
node (the scheduler hands the same GPUs to other pods), unless it reaches every GPU of its
node without its privilege: ``NVIDIA_VISIBLE_DEVICES=all`` (or a CDI annotation naming all),
which GS007 reports, or the host's ``/dev``, which GS003 reports. Privilege adds no GPU there,
and the fix those rules give (request GPUs) comes first.

Nor is it reported, without evidence, where the pod asks for 8 GPUs or more: the largest GPU
nodes in common use hold 8 (NVIDIA's HGX and DGX boards, https://www.nvidia.com/en-us/data-center/hgx/;
AWS p4d/p5, GKE a3, Azure ND H100 v5 instances), so the pod has every GPU of its node.

GKE's GPUDirect-TCPX and -TCPXO receive-data-path manager (RxDM, image ``tcpgpudmarxd``) is
the exception: GKE runs it as a privileged sidecar of the GPU workload it moves data for, and
the user cannot drop the privilege (https://github.com/GoogleCloudPlatform/container-engine-accelerators/tree/master/gpudirect-tcpx,
https://cloud.google.com/kubernetes-engine/docs/how-to/gpu-bandwidth-gpudirect-tcpx).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from fractions import Fraction

from gpustack.lint.context import LintContext
from gpustack.lint.facts.consumers import (
    cdi_gpu_devices,
    is_gpu_workload,
    outside_scheduler_note,
    runs_nvidia_software,
    uses_gpu,
    visible_devices,
)
from gpustack.lint.facts.hostpaths import exposes_gpus, is_under, normalise_host_path
from gpustack.lint.facts.images import image_repository
from gpustack.lint.facts.node_gpus import selected_gpus, sized_groups
from gpustack.lint.facts.podspec import host_path_volumes, subject
from gpustack.lint.facts.pools import GPU, MIG_PREFIX, Taint, untolerated
from gpustack.lint.facts.quantities import gpu_requests, is_shared_gpu_resource
from gpustack.lint.facts.scheduling import number_text, pod_total, reachable_pools, tolerations
from gpustack.lint.model import Container, Hit, Path, PodSpec, Severity
from gpustack.lint.registry import Rule

ADMIN_CAPABILITIES = frozenset({"SYS_ADMIN", "CAP_SYS_ADMIN", "ALL"})
# GKE's GPUDirect RxDM daemons (TCPX, TCPXO): privileged by GKE's design (module docstring).
GPUDIRECT_RXDM = ("us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpx/", "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/")
# GKE installs the driver here; its GPU containers mount the libraries from it.
GKE_DRIVER = "/home/kubernetes/bin/nvidia"
FIX = (
    "Remove `privileged` and the added capabilities; request GPUs "
    "through resources (or a claim) and set `runtimeClassName: nvidia` where the nvidia runtime "
    "is not the default."
)

LARGEST_COMMON_NODE = 8  # GPUs on one board: HGX and DGX (the module docstring)


def _escalations(container: Container) -> Iterator[tuple[Path, str]]:
    context = container.data.get("securityContext")
    if not isinstance(context, Mapping):
        return
    path = (*container.path, "securityContext")
    if context.get("privileged") is True:
        yield (*path, "privileged"), "runs privileged"
    capabilities = context.get("capabilities")
    added = capabilities.get("add") if isinstance(capabilities, Mapping) else None
    for index, capability in enumerate(added if isinstance(added, list) else ()):
        if str(capability).upper() in ADMIN_CAPABILITIES:
            yield (*path, "capabilities", "add", index), f"adds capability {capability}"


def _is_gpudirect_rxdm(container: Container) -> bool:
    repository = image_repository(container.image)
    return repository.startswith(GPUDIRECT_RXDM) and repository.rsplit("/", 1)[-1].startswith("tcpgpudmarxd")


def _takes_gpus(pod: PodSpec, container: Container) -> bool:
    """Whether the container itself reaches for GPUs (module docstring): the others beside it
    are not judged."""
    if uses_gpu(container) or runs_nvidia_software(container):
        return True
    mounts = container.data.get("volumeMounts")
    mounted = {m.get("name") for m in (mounts if isinstance(mounts, list) else ()) if isinstance(m, Mapping)}
    for volume in host_path_volumes(pod):
        path = normalise_host_path(volume.host_path)
        # The host's / and /dev alone are host agents' (privilege already has every device node).
        if volume.name in mounted and (is_under(path, GKE_DRIVER) or (exposes_gpus(path) and path not in ("/", "/dev"))):
            return True
    return False


def _requested(pod: PodSpec) -> tuple[Fraction, str, str | None]:
    """Whole GPUs the pod requests (1 where only a claim says: at least one), how a message
    says so, and the shared resource it asks for, if any (a MIG slice, HAMi memory or cores, a
    time-sliced share)."""
    names = {name for c in pod.containers() for name in gpu_requests(c)}
    shared = sorted(name for name in names if name.startswith(MIG_PREFIX) or is_shared_gpu_resource(name))
    whole = pod_total(pod, GPU)
    asks = f"the {number_text(whole)} it requests" if whole else "the GPUs it claims"
    return max(whole, Fraction(1)), asks, shared[0] if shared else None


def _reach(pod: PodSpec, ctx: LintContext) -> tuple[Severity | None, str] | None:
    """The severity (None: the catalogue's error) and what the escalated container reaches,
    by the evidence of the nodes' size (the module docstring's order); None where the spec
    shows it reaches no GPU beyond its own."""
    if pod.gpus_outside_scheduler:
        if _every_gpu_without_privilege(pod):
            return None
        return None, f": it reaches every GPU of its node{outside_scheduler_note(pod)}"
    requested, asks, shared = _requested(pod)
    if shared:
        return None, f": it reaches every GPU of its node whole, not only its share ({shared}), the other pods' shares included"
    cluster = ctx.cluster
    if cluster is not None and (pools := reachable_pools(pod, cluster)):
        mig = cluster.mig_strategy != "none"
        larger = [p for p in pools if p.gpus > requested or p.sharing.hami or (mig and p.gpu.mig_capable)]
        if larger:
            pool = larger[0]
            split = " split by HAMi" if pool.sharing.hami else " split by MIG" if mig and pool.gpu.mig_capable else ""
            return None, f": it reaches every GPU of its node, not only {asks} (pool {pool.name}: {pool.gpus} per node{split})"
        return None
    selected = selected_gpus(pod)
    if selected and selected[0] > requested:
        count, test = selected
        if test.term is None:
            shown = f"{test.key}={test.values[0]}"  # a nodeSelector entry
        else:
            shown = f"{test.key} {test.operator} [{', '.join(test.values)}]"
        return None, f": it reaches every GPU of its node, not only {asks} (its node selection {shown}: up to {count} per node)"
    allowed = tolerations(pod)
    for what, count, taints in ctx.set_fact(sized_groups):
        if count > requested and not untolerated((Taint(*t) for t in taints), allowed):
            return None, f": it reaches every GPU of its node, not only {asks} ({what}: up to {count} per node)"
    if requested >= LARGEST_COMMON_NODE:
        return None  # no larger node to assume: the pod has the whole board
    return Severity.INFO, (f": it reaches every GPU of its node, not only {asks}, assuming nodes with more GPUs "
                           "than that (neither a spec nor the set says how many GPUs its nodes have)")


def _every_gpu_without_privilege(pod: PodSpec) -> bool:
    """Whether the pod reaches every GPU of its node whatever its privilege (the module
    docstring): ``NVIDIA_VISIBLE_DEVICES=all``, a CDI annotation naming all, or the host's
    ``/dev`` (or ``/``)."""
    if any((var := visible_devices(c)) and var.value.strip().lower() == "all" for c in pod.containers()):
        return True
    cdi = cdi_gpu_devices(pod)
    if cdi is not None and "all" in cdi.devices.split(","):
        return True
    return any(normalise_host_path(volume.host_path) in ("/", "/dev") for volume in host_path_volumes(pod))


def check(pod: PodSpec, ctx: LintContext) -> Iterator[Hit]:
    if not is_gpu_workload(pod):
        return
    for container in pod.containers():
        if _is_gpudirect_rxdm(container) or not _takes_gpus(pod, container):
            continue
        for path, what in _escalations(container):
            reach = _reach(pod, ctx)
            if reach is None:
                return
            severity, reaches = reach
            yield Hit(pod.resource, path, f"{subject(pod, container)} of a GPU pod {what}{reaches}", severity=severity, fix=FIX)


RULE = Rule("GS002", "pod", check, set_fact=sized_groups)
