"""GS002: a GPU workload that runs privileged or adds SYS_ADMIN or ALL.

The nvidia runtime (``runtimeClassName: nvidia``) injects exactly the allocated devices and
driver files into a container that has dropped every capability: the NVIDIA device plugin
itself runs that way. ``privileged: true`` instead hands the
container every device node of the host, all GPUs included, and the host's kernel. A pod that
reaches GPUs without requesting them (host paths, ``NVIDIA_VISIBLE_DEVICES``) counts too: the
scheduler does not know about its GPUs. ``allowPrivilegeEscalation: true`` alone is not
reported here: without added capabilities a setuid binary gains no more than the container's
default set (GS023 asks for ``false`` as hardening).

GKE's GPUDirect-TCPX and -TCPXO receive-data-path manager (RxDM, image ``tcpgpudmarxd``) is
the exception: GKE runs it as a privileged sidecar of the GPU workload it moves data for, and
the user cannot drop the privilege (https://github.com/GoogleCloudPlatform/container-engine-accelerators/tree/master/gpudirect-tcpx,
https://cloud.google.com/kubernetes-engine/docs/how-to/gpu-bandwidth-gpudirect-tcpx).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from gpustack.lint.context import LintContext
from gpustack.lint.facts.consumers import is_gpu_workload, outside_scheduler_note
from gpustack.lint.facts.images import image_repository
from gpustack.lint.facts.podspec import subject
from gpustack.lint.model import Container, Hit, Path, PodSpec
from gpustack.lint.registry import Rule

ADMIN_CAPABILITIES = frozenset({"SYS_ADMIN", "CAP_SYS_ADMIN", "ALL"})
# GKE's GPUDirect RxDM daemons (TCPX, TCPXO): privileged by GKE's design (module docstring).
GPUDIRECT_RXDM = ("us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpx/", "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/")
FIX = (
    "Remove `privileged` and the added capabilities; request GPUs "
    "through resources (or a claim) and set `runtimeClassName: nvidia` where the nvidia runtime "
    "is not the default."
)


def _escalations(container: Container) -> Iterator[tuple[Path, str]]:
    context = container.data.get("securityContext")
    if not isinstance(context, Mapping):
        return
    path = (*container.path, "securityContext")
    if context.get("privileged") is True:
        yield (*path, "privileged"), "runs privileged (every host device, all GPUs)"
    capabilities = context.get("capabilities")
    added = capabilities.get("add") if isinstance(capabilities, Mapping) else None
    for index, capability in enumerate(added if isinstance(added, list) else ()):
        if str(capability).upper() in ADMIN_CAPABILITIES:
            yield (*path, "capabilities", "add", index), f"adds capability {capability}"


def _is_gpudirect_rxdm(container: Container) -> bool:
    repository = image_repository(container.image)
    return repository.startswith(GPUDIRECT_RXDM) and repository.rsplit("/", 1)[-1].startswith("tcpgpudmarxd")


def check(pod: PodSpec, ctx: LintContext) -> Iterator[Hit]:
    if not is_gpu_workload(pod):
        return
    note = outside_scheduler_note(pod)
    for container in pod.containers():
        if _is_gpudirect_rxdm(container):
            continue
        for path, what in _escalations(container):
            yield Hit(pod.resource, path, f"{subject(pod, container)} of a GPU pod {what}{note}", fix=FIX)


RULE = Rule("GS002", "pod", check)
