"""Which GPUs a container gets on a node: the device plugin's answer to the kubelet's Allocate, the
container's environment, and what the NVIDIA Container Toolkit makes of them with the config the
node has (its host steps' ``nvidia-ctk config``, tests/cluster/host.py, or the GPU Operator's
toolkit env, agents/operator.py), never the spec.

- Allocate (the device plugin's ``getAllocateResponse``,
  https://github.com/NVIDIA/k8s-device-plugin/blob/v0.19.3/internal/plugin/server.go, HAMi's fork the
  same): ``envvar`` sets ``NVIDIA_VISIBLE_DEVICES`` to the allocated ids; ``volume-mounts`` sets it to
  ``/var/run/nvidia-container-devices`` and mounts the host's ``/dev/null`` at
  ``/var/run/nvidia-container-devices/<id>`` per device; CDI (the GPU Operator's
  ``cdi-annotations,cdi-cri``) names the devices in ``cdi.k8s.io/`` annotations and the CRI's
  ``CDIDevices``, which containerd injects itself, whatever the runtime. The harness does not track
  which GPUs are taken: a container asking for n devices is given the node's first n.
- Environment: the image's, then the plugin's variables, then the container's own ``env``, the
  later value of a name winning (kubelet ``GenerateRunContainerOptions``, pkg/kubelet/kubelet_pods.go;
  containerd's ``oci.WithEnv``). The image's is known for the device plugin's image only
  (``IMAGE_ENV``), whose GFD container sets no variable of its own.
- The NVIDIA runtime (RuntimeClass nvidia, or nvidia as the default) takes, in order, the CDI
  annotations, then the mounts if ``accept-nvidia-visible-devices-as-volume-mounts``, then
  ``NVIDIA_VISIBLE_DEVICES`` if the container has CAP_SYS_ADMIN (privileged, or the capability
  added) or ``accept-nvidia-visible-devices-envvar-when-unprivileged`` (``CUDA.VisibleDevices``,
  https://github.com/NVIDIA/nvidia-container-toolkit/blob/v1.20.0/internal/config/image/cuda_image.go;
  defaults true and false, api/config/v1/config.go). ``all`` is every GPU of the node; ``void``,
  ``none`` and names that are no device of the node select nothing.
- ``nvidia-smi -L`` writing to ``/dev/termination-log``: the listing of the GPUs the container sees,
  which the kubelet reports as the terminated container's message (``terminationMessagePath``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tests.cluster.agents.world import command_line, env_of

if TYPE_CHECKING:
    from tests.cluster.refusals import Node

ENVVAR_KEY = "accept-nvidia-visible-devices-envvar-when-unprivileged"
MOUNTS_KEY = "accept-nvidia-visible-devices-as-volume-mounts"
DEFAULTS = {ENVVAR_KEY: "true", MOUNTS_KEY: "false"}
VARIABLE = "NVIDIA_VISIBLE_DEVICES"
MOUNT_ROOT = "/var/run/nvidia-container-devices"
TERMINATION_LOG = "/dev/termination-log"
# Image config the harness knows: NVIDIA's device plugin image (plugin, GFD, config-manager, MPS
# daemon), https://github.com/NVIDIA/k8s-device-plugin/blob/v0.19.3/deployments/container/Dockerfile.
IMAGE_ENV = {"k8s-device-plugin": {VARIABLE: "all"}}
# Extended resources that are devices of the plugins (HAMi's memory and cores are not).
NOT_DEVICES = ("nvidia.com/gpumem", "nvidia.com/gpucores")


@dataclass
class Allocation:
    """The device plugin's answer for one container."""

    env: dict[str, str] = field(default_factory=dict)
    mounts: list[str] = field(default_factory=list)  # device ids mounted under MOUNT_ROOT
    cdi: list[str] = field(default_factory=list)  # device ids in annotations and CDIDevices


def config(node: Node) -> dict[str, bool]:
    """The toolkit's settings on the node: its defaults, the host's config.toml, the operator's env."""
    values = {**DEFAULTS, **node.fake.host.toolkit, **node.published.toolkit}
    return {key: values[key].lower() == "true" for key in DEFAULTS}


def gpu_ids(node: Node) -> list[str]:
    return [f"GPU-{node.fake.name}-{index}" for index in range(node.fake.machine.gpus)]


def requested(container: dict[str, Any]) -> int:
    limits = {**(container.get("resources", {}).get("requests") or {}), **(container.get("resources", {}).get("limits") or {})}
    return sum(int(v) for k, v in limits.items() if k.startswith("nvidia.com/") and k not in NOT_DEVICES)


def allocate(container: dict[str, Any], node: Node) -> Allocation:
    ids = gpu_ids(node)[:requested(container)]
    strategies = node.published.injection
    result = Allocation()
    if not ids:
        return result
    if "cdi" in strategies:
        result.cdi = list(ids)
    if "envvar" in strategies:
        result.env[VARIABLE] = ",".join(ids)
    if "volume-mounts" in strategies:
        result.env[VARIABLE] = MOUNT_ROOT
        result.mounts = list(ids)
    return result


def privileged(container: dict[str, Any]) -> bool:
    """CAP_SYS_ADMIN in the bounding set, which the toolkit takes for privileged (image/privileged.go)."""
    context = container.get("securityContext") or {}
    return bool(context.get("privileged")) or "SYS_ADMIN" in ((context.get("capabilities") or {}).get("add") or [])


def visible(pod: dict[str, Any], container: dict[str, Any], node: Node) -> list[str]:
    """The GPU ids the container sees."""
    given = allocate(container, node)
    seen = list(given.cdi)  # containerd's own CDI injection
    if node.handler(pod) != "nvidia":
        return seen
    settings = config(node)
    if given.cdi:
        chosen = given.cdi
    elif given.mounts and settings[MOUNTS_KEY]:
        chosen = given.mounts
    elif privileged(container) or settings[ENVVAR_KEY]:
        image = next((env for name, env in IMAGE_ENV.items() if name in container.get("image", "")), {})
        chosen = _named({**image, **given.env, **env_of(container)}.get(VARIABLE, ""), node)
    else:
        chosen = []
    return seen + [g for g in chosen if g not in seen]


def _named(value: str, node: Node) -> list[str]:
    """The node's GPUs a value of the variable names: ``all``, or ids and indices (others name none)."""
    ids = gpu_ids(node)
    if value.strip() == "all":
        return ids
    chosen = []
    for name in (n.strip() for n in value.split(",")):
        if name in ids:
            chosen.append(name)
        elif name.isdigit() and int(name) < len(ids):
            chosen.append(ids[int(name)])
    return chosen


def listing(pod: dict[str, Any], container: dict[str, Any], node: Node) -> str | None:
    """What ``nvidia-smi -L > /dev/termination-log`` leaves there (None: not that command)."""
    command = command_line(container)
    if "nvidia-smi -L" not in command or TERMINATION_LOG not in command:
        return None
    gpus = visible(pod, container, node)
    product = node.fake.machine.gpu.product if node.fake.machine.gpu else ""
    return "\n".join(f"GPU {index}: {product} (UUID: {gpu})" for index, gpu in enumerate(gpus))
