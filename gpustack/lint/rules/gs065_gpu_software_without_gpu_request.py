"""GS065: GPU-only software in a pod that no container's request gives a GPU.

A pod that runs ``nvidia-smi``, ``trtllm-serve`` or the server of vLLM's or SGLang's GPU image
and requests no GPU either gets none (runc as the default runtime: the tool fails) or, under a
default nvidia runtime, every GPU of its node through the CUDA image's
``NVIDIA_VISIBLE_DEVICES=all``, outside the scheduler. Pods with ``runtimeClassName: nvidia``
are GS054's. A GPU in the pod-level ``resources`` is no request: they take cpu and memory only.
A pod given another vendor's GPUs (``amd.com/gpu``), and the servers' ROCm builds, are not
NVIDIA's; a host task (``consumers.host_task``: plain OS images mounting the host's root) works on
the host's files.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from gpustack.lint.context import LintContext
from gpustack.lint.facts.consumers import command_line, enters_host, host_task, other_vendor_only
from gpustack.lint.facts.hostpaths import normalise_host_path
from gpustack.lint.facts.llmservers import image_paths, server_of
from gpustack.lint.facts.podspec import host_path_volumes, subject
from gpustack.lint.facts.quantities import is_gpu_resource
from gpustack.lint.model import Container, Hit, PodSpec, Severity
from gpustack.lint.registry import Rule

# Commands that need a GPU in the container (not run inside the host, as node agents do).
_GPU_COMMANDS = re.compile(r"(^|[\s/;&|(`])(nvidia-smi|trtllm-serve)(\s|$|;)")
# Servers whose images are GPU builds (their CPU builds are other images): the server counts
# when it runs from such an image, by the entrypoint or its own command.
_GPU_BUILDS = {
    "vLLM": re.compile(r"(^|/)(vllm|lmcache)/vllm-openai(:|@|$)"),
    "SGLang": re.compile(r"(^|/)lmsysorg/sglang(:|@|$)"),
}
FIX = "Request the GPU in the container that uses it (`resources.limits: {nvidia.com/gpu: 1}`) or a DRA claim."


def _gpu_only(container: Container) -> str | None:
    """What in the container needs a GPU: a command, or a server of a GPU build; None."""
    line = command_line(container)
    if enters_host(line):
        return None
    if found := _GPU_COMMANDS.search(line):
        return f"runs {found.group(2)}"
    server = server_of(container)
    build = _GPU_BUILDS.get(server.name) if server else None
    rocm = "rocm" in container.image.lower()  # AMD's builds: vllm-openai:…-rocm, sglang:…-rocm630
    if server and build and not rocm and any(build.search(path) for path in image_paths(container.image)):
        return f"runs the {server.name} server of the GPU image {container.image}"
    return None


def _pod_level_gpus(pod: PodSpec) -> list[str]:
    resources = pod.spec.get("resources")
    if not isinstance(resources, dict):
        return []
    names = {
        str(name)
        for part in ("requests", "limits")
        if isinstance(resources.get(part), dict)
        for name in resources[part]
        if is_gpu_resource(str(name))
    }
    return sorted(names)


def check(pod: PodSpec, ctx: LintContext) -> Iterator[Hit]:
    if pod.gpu_consumer or pod.system_component:
        return
    if misplaced := _pod_level_gpus(pod):
        yield Hit(
            pod.resource,
            (*pod.path, "resources"),
            f"{subject(pod)} asks for {', '.join(misplaced)} in its pod-level resources, which take cpu and memory "
            "only: the API server refuses the pod (or, where pod-level resources are off, drops the field) and no "
            "container is given a GPU",
            severity=Severity.ERROR,
            fix="Move the GPU request under the container that uses it (`containers[].resources.limits`).",
        )
        return
    if pod.spec.get("runtimeClassName") == "nvidia" or other_vendor_only(pod):
        return  # GS054's; or a pod given another vendor's GPUs (ROCm builds of these servers)
    if host_task(pod, [normalise_host_path(volume.host_path) for volume in host_path_volumes(pod)]):
        return  # it works on the host's files (copies nvidia-smi, say), not on a GPU
    for container in pod.containers(include_init=False):
        if what := _gpu_only(container):
            yield Hit(
                pod.resource,
                container.path,
                f"{subject(pod, container)} {what} and requests no GPU: where runc is the default runtime it gets "
                "none and fails, where the nvidia runtime is, the CUDA image's NVIDIA_VISIBLE_DEVICES=all hands it "
                "every GPU of its node while the scheduler counts them free",
                fix=FIX,
            )
            return


RULE = Rule("GS065", "pod", check)
