"""GS054: a CUDA image run with the nvidia runtime and no GPU request.

The nvidia runtime injects the GPUs ``NVIDIA_VISIBLE_DEVICES`` names, and NVIDIA's CUDA images
set it to ``all`` in their image environment. A pod that requests GPUs gets the device plugin's
value instead; one with ``runtimeClassName: nvidia`` that requests none keeps ``all`` and reaches
every GPU of its node, which the scheduler counts as free. Other images are not reported: without
the variable the runtime injects nothing. A container that sets the variable itself is GS007's.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.lint.context import LintContext
from gpustack.lint.facts.consumers import VISIBLE_DEVICES, env_vars
from gpustack.lint.facts.images import image_repository
from gpustack.lint.facts.podspec import subject
from gpustack.lint.model import Container, Hit, PodSpec
from gpustack.lint.registry import Rule

# Images whose environment sets NVIDIA_VISIBLE_DEVICES=all: NVIDIA's CUDA images, NGC's images
# built on them, and community images that keep it (their Dockerfiles: vLLM's and PyTorch's start
# from nvidia/cuda or set it, Ollama's sets it).
CUDA_IMAGES = ("nvidia/cuda", "nvcr.io/nvidia/cuda", "vllm/vllm-openai", "ollama/ollama", "pytorch/pytorch")
CUDA_REGISTRIES = ("nvcr.io/nvidia/",)


def _cuda_image(container: Container) -> bool:
    repository = image_repository(container.image)
    return repository in CUDA_IMAGES or repository.startswith(CUDA_REGISTRIES)


def _sets_visible_devices(container: Container) -> bool:
    return any(var.name == VISIBLE_DEVICES for var in env_vars(container))


def check(pod: PodSpec, ctx: LintContext) -> Iterator[Hit]:
    runtime_class = pod.spec.get("runtimeClassName")
    if not isinstance(runtime_class, str) or runtime_class.strip() != "nvidia":
        return
    if pod.gpu_consumer or pod.system_component:
        return
    cuda = [c for c in pod.containers() if _cuda_image(c) and not _sets_visible_devices(c)]
    if not cuda:
        return
    container = cuda[0]
    yield Hit(
        pod.resource,
        (*pod.path, "runtimeClassName"),
        f"{subject(pod, container)} runs the CUDA image {container.image} with runtimeClassName nvidia and "
        f"requests no GPU: the image sets {VISIBLE_DEVICES}=all, so the runtime hands it every GPU of its node "
        "while the scheduler counts them free",
        fix="Request the GPUs it uses (`nvidia.com/gpu: 1`), or remove `runtimeClassName: nvidia` if it needs none.",
    )


RULE = Rule("GS054", "pod", check)
