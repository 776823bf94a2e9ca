"""NVIDIA's device plugin, its config-manager and GPU Feature Discovery, as the standalone chart
(https://github.com/NVIDIA/k8s-device-plugin) and the GPU Operator (agents/operator.py) run them.

- config-manager picks the node's config: the value of the node label ``NODE_LABEL``
  (``nvidia.com/device-plugin.config``) among the files of the mounted ConfigMap, else
  ``DEFAULT_CONFIG``, else by ``FALLBACK_STRATEGIES`` (``named``: a config called ``default``;
  ``single``: the only one); a label naming no file fails the init container and so the pod
  (cmd/config-manager/main.go, run as upstream's own code by agents/nvidia_config.py).
- The plugin's configuration (flags from the environment, the chosen file, sharing) is built by
  NVIDIA's own ``api/config/v1`` through tests/cluster/agents/nvidia_config.py, errors included.
- Resources: ``nvidia.com/gpu`` per GPU, or per MIG device of the ``single`` strategy,
  ``nvidia.com/mig-<profile>`` per MIG device with ``mixed``; time-slicing and MPS multiply a
  resource by its replicas and rename it ``<name>.shared`` with ``renameByDefault`` or to its
  ``rename`` (README, "Shared Access to GPUs"; internal/rm/).
- The plugin needs NVML, which the driver's libraries give a container only through the NVIDIA
  runtime (RuntimeClass nvidia, or nvidia as containerd's default) on a node with the driver
  loaded, and only when the toolkit takes the container's own ``NVIDIA_VISIBLE_DEVICES=all``
  (CAP_SYS_ADMIN, or a toolkit that accepts the variable from unprivileged containers,
  tests/cluster/toolkit.py): otherwise it fails with ``failOnInitError`` (the default).
- GFD's labels (docs/gpu-feature-discovery/README.md, internal/lm/): written as a feature file
  for NFD's local source by the standalone chart, set directly by the operator's GFD.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from tests.cluster.agents import nvidia_config
from tests.cluster.agents.world import Published, World, command_line, containers, env_of, image_has
from tests.cluster.nodes import Machine

IMAGE = "k8s-device-plugin"
CONFIG_LABEL = "nvidia.com/device-plugin.config"
DEFAULT_DRIVER = "595.84"
CUDA_VERSION = "13.2"


def is_plugin(pod: dict[str, Any]) -> bool:
    return image_has(pod, IMAGE, command="nvidia-device-plugin")


def is_gfd(pod: dict[str, Any]) -> bool:
    return image_has(pod, IMAGE, command="gpu-feature-discovery")


def _container(pod: dict[str, Any], command: str) -> dict[str, Any] | None:
    return next((c for c in containers(pod) if command in command_line(c) and IMAGE in c.get("image", "")), None)


@functools.lru_cache(maxsize=256)
def _choice(label: str | None, configs: tuple[str, ...], env: str) -> tuple[str, str | None]:
    try:
        return nvidia_config.config_manager_choice(label, configs, json.loads(env)), None
    except nvidia_config.ConfigError as error:
        return "", str(error)


def choose(label: str | None, configs: dict[str, str], env: dict[str, str]) -> str:
    """config-manager's choice among ``configs`` for a node labelled ``label`` (upstream's own
    code, once per kubelet for each question); "" is the empty config."""
    name, error = _choice(label or None, tuple(sorted(configs)), json.dumps(env, sort_keys=True))
    if error is not None:
        raise nvidia_config.ConfigError(error)
    return name


def node_config(world: World, pod: dict[str, Any], env: dict[str, str], label_key: str = CONFIG_LABEL) -> dict[str, Any]:
    """The plugin's configuration on this node, as NVIDIA's code builds it."""
    manager = _container(pod, "config-manager")
    configs = world.mounted(pod, "/available-configs")
    text = None
    if manager is not None or configs:
        settings = env_of(manager) if manager else {}
        name = choose(world.labels.get(settings.get("NODE_LABEL", label_key)), configs, settings)
        text = configs[name] if name else ""
    return parsed(text, env)


def parsed(text: str | None, env: dict[str, str]) -> dict[str, Any]:
    """NVIDIA's parse of a config file and environment, each pair parsed once per kubelet."""
    result, error = _parsed(text, json.dumps(env, sort_keys=True))
    if error is not None:
        raise nvidia_config.ConfigError(error)
    return result


@functools.lru_cache(maxsize=256)
def _parsed(text: str | None, env: str) -> tuple[dict[str, Any], str | None]:
    try:
        return nvidia_config.device_plugin_config(text, json.loads(env)), None
    except nvidia_config.ConfigError as error:
        return {}, str(error)


def plugin_failure(world: World, pod: dict[str, Any], container: dict[str, Any], gpus_reached: bool) -> str | None:
    """Why a container of the device plugin's pod exits on this node (None: it runs); ``gpus_reached``:
    the NVIDIA runtime gives the container the node's GPUs."""
    command = command_line(container)
    try:
        if "config-manager" in command:
            node_config(world, pod, {})
        elif "nvidia-device-plugin" in command or "gpu-feature-discovery" in command:
            config = node_config(world, pod, env_of(container))
            if config["flags"].get("failOnInitError", True) and not (world.driver_loaded and gpus_reached):
                return ("failed to initialize NVML: ERROR_LIBRARY_NOT_FOUND (libnvidia-ml.so.1 is reached only through "
                        "the NVIDIA runtime, for a container whose GPUs the toolkit accepts, on a node with the driver "
                        "loaded)")
    except nvidia_config.ConfigError as error:
        return str(error)
    return None


def resources(config: dict[str, Any], machine: Machine, mig: dict[int, list[str]]) -> dict[str, int]:
    """What the plugin advertises for the node's GPUs under ``config``."""
    strategy = config["flags"].get("migStrategy") or "none"
    counts: dict[str, int] = {}
    for index in range(machine.gpus):
        instances = mig.get(index) or []
        if instances and strategy == "mixed":
            for profile in instances:
                counts[f"nvidia.com/mig-{profile}"] = counts.get(f"nvidia.com/mig-{profile}", 0) + 1
        elif instances and strategy == "single":
            counts["nvidia.com/gpu"] = counts.get("nvidia.com/gpu", 0) + len(instances)
        elif not instances:
            counts["nvidia.com/gpu"] = counts.get("nvidia.com/gpu", 0) + 1
    sharing = config.get("sharing") or {}
    shared = sharing.get("timeSlicing") or sharing.get("mps") or {}
    for entry in shared.get("resources") or []:
        name = entry["name"]
        if name in counts:
            total = counts.pop(name) * int(entry["replicas"])
            renamed = entry.get("rename") or (f"{name}.shared" if shared.get("renameByDefault") else name)
            counts[renamed] = total
    return counts


def sharing_of(config: dict[str, Any]) -> tuple[str, int, bool]:
    """(GFD's sharing-strategy, replicas, renameByDefault) of a config."""
    sharing = config.get("sharing") or {}
    for key, name in (("timeSlicing", "time-slicing"), ("mps", "mps")):
        entries = (sharing.get(key) or {}).get("resources") or []
        if entries:
            return name, int(entries[0]["replicas"]), bool(sharing[key].get("renameByDefault"))
    return "none", 1, False


def gfd_labels(config: dict[str, Any], machine: Machine, mig: dict[int, list[str]]) -> dict[str, str]:
    """GPU Feature Discovery's labels for the node (internal/lm/resource.go, nvml.go, sharing.go)."""
    model = machine.gpu
    if model is None or not machine.gpus:
        return {}
    major, minor = model.computeCapability.split(".")
    driver = (DEFAULT_DRIVER.split(".") + ["0"])[:3]
    strategy, replicas, renamed = sharing_of(config)
    product = model.product if strategy == "none" or renamed else f"{model.product}-SHARED"
    labels = {
        "nvidia.com/gpu.product": product, "nvidia.com/gpu.count": str(machine.gpus),
        "nvidia.com/gpu.memory": str(model.memoryMiB), "nvidia.com/gpu.family": model.architecture,
        "nvidia.com/gpu.compute.major": major, "nvidia.com/gpu.compute.minor": minor,
        "nvidia.com/gpu.machine": "gpustack-test-machine", "nvidia.com/gpu.mode": "compute",
        "nvidia.com/cuda.driver-version.major": driver[0], "nvidia.com/cuda.driver-version.minor": driver[1],
        "nvidia.com/cuda.driver-version.revision": driver[2], "nvidia.com/cuda.driver-version.full": DEFAULT_DRIVER,
        "nvidia.com/cuda.runtime-version.major": CUDA_VERSION.split(".")[0],
        "nvidia.com/cuda.runtime-version.minor": CUDA_VERSION.split(".")[1],
        "nvidia.com/cuda.runtime-version.full": CUDA_VERSION,
        "nvidia.com/mig.capable": str(model.mig_capable).lower(), "nvidia.com/mps.capable": "false",
        "nvidia.com/gpu.replicas": str(replicas), "nvidia.com/gpu.sharing-strategy": strategy,
    }
    mig_strategy = config["flags"].get("migStrategy") or "none"
    if model.mig_capable:
        labels["nvidia.com/mig.strategy"] = mig_strategy
    if mig_strategy == "mixed":
        for profile in sorted({p for instances in mig.values() for p in instances}):
            count = sum(instances.count(profile) for instances in mig.values())
            labels |= {f"nvidia.com/mig-{profile}.count": str(count),
                       f"nvidia.com/mig-{profile}.product": f"{model.product}-MIG-{profile}"}
    return labels


def feature_file(labels: dict[str, str]) -> str:
    return "".join(f"{key}={value}\n" for key, value in sorted(labels.items()))


def publish(world: World, out: Published) -> None:
    """The standalone chart's plugin and GFD pods running on the node."""
    for pod in world.running(is_plugin):
        container = _container(pod, "nvidia-device-plugin")
        config = node_config(world, pod, env_of(container))
        out.resources |= resources(config, world.node.machine, world.memory.mig)
        out.injection |= set(_strategies(config))
    for pod in world.running(is_gfd):
        config = node_config(world, pod, env_of(_container(pod, "gpu-feature-discovery")))
        world.memory.features_d["gfd"] = feature_file(gfd_labels(config, world.node.machine, world.memory.mig))


def _strategies(config: dict[str, Any]) -> list[str]:
    """How the plugin hands devices to containers: ``envvar`` (read by the NVIDIA runtime) or CDI."""
    value = config["flags"].get("plugin", {}).get("deviceListStrategy") or ["envvar"]
    values = [value] if isinstance(value, str) else list(value)
    return ["cdi" if v.startswith("cdi") else v for v in values]
