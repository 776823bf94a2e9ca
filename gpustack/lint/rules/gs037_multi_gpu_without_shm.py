"""GS037: a container given several GPUs without a ``/dev/shm`` to match.

A container runtime gives each pod a 64 MiB ``/dev/shm``. Processes that drive several GPUs
of one node talk through it: NCCL's shared-memory transport and its proxy buffers, vLLM's
tensor-parallel workers (``shm_broadcast``), PyTorch's DataLoader workers, Ray's object
store. With 64 MiB they fail with "Bus error" or "NCCL WARN Error while creating shared
memory segment", or fall back to slower paths. vLLM's and NCCL's docs ask for a larger
``/dev/shm`` (``--ipc=host`` or ``--shm-size`` under Docker): in Kubernetes an ``emptyDir``
with ``medium: Memory`` mounted at ``/dev/shm``, or ``hostIPC: true``.

A container counts when it requests two or more ``nvidia.com/gpu`` (whole GPUs or HAMi
vGPUs, each on a separate card) and shows that its processes work across them: the image of
a serving engine or training stack (vLLM, SGLang, TensorRT-LLM, TGI, PyTorch, NCCL tests …),
a distributed launcher or tensor-parallel flag in its command, or an ``NCCL_*`` variable. A
demo that sleeps with two GPUs is left alone. KubeRay's Ray containers and KServe's
LLMInferenceService get a memory-backed ``/dev/shm`` from their operator. Any volume mounted at ``/dev/shm`` (memory-backed or not) is taken as deliberate.
Pods built from chart values (app-template) are checked, their ``persistence`` emptyDirs
included, and get no fix.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from fractions import Fraction

from gpustack.lint.context import LintContext
from gpustack.lint.facts.consumers import env_vars, is_gpu_workload
from gpustack.lint.facts.podspec import command_parts, subject
from gpustack.lint.facts.pools import GPU
from gpustack.lint.facts.quantities import gpu_requests, resource_amounts
from gpustack.lint.model import AppendItem, Container, Edit, Hit, PodSpec
from gpustack.lint.registry import Rule

SHM = "/dev/shm"
VOLUME = "dshm"
FIX = (
    "Add a volume `{name: dshm, emptyDir: {medium: Memory}}` and mount it at /dev/shm in the "
    "container (its use counts against the container's memory limit; a sizeLimit caps it), or "
    "set hostIPC: true."
)


# What tells that the processes of a container work across its GPUs: the image of a serving
# engine or training stack that does (a sleeping ubuntu or gpu-burn given 2 GPUs does not),
# a distributed launcher or tensor-parallel flag in the command, or NCCL settings.
_IMAGE = re.compile(r"vllm|sglang|tensorrt-llm|trtllm|text-generation-inference|nccl|pytorch|deepspeed|megatron|nemo|horovod|llm-d", re.I)
_COMMAND = re.compile(
    r"torchrun|torch\.distributed|_distributed\b|deepspeed|accelerate\s+launch|horovod|all_reduce_perf|nccl"
    r"|--tensor[-_]parallel[-_]size|--tp(?:-size)?\b|--num[-_]shard|--nproc[-_]per[-_]node",
    re.I,
)
# Operators that mount a memory-backed /dev/shm into the pods they create: KubeRay in the Ray
# container of head and workers, KServe's LLMInferenceService through its base config.
_SHM_INJECTED = (("ray.io/", None), ("serving.kserve.io/", "LLMInferenceService"))


def _launches(container: Container) -> bool:
    """A distributed launcher or tensor-parallel flag in the command, or NCCL settings."""
    if any(_COMMAND.search(text) for _, text in command_parts(container)):
        return True
    return any(var.name.startswith("NCCL_") for var in env_vars(container))


def _across_gpus(container: Container, pod: PodSpec, ctx: LintContext) -> bool:
    """Whether the container's processes work across its GPUs; an MPIJob's launcher (another
    pod of the object) starts them on the workers."""
    if _IMAGE.search(container.image) or _launches(container):
        return True
    return any(_launches(c) for other in ctx.pods_of(pod.resource) if other is not pod for c in other.containers())


def _shm_injected(pod: PodSpec) -> bool:
    api_version, kind = pod.resource.api_version or "", pod.resource.kind
    return any(api_version.startswith(group) and (k is None or k == kind) for group, k in _SHM_INJECTED)


def _gpus(container: Container) -> Fraction | None:
    """Whole GPUs (or HAMi vGPUs) the container is given; None when not known, or when its
    request and limit disagree (GS006's finding: which one is meant is not known)."""
    amounts = {a.quantity for a in resource_amounts(container) if a.name == GPU}
    return gpu_requests(container).get(GPU) if len(amounts) == 1 else None


def _mounts_shm(container: Container) -> bool:
    mounts = container.data.get("volumeMounts")
    return any(
        isinstance(mount, Mapping) and str(mount.get("mountPath", "")).rstrip("/") == SHM
        for mount in (mounts if isinstance(mounts, list) else ())
    )


def _volume_name(pod: PodSpec) -> str:
    """``dshm``, or ``dshm-2``, … when the pod already has a volume of that name."""
    volumes = pod.spec.get("volumes")
    taken = {v.get("name") for v in (volumes if isinstance(volumes, list) else ()) if isinstance(v, Mapping)}
    name, suffix = VOLUME, 1
    while name in taken:
        suffix += 1
        name = f"{VOLUME}-{suffix}"
    return name


def _edits(pod: PodSpec, containers: list[Container]) -> tuple[Edit, ...]:
    """The volume and its mounts; none for a pod built from chart values (app-template mounts
    volumes through ``persistence``, which no edit of the built pod maps to)."""
    if pod.resource.origin is not None:
        return ()
    name = _volume_name(pod)
    return (
        AppendItem((*pod.path, "volumes"), {"name": name, "emptyDir": {"medium": "Memory"}}),
        *(AppendItem((*c.path, "volumeMounts"), {"name": name, "mountPath": SHM}) for c in containers),
    )


def _request_path(container: Container) -> tuple[str | int, ...]:
    """The container's ``nvidia.com/gpu`` limit (or request): where the finding points."""
    amounts = [a for a in resource_amounts(container) if a.name == GPU]
    return next((a.path for a in amounts if a.section == "limits"), amounts[0].path)


def check(pod: PodSpec, ctx: LintContext) -> Iterator[Hit]:
    if not is_gpu_workload(pod) or pod.spec.get("hostIPC") is True or _shm_injected(pod):
        return
    lacking = [
        c
        for c in pod.containers()
        if c.group != "ephemeralContainers"
        and (gpus := _gpus(c)) is not None
        and gpus >= 2
        and not _mounts_shm(c)
        and _across_gpus(c, pod, ctx)
    ]
    edits = _edits(pod, lacking) if lacking else ()
    for index, container in enumerate(lacking):
        yield Hit(
            pod.resource,
            _request_path(container),
            f"{subject(pod, container)} gets {_gpus(container)} GPUs but no /dev/shm of its own: the "
            "runtime's 64 MiB /dev/shm is too small for NCCL, vLLM tensor-parallel workers or "
            "PyTorch DataLoaders across GPUs (bus errors, failed shared memory segments)",
            fix=FIX,
            edits=edits if index == 0 else (),
        )


RULE = Rule("GS037", "pod", check)
