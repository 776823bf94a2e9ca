"""GPU facts the rules share: who consumes GPUs, which pods are GPU system components.

A *GPU consumer* (DESIGN §10) is a pod spec that
- requests ``nvidia.com/gpu`` (or ``.shared``), ``nvidia.com/mig-*``, ``nvidia.com/gpumem*``
  or ``nvidia.com/gpucores`` with a value > 0 (``nvidia.com/gpu: 0`` is no GPU pod);
- has a resource claim (template) that resolves to a GPU DeviceClass, or cannot be resolved;
- or reaches GPUs without requesting them (*GPUs outside the scheduler*): it sets
  ``NVIDIA_VISIBLE_DEVICES`` to something other than ``void``, ``none`` or empty, or mounts
  GPU device nodes or driver files from the host (``gpus_outside_scheduler``). The scheduler
  does not count such a pod's GPUs, and it sees every GPU of its node.

A *GPU system component* is recognised by image repository from
``data/system-components.yaml``, or by the GPU Operator's image placeholders; never by name.
"""

from __future__ import annotations

import fnmatch
import math
import posixpath
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import cache, lru_cache
from typing import Any

from gpustack.lint.model import Container, Path, PodSpec, Resource
from gpustack.shipped import lint_data

# --- resource names and quantities -------------------------------------------------------

NVIDIA_PREFIX = "nvidia.com/"
HAMI_MEMORY = ("nvidia.com/gpumem", "nvidia.com/gpumem-percentage")
HAMI_CORES = "nvidia.com/gpucores"

_GPU_RESOURCE = re.compile(r"^nvidia\.com/(gpu|gpu\.shared|mig-.+|gpumem.*|gpucores)$")


def is_gpu_resource(name: str) -> bool:
    """An extended resource that hands out (part of) a GPU (DESIGN §10)."""
    return bool(_GPU_RESOURCE.match(name))


# Other vendors' GPUs, which their own device plugins hand out: in a pod that asks for one, a
# /dev/dri mount is that vendor's render nodes, not a way to NVIDIA's GPUs around the
# scheduler (CUDA needs /dev/nvidia*). The NVIDIA rules do not otherwise look at them.
DRI = "/dev/dri"
_OTHER_GPU_RESOURCE = re.compile(r"^(gpu\.intel\.com/.+|amd\.com/gpu|amd\.com/gpu-.+)$")


def requests_other_gpus(pod: PodSpec) -> bool:
    """Whether a container asks for another vendor's GPUs (Intel's, AMD's)."""
    return any(
        _OTHER_GPU_RESOURCE.match(amount.name) and (amount.quantity is None or amount.quantity > 0)
        for container in pod.containers()
        for amount in resource_amounts(container)
    )


def is_shared_gpu_resource(name: str) -> bool:
    """A share of a GPU: HAMi memory/cores, or a time-sliced/MPS ``*.shared`` resource."""
    return name in HAMI_MEMORY or name == HAMI_CORES or (is_gpu_resource(name) and name.endswith(".shared"))


# Exponents are bounded: 1e999999999 must not cost a billion-digit number.
_QUANTITY = re.compile(
    r"^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]{1,2})?$"
)
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "k": 10**3,
            "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18}


def parse_quantity(value: Any) -> Fraction | None:
    """A Kubernetes quantity (``1``, ``"500m"``, ``"4Gi"``, ``1.5``) exactly, or None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (str, int, float)):
        return _parse_scalar_quantity(value)  # quantities repeat: "1", 8000, "500m"
    return _parse_quantity(value)


@lru_cache(maxsize=4096, typed=True)
def _parse_scalar_quantity(value: str | int | float) -> Fraction | None:
    return _parse_quantity(value)


def _parse_quantity(value: Any) -> Fraction | None:
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        return Fraction(str(value)) if math.isfinite(value) else None
    match = _QUANTITY.match(str(value).strip())
    if not match:
        return None
    number, suffix = Fraction(match.group(1)), match.group(2)
    if not suffix:
        return number
    if suffix in _BINARY:
        return number * _BINARY[suffix]
    if suffix in _DECIMAL:
        return number * _DECIMAL[suffix]
    return number * Fraction(10) ** int(suffix[1:])


@dataclass(frozen=True)
class ResourceAmount:
    """One ``resources.requests``/``limits`` entry of a container."""

    section: str  # "requests" | "limits"
    name: str
    raw: Any
    quantity: Fraction | None
    path: Path


def resource_amounts(container: Container) -> Iterator[ResourceAmount]:
    amounts = container.memo.get("resource_amounts")
    if amounts is None:
        amounts = container.memo["resource_amounts"] = tuple(_resource_amounts(container))
    return iter(amounts)


def _resource_amounts(container: Container) -> Iterator[ResourceAmount]:
    resources_ = container.data.get("resources")
    if not isinstance(resources_, Mapping):
        return
    for section in ("requests", "limits"):
        entries = resources_.get(section)
        if not isinstance(entries, Mapping):
            continue
        for name, raw in entries.items():
            path = (*container.path, "resources", section, name)
            yield ResourceAmount(section, str(name), raw, parse_quantity(raw), path)


def gpu_amounts(container: Container) -> dict[str, Fraction]:
    """GPU resources the container gets, > 0 only (limits win; requests alone count)."""
    return {name: value for name, value in gpu_requests(container).items() if value is not None}


def gpu_requests(container: Container) -> dict[str, Fraction | None]:
    """GPU resources the container asks for: amounts > 0, and None for a template placeholder.

    An unrendered ``${GPUS}`` or ``{{ .Values.gpus }}`` still asks for GPUs; zero does not.
    """
    requests = container.memo.get("gpu_requests")
    if requests is None:
        requests = container.memo["gpu_requests"] = _gpu_requests(container)
    return dict(requests)


def _gpu_requests(container: Container) -> dict[str, Fraction | None]:
    found: dict[str, Fraction | None] = {}
    for amount in resource_amounts(container):
        if not is_gpu_resource(amount.name):
            continue
        if amount.quantity is None and not is_template_placeholder(amount.raw):
            continue
        if amount.section == "limits" or amount.name not in found:
            found[amount.name] = amount.quantity
    return {name: value for name, value in found.items() if value is None or value > 0}


_PLACEHOLDER = re.compile(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\{\{.*\}\}|<[^<>]+>")


def is_template_placeholder(value: Any) -> bool:
    """``${VAR}``, ``$VAR``, ``{{ … }}``, ``<your-token>``: filled in before the manifest is applied."""
    return isinstance(value, str) and bool(_PLACEHOLDER.search(value))


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
    found = container.memo.get("env_vars")
    if found is None:
        found = container.memo["env_vars"] = tuple(_env_vars(container))
    return iter(found)


def _env_vars(container: Container) -> Iterator[EnvVar]:
    env = container.data.get("env")
    if not isinstance(env, list):
        return
    for index, item in enumerate(env):
        if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
            continue
        value = item.get("value")
        literal = None if value is None else value if isinstance(value, str) else _scalar_text(value)
        yield EnvVar(item["name"], literal, (*container.path, "env", index), "valueFrom" in item)


def _scalar_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def visible_devices(container: Container) -> EnvVar | None:
    """The container's NVIDIA_VISIBLE_DEVICES when it exposes GPUs (not void/none/empty)."""
    for var in env_vars(container):
        if var.name == VISIBLE_DEVICES and var.value is not None and var.value.strip() not in _HIDDEN:
            return var
    return None


# --- DRA claims ------------------------------------------------------------------------------

# DeviceClasses of the GPU DRA drivers (reference §6): the charts create them, so a set
# rarely holds them. The IMEX channel classes of NVIDIA's driver and GKE's NICs are no GPUs.
GPU_DEVICE_CLASSES = frozenset(
    {"gpu.nvidia.com", "mig.nvidia.com", "vfio.gpu.nvidia.com", "hami-core-gpu.project-hami.io"}
)
NON_GPU_DEVICE_CLASSES = frozenset(
    {
        "compute-domain-daemon.nvidia.com",
        "compute-domain-default-channel.nvidia.com",
        "netdev.google.com",  # GKE's network devices (DRANET)
    }
)
GPU_DRA_DRIVERS = ("gpu.nvidia.com", "hami-core-gpu.project-hami.io")


@dataclass(frozen=True)
class ClaimIndex:
    """ResourceClaims, ResourceClaimTemplates and DeviceClasses of the input set."""

    claims: Mapping[tuple[str | None, str], frozenset[str | None]]  # (ns, name) -> device classes
    templates: Mapping[tuple[str | None, str], frozenset[str | None]]
    classes: Mapping[str, bool]  # DeviceClass name -> hands out GPUs

    @classmethod
    def from_resources(cls, resources: Iterable[Resource]) -> ClaimIndex:
        claims: dict[tuple[str | None, str], frozenset[str | None]] = {}
        templates: dict[tuple[str | None, str], frozenset[str | None]] = {}
        classes: dict[str, bool] = {}
        for resource in resources:
            if resource.kind not in ("ResourceClaim", "ResourceClaimTemplate", "DeviceClass"):
                continue  # before ``ref``, which most objects of a large set never need
            ref = resource.ref
            if not ref.name or not (ref.api_version or "").startswith("resource.k8s.io/"):
                continue
            if ref.kind == "ResourceClaim":
                claims[(ref.namespace, ref.name)] = _device_classes(resource.get(("spec",)))
            elif ref.kind == "ResourceClaimTemplate":
                templates[(ref.namespace, ref.name)] = _device_classes(resource.get(("spec", "spec")))
            elif ref.kind == "DeviceClass":
                classes[ref.name] = _is_gpu_device_class(ref.name, resource.get(("spec",)))
        return cls(claims, templates, classes)

    def claim_is_gpu(self, namespace: str | None, entry: Any) -> bool:
        """Whether a pod's ``resourceClaims`` entry hands out a GPU, or cannot be resolved."""
        if not isinstance(entry, Mapping):
            return True
        source = entry.get("source") if isinstance(entry.get("source"), Mapping) else entry
        for key, table in (("resourceClaimName", self.claims), ("resourceClaimTemplateName", self.templates)):
            name = source.get(key)
            if isinstance(name, str):
                found = _lookup(table, namespace, name)
                return found is None or any(self._class_is_gpu(c) for c in found)
        return True

    def _class_is_gpu(self, name: str | None) -> bool:
        if name is None or name in GPU_DEVICE_CLASSES:
            return True
        if name in NON_GPU_DEVICE_CLASSES:
            return False
        return self.classes.get(name, True)  # unknown class: cannot be resolved


def _lookup(
    table: Mapping[tuple[str | None, str], frozenset[str | None]], namespace: str | None, name: str
) -> frozenset[str | None] | None:
    if (namespace, name) in table:
        return table[(namespace, name)]
    # One side without a namespace (a bare manifest applied with -n): match by name.
    for (other_ns, other_name), found in table.items():
        if other_name == name and (namespace is None or other_ns is None):
            return found
    return None


def _device_classes(claim_spec: Any) -> frozenset[str | None]:
    """Device class names a claim spec asks for; None stands for a request without one."""
    devices = claim_spec.get("devices") if isinstance(claim_spec, Mapping) else None
    requests = devices.get("requests") if isinstance(devices, Mapping) else None
    if not isinstance(requests, list) or not requests:
        return frozenset({None})
    names: set[str | None] = set()
    for request in requests:
        if not isinstance(request, Mapping):
            continue
        exactly = request.get("exactly")
        alternatives = request.get("firstAvailable")
        if isinstance(exactly, Mapping):  # resource.k8s.io/v1
            names.add(_text(exactly.get("deviceClassName")))
        elif isinstance(alternatives, list):
            names.update(_text(a.get("deviceClassName")) for a in alternatives if isinstance(a, Mapping))
        else:  # v1beta1 and earlier
            names.add(_text(request.get("deviceClassName")))
    return frozenset(names or {None})


def _is_gpu_device_class(name: str, spec: Any) -> bool:
    if name in GPU_DEVICE_CLASSES:
        return True
    spec = spec if isinstance(spec, Mapping) else {}
    extended = spec.get("extendedResourceName")
    if isinstance(extended, str) and is_gpu_resource(extended):
        return True
    text = repr(spec.get("selectors"))
    return any(f"'{driver}'" in text or f'"{driver}"' in text for driver in GPU_DRA_DRIVERS)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


# --- GPUs reached around the scheduler ---------------------------------------------------

# Host paths that hold GPU device nodes or driver files (normalised: /var/run is /run). GKE's
# driver folder /home/kubernetes/bin/nvidia is not among them: GKE has no nvidia runtime, and
# its documented GPUDirect sidecars mount the driver's libraries (no device nodes) from there.
GPU_HOST_PATHS = (
    "/dev/nvidia*",
    "/dev/dri",
    "/usr/bin/nvidia-*",
    "/usr/lib/x86_64-linux-gnu/libnvidia*",
    "/usr/lib/x86_64-linux-gnu/libcuda*",
    "/usr/lib/aarch64-linux-gnu/libnvidia*",
    "/usr/lib/aarch64-linux-gnu/libcuda*",
    "/usr/lib64/libnvidia*",
    "/usr/lib64/libcuda*",
    "/usr/local/nvidia",
    "/run/nvidia",  # GPU Operator driver root, MPS, validations
    "/proc/driver/nvidia",
)
DEVICE_PLUGINS = "/var/lib/kubelet/device-plugins"  # any device plugin needs it, not only GPU ones
# Images and commands that only make sense with NVIDIA GPUs: what makes a pod mounting the
# host's whole /dev one that reaches GPUs, where a storage or network agent mounting /dev is
# not. Host set-up agents (GKE's toolkit installer: `/` mounted, `chroot /host … nvidia-smi`)
# work on the node, not on its GPUs: a command that enters the host is one.
_NVIDIA_IMAGES = ("nvcr.io/nvidia/", "nvidia/")
_NVIDIA_COMMANDS = ("nvidia-smi", "nvidia-ctk", "nvidia-container-cli")
_ENTERS_HOST = ("chroot ", "nsenter ")


def _under(path: str, pattern: str) -> bool:
    return fnmatch.fnmatchcase(path, pattern) or fnmatch.fnmatchcase(path, pattern + "/*")


def gpu_specific(path: str) -> bool:
    """At or below a GPU device node or driver folder."""
    return any(_under(path, pattern) for pattern in GPU_HOST_PATHS)


def exposes_gpus(path: str) -> bool:
    """GPU-specific, the device plugins' folder, or a folder above either (``/``, ``/dev``)."""
    if gpu_specific(path) or _under(path, DEVICE_PLUGINS):
        return True
    above = "/" if path == "/" else path + "/"
    return any(p.split("*", 1)[0].startswith(above) for p in (*GPU_HOST_PATHS, DEVICE_PLUGINS))


def gpus_reached(pod: PodSpec, host_paths: Iterable[str]) -> str | None:
    """How a pod reaches GPUs by itself, whatever it requests, or None: a visible-devices
    variable, a GPU device node or driver file mounted from the host (``/dev/dri`` not in a pod
    that asks for Intel's or AMD's GPUs), or the host's whole ``/dev`` in a pod that runs
    NVIDIA's images or tools."""
    for container in pod.containers():
        if var := visible_devices(container):
            return f"sets {VISIBLE_DEVICES}={var.value}"
    paths = [normalise_host_path(path) for path in host_paths]
    other_vendor = any(_under(path, DRI) for path in paths) and requests_other_gpus(pod)
    for path in paths:
        if other_vendor and _under(path, DRI):
            continue  # that vendor's render nodes, which its device plugin hands out
        if gpu_specific(path):
            return f"mounts host path {path}"
    if "/dev" in paths and any(_runs_nvidia_software(c) for c in pod.containers()):
        return "mounts host path /dev and runs NVIDIA software"
    return None


def _runs_nvidia_software(container: Container) -> bool:
    command = container.data.get("command"), container.data.get("args")
    text = " ".join(str(part) for items in command if isinstance(items, list) for part in items)
    if any(entry in text for entry in _ENTERS_HOST):
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


# --- system components -----------------------------------------------------------------------


@dataclass(frozen=True)
class SystemComponent:
    """A kind of GPU system component and what its upstream manifests need."""

    name: str
    summary: str
    images: tuple[str, ...]
    runtime_class: bool
    host_paths: tuple[str, ...]
    read_only_host_paths: tuple[str, ...]

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
        )
        for item in data["components"]
    )
    placeholders = data["placeholders"]
    return _Catalogue(components, frozenset(placeholders["images"]), placeholders["component"])


def system_components() -> tuple[SystemComponent, ...]:
    return _catalogue().components


@lru_cache(maxsize=4096)  # a set runs the same images in many pods
def image_repository(image: str) -> str:
    """``nvcr.io/nvidia/k8s-device-plugin:v0.20.0@sha256:…`` -> ``nvcr.io/nvidia/k8s-device-plugin``."""
    name = image.strip().split("@", 1)[0]
    last_slash = name.rfind("/")
    colon = name.rfind(":")
    if colon > last_slash:
        name = name[:colon]
    for prefix in ("docker.io/library/", "docker.io/", "index.docker.io/", "registry.hub.docker.com/"):
        if name.startswith(prefix):
            return name[len(prefix):]
    return name


def image_tag(image: str) -> str | None:
    """The tag of an image reference, or None when it has none."""
    name = image.strip().split("@", 1)[0]
    colon = name.rfind(":")
    return name[colon + 1:] if colon > name.rfind("/") else None


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


def _matches(repository: str, pattern: str) -> bool:
    """The repository, or a mirror of it: ``harbor.local/nvidia/k8s-device-plugin``."""
    first, _, rest = pattern.partition("/")
    path = rest if rest and ("." in first or ":" in first) else pattern  # without the registry
    if _WILDCARDS.isdisjoint(pattern):  # most are: fnmatch would compile two regexes for each
        return repository == pattern or repository.endswith("/" + path)
    return fnmatch.fnmatchcase(repository, pattern) or fnmatch.fnmatchcase(repository, "*/" + path)


def pod_components(pod: PodSpec) -> tuple[SystemComponent, ...]:
    """The system components whose images run in a pod spec, in catalogue order."""
    found = {c for container in pod.containers() if (c := component_for_image(container.image))}
    return tuple(c for c in system_components() if c in found)


def normalise_host_path(path: str) -> str:
    """``/var/run/cdi/`` -> ``/run/cdi`` (/var/run is a link to /run on every distribution)."""
    path = posixpath.normpath("/" + path.strip())
    path = "/" + path.lstrip("/")  # normpath keeps a leading "//"
    if path == "/var/run" or path.startswith("/var/run/"):
        path = path[len("/var"):]
    return path
