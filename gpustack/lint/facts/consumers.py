"""GPU consumers: which pod specs and containers get GPUs, and how.

A *GPU consumer* is a pod spec that
- requests ``nvidia.com/gpu`` (or ``.shared``), ``nvidia.com/mig-*``, ``nvidia.com/gpumem*``
  or ``nvidia.com/gpucores`` with a value > 0 (``nvidia.com/gpu: 0`` is no GPU pod);
- has a resource claim (template) that resolves to a GPU DeviceClass, or cannot be resolved;
- or reaches GPUs without requesting them (*GPUs outside the scheduler*): it sets
  ``NVIDIA_VISIBLE_DEVICES`` to something other than ``void``, ``none`` or empty, names NVIDIA
  GPUs in a CDI annotation (``cdi.k8s.io/*: nvidia.com/gpu=all``), or mounts GPU device nodes or
  driver files from the host (``gpus_outside_scheduler``). The scheduler
  does not count such a pod's GPUs, and it sees every GPU of its node.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from gpustack.lint.facts.claims import ClaimIndex
from gpustack.lint.facts.hostpaths import gpu_specific, normalise_host_path
from gpustack.lint.facts.images import image_repository
from gpustack.lint.facts.quantities import gpu_requests, resource_amounts
from gpustack.lint.model import Container, Path, PodSpec, scalar_text

# --- NVIDIA_VISIBLE_DEVICES ----------------------------------------------------------------

VISIBLE_DEVICES = "NVIDIA_VISIBLE_DEVICES"
_HIDDEN = frozenset({"void", "none", ""})  # nvidia-container-toolkit: no GPU injected


@dataclass(frozen=True)
class EnvVar:
    name: str
    value: str | None  # the literal value; None when it comes from valueFrom or is absent
    path: Path  # path of the env list item
    from_source: bool  # set through valueFrom

    @property
    def value_path(self) -> Path:
        return (*self.path, "value")


def env_vars(container: Container) -> Iterator[EnvVar]:
    return iter(container.once("env_vars", lambda c: tuple(_env_vars(c))))


def _env_vars(container: Container) -> Iterator[EnvVar]:
    env = container.data.get("env")
    if not isinstance(env, list):
        return
    for index, item in enumerate(env):
        if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
            continue
        value = item.get("value")
        literal = None if value is None else value if isinstance(value, str) else scalar_text(value)
        yield EnvVar(item["name"], literal, (*container.path, "env", index), "valueFrom" in item)



def visible_devices(container: Container) -> EnvVar | None:
    """The container's NVIDIA_VISIBLE_DEVICES when it exposes GPUs (not void/none/empty)."""
    for var in env_vars(container):
        if var.name == VISIBLE_DEVICES and var.value is not None and var.value.strip() not in _HIDDEN:
            return var
    return None


# --- CDI annotations ------------------------------------------------------------------------

# A container runtime with CDI enabled injects the devices a pod annotation names, whatever
# the scheduler allocated: https://github.com/cncf-tags/container-device-interface#cdi-annotations
CDI_ANNOTATION_PREFIX = "cdi.k8s.io/"
NVIDIA_GPU_DEVICE = "nvidia.com/gpu="


@dataclass(frozen=True)
class CdiDevices:
    key: str  # the annotation's key
    devices: str  # the NVIDIA GPUs it names, comma-separated: "all", indices or UUIDs
    path: Path


def cdi_gpu_devices(pod: PodSpec) -> CdiDevices | None:
    """The pod's first CDI annotation that names NVIDIA GPUs (``nvidia.com/gpu=all``, ``=0``)."""
    annotations = (pod.template_metadata or {}).get("annotations")
    if not isinstance(annotations, Mapping):
        return None
    for key, value in annotations.items():
        if isinstance(key, str) and key.startswith(CDI_ANNOTATION_PREFIX) and isinstance(value, str):
            names = [part.strip().removeprefix(NVIDIA_GPU_DEVICE) for part in value.split(",")
                     if part.strip().startswith(NVIDIA_GPU_DEVICE)]
            if names:
                return CdiDevices(key, ",".join(names), (*pod.path[:-1], "metadata", "annotations", key))
    return None


# Images and commands that only make sense with NVIDIA GPUs: what makes a pod mounting the
# host's whole /dev one that reaches GPUs, where a storage or network agent mounting /dev is
# not. Host set-up agents (GKE's toolkit installer: `/` mounted, `chroot /host … nvidia-smi`)
# work on the node, not on its GPUs: a command that enters the host is one.
_NVIDIA_IMAGES = ("nvcr.io/nvidia/", "nvidia/")
_NVIDIA_COMMANDS = ("nvidia-smi", "nvidia-ctk", "nvidia-container-cli")
_ENTERS_HOST = ("chroot ", "nsenter ")



def gpus_reached(pod: PodSpec, host_paths: Iterable[str]) -> str | None:
    """How a pod reaches GPUs by itself, whatever it requests, or None: a visible-devices
    variable (but in a pod given another vendor's accelerators, ``other_vendor_only``), a CDI
    annotation naming NVIDIA GPUs, an
    NVIDIA device node or driver file mounted from the host (``/dev/dri``'s DRM render nodes
    are none: ``hostpaths``), or the host's whole ``/dev`` in a pod that runs NVIDIA's images or
    tools."""
    for container in pod.containers():
        if (var := visible_devices(container)) and not other_vendor_only(pod):
            return f"sets {VISIBLE_DEVICES}={var.value}"
    if cdi := cdi_gpu_devices(pod):
        return f"names nvidia.com/gpu={cdi.devices} in its CDI annotation {cdi.key}"
    paths = [normalise_host_path(path) for path in host_paths]
    if host_task(pod, paths):
        return None
    for path in paths:
        if gpu_specific(path):
            return f"mounts host path {path}"
    if "/dev" in paths and any(runs_nvidia_software(c) for c in pod.containers()):
        return "mounts host path /dev and runs NVIDIA software"
    return None


# General-purpose OS images (Docker Hub's official images, Red Hat's UBI): they run no GPU code of
# their own.
_OS_IMAGES = frozenset({
    "ubuntu", "debian", "alpine", "busybox", "centos", "rockylinux", "almalinux", "fedora", "amazonlinux",
    "ubi", "ubi8", "ubi9", "ubi-minimal", "ubi8-minimal", "ubi9-minimal", "photon",
})


def host_task(pod: PodSpec, paths: list[str]) -> bool:
    """A pod of general-purpose OS images that mounts the host's root: it works on the host's
    files (copies the driver's files, writes a config, installs a package), not on its GPUs, so
    the driver folders it mounts beside the root reach no GPU it computes on."""
    return "/" in paths and all(
        image_repository(container.image).rsplit("/", 1)[-1] in _OS_IMAGES for container in pod.containers()
    )


# Extended resources of other vendors' device plugins: Intel's GPU plugin, AMD's, Habana's, AWS
# Neuron's, Google's TPUs.
OTHER_VENDOR_RESOURCES = ("gpu.intel.com/", "amd.com/", "habana.ai/", "aws.amazon.com/neuron", "google.com/tpu")


def other_vendor_only(pod: PodSpec) -> bool:
    """A pod given another vendor's accelerators (an Intel or AMD GPU, …) and no NVIDIA GPU, with
    no nvidia runtime class: ``NVIDIA_VISIBLE_DEVICES`` is read only by NVIDIA's runtime, so a
    variable left from an image or a chart reaches no GPU there (media servers run on Intel Arc
    nodes with it set)."""
    runtime_class = pod.spec.get("runtimeClassName")
    if isinstance(runtime_class, str) and "nvidia" in runtime_class:
        return False
    names = {amount.name for container in pod.containers() for amount in resource_amounts(container)}
    return any(name.startswith(OTHER_VENDOR_RESOURCES) for name in names) and not any(gpu_requests(c) for c in pod.containers())


def command_line(container: Container) -> str:
    """The container's ``command`` and ``args``, joined with spaces."""
    command = container.data.get("command"), container.data.get("args")
    return " ".join(str(part) for items in command if isinstance(items, list) for part in items)


def enters_host(line: str) -> bool:
    """Whether a command line runs its work inside the host (``chroot``, ``nsenter``): a node
    agent's set-up step, not the container's own use of a GPU."""
    return any(entry in line for entry in _ENTERS_HOST)


def runs_nvidia_software(container: Container) -> bool:
    """An NVIDIA image (whose CUDA base sets ``NVIDIA_VISIBLE_DEVICES=all``) or an NVIDIA tool
    in the command, not run inside the host (``chroot``, ``nsenter``)."""
    text = command_line(container)
    if enters_host(text):
        return False
    return image_repository(container.image).startswith(_NVIDIA_IMAGES) or any(t in text for t in _NVIDIA_COMMANDS)


# --- consumers -------------------------------------------------------------------------------


def requests_gpus(pod: PodSpec, claims: ClaimIndex | None = None) -> bool:
    """GPU resources > 0 or a GPU (or unresolvable) claim: GPUs the scheduler allocates.

    Without ``claims`` (the input set's claims and classes) every claim counts as unresolved.
    """
    if any(gpu_requests(c) for c in pod.containers()):
        return True
    pod_claims = pod.spec.get("resourceClaims")
    if isinstance(pod_claims, list) and pod_claims:
        index = claims or ClaimIndex({}, {}, {})
        return any(index.claim_is_gpu(pod.resource.ref.namespace, entry) for entry in pod_claims)
    return False


def uses_gpu(container: Container) -> bool:
    """Whether this container itself gets GPUs: resources, a claim, or visible devices."""
    resources_ = container.data.get("resources")
    has_claim = isinstance(resources_, Mapping) and bool(resources_.get("claims"))
    return bool(gpu_requests(container)) or has_claim or visible_devices(container) is not None


def outside_scheduler_note(pod: PodSpec) -> str:
    """What a message adds about a pod that reaches GPUs it never requested ('' otherwise)."""
    if not pod.gpus_outside_scheduler:
        return ""
    return f" (it {pod.gpus_outside_scheduler} without requesting any: the scheduler does not know about these GPUs)"


def is_gpu_workload(pod: PodSpec) -> bool:
    """Workload rules apply to GPU consumers that are not GPU system components."""
    return pod.gpu_consumer and not pod.system_component
