"""GPU system components: device plugins, DCGM exporter and the rest, by image.

A *GPU system component* is recognised by image repository from
``data/system-components.yaml``, or by the GPU Operator's image placeholders; never by name.
A container of such an image that runs one of the component's workload tools (the DCGM
image's ``dcgmproftester``) is a GPU workload, not the component.
``SystemComponent`` says what its upstream manifests need (runtime class, host paths).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import PurePosixPath

from gpustack.lint.facts.commands import command_parts
from gpustack.lint.facts.consumers import gpus_reached
from gpustack.lint.facts.quantities import gpu_requests
from gpustack.lint.facts.hostpaths import normalise_host_path
from gpustack.lint.facts.images import image_repository
from gpustack.lint.model import Container, PodSpec
from gpustack.shipped import lint_data


@dataclass(frozen=True)
class SystemComponent:
    """A kind of GPU system component and what its upstream manifests need."""

    name: str
    summary: str
    images: tuple[str, ...]
    runtime_class: bool
    host_paths: tuple[str, ...]
    read_only_host_paths: tuple[str, ...]
    workload_commands: tuple[str, ...] = ()
    commands: tuple[str, ...] = ()  # command lines that make a container of any image this component

    def runs_workload(self, container: Container) -> bool:
        """Whether the container's command or args run one of the image's workload tools."""
        if not self.workload_commands:
            return False
        tools = {PurePosixPath(word).name for _, part in command_parts(container) for word in part.split()}
        return any(fnmatch.fnmatchcase(tool, pattern) for tool in tools for pattern in self.workload_commands)

    def allows_host_path(self, path: str, *, read_only: bool) -> bool:
        path = normalise_host_path(path)
        if any(path == allowed or path.startswith(allowed.rstrip("/") + "/") for allowed in self.host_paths):
            return True
        return read_only and path in self.read_only_host_paths


@dataclass(frozen=True)
class _Catalogue:
    components: tuple[SystemComponent, ...]
    placeholders: frozenset[str]
    placeholder_component: str


@cache
def _catalogue() -> _Catalogue:
    data = lint_data("system-components.yaml")
    components = tuple(
        SystemComponent(
            name=item["name"],
            summary=" ".join(str(item.get("summary", "")).split()),
            images=tuple(item["images"]),
            runtime_class=bool(item.get("runtimeClass", False)),
            host_paths=tuple(normalise_host_path(p) for p in item.get("hostPaths", ())),
            read_only_host_paths=tuple(normalise_host_path(p) for p in item.get("readOnlyHostPaths", ())),
            workload_commands=tuple(item.get("workloadCommands", ())),
            commands=tuple(item.get("commands", ())),
        )
        for item in data["components"]
    )
    placeholders = data["placeholders"]
    return _Catalogue(components, frozenset(placeholders["images"]), placeholders["component"])


def system_components() -> tuple[SystemComponent, ...]:
    return _catalogue().components


def is_placeholder_image(image: str) -> bool:
    return image.strip() in _catalogue().placeholders


_WILDCARDS = frozenset("*?[")


@cache
def component_for_image(image: str) -> SystemComponent | None:
    catalogue = _catalogue()
    if image.strip() in catalogue.placeholders:
        return next(c for c in catalogue.components if c.name == catalogue.placeholder_component)
    repository = image_repository(image)
    for component in catalogue.components:
        if any(_matches(repository, pattern) for pattern in component.images):
            return component
    return None


def component_for_container(container: Container) -> SystemComponent | None:
    """The component a container runs: its image's, unless it runs one of the image's workload
    tools; else the one whose command lines it runs (an nvidia-smi power-limit agent). Found
    once per container (every pod spec's components are asked for by many rules)."""
    found = container.once("system_component", _component_of)
    return found[0] if found else None


def _component_of(container: Container) -> tuple[SystemComponent, ...]:
    component = component_for_image(container.image)
    if component is not None:
        return () if component.runs_workload(container) else (component,)
    parts = [part for _, part in command_parts(container)]
    if not any("nvidia-smi" in part for part in parts):
        return ()
    text = " ".join(" ".join(part.split()) for part in parts)
    return tuple(c for c in _catalogue().components if any(command in text for command in c.commands))[:1]


def _matches(repository: str, pattern: str) -> bool:
    """The repository, or a mirror of it: ``harbor.local/nvidia/k8s-device-plugin``."""
    first, _, rest = pattern.partition("/")
    path = rest if rest and ("." in first or ":" in first) else pattern  # without the registry
    if _WILDCARDS.isdisjoint(pattern):  # most are: fnmatch would compile two regexes for each
        return repository == pattern or repository.endswith("/" + path)
    return fnmatch.fnmatchcase(repository, pattern) or fnmatch.fnmatchcase(repository, "*/" + path)


def pod_components(pod: PodSpec) -> tuple[SystemComponent, ...]:
    """The system components whose images run in a pod spec, in catalogue order; else, for a GPU
    node agent of the set's own (``unlisted_gpu_agent``), the catalogue's ``gpu-node-monitor``."""
    found = {c for container in pod.containers() if (c := component_for_container(container))}
    if not found and unlisted_gpu_agent(pod):
        return tuple(c for c in system_components() if c.name == UNLISTED_AGENT)
    return tuple(c for c in system_components() if c in found)


UNLISTED_AGENT = "gpu-node-monitor"


def unlisted_gpu_agent(pod: PodSpec) -> bool:
    """A DaemonSet's pods that run nvidia-smi and reach their node's GPUs (host paths,
    ``NVIDIA_VISIBLE_DEVICES``) without requesting any: one pod a node, watching every GPU of
    it, is a node agent (a VRAM monitor that feeds a scheduler), not a workload hiding GPUs from
    the scheduler. A Deployment or Job that does the same stays a workload."""
    if pod.resource.kind != "DaemonSet" or any(gpu_requests(c) for c in pod.containers()):
        return False
    if not any("nvidia-smi" in part for container in pod.containers() for _, part in command_parts(container)):
        return False
    volumes = pod.spec.get("volumes")
    host_paths = [  # podspec.host_path_volumes's paths would need an import of podspec, which imports this module
        str(volume["hostPath"].get("path", "")) for volume in (volumes if isinstance(volumes, list) else ())
        if isinstance(volume, Mapping) and isinstance(volume.get("hostPath"), Mapping)
    ]
    return gpus_reached(pod, host_paths) is not None
