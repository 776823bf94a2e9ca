"""HAMi's device plugin (https://github.com/Project-HAMi/HAMi): on a node where its pod runs it
registers ``resourceCountName`` (``nvidia.com/gpu``) as GPUs × ``deviceSplitCount``, from the
``nvidia:`` section of the ``--config-file`` it mounts (the chart's ``hami-scheduler-device``
ConfigMap, ``device-config.yaml``; pkg/device/nvidia/device.go), a node's entry in the
``hami-device-plugin`` ConfigMap's ``nodeconfig`` overriding the split and memory scaling
(docs/config.md).

Memory and cores (``resourceMemoryName``, ``resourceCoreName``) are not node resources on a real
cluster: HAMi's scheduler extender tracks them from the plugin's registration annotation and
kube-scheduler ignores them. The harness has no extender, so the plugin's pod publishes them as
extended resources too (GPUs × memory × ``deviceMemoryScaling`` MiB, GPUs × 100 ×
``deviceCoreScaling``), which lets the stand-in scheduler profile ``hami-scheduler`` place pods.
HAMi's plugin hands devices over by its container's ``DEVICE_LIST_STRATEGY`` (the chart's
``devicePlugin.deviceListStrategy``, envvar by default; tests/cluster/toolkit.py): the NVIDIA runtime
must run the pod.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

from tests.cluster.agents.world import Published, World, command_line, containers, env_of, image_has

IMAGE = "projecthami/hami"


def is_plugin(pod: dict[str, Any]) -> bool:
    return image_has(pod, IMAGE, command="nvidia-device-plugin")


def _mounted(world: World, pod: dict[str, Any], path: str) -> str:
    """The one file mounted at ``path`` (a subPath mount, or a ConfigMap of one key)."""
    return next(iter(world.mounted(pod, path).values()), "")


def publish(world: World, out: Published) -> None:
    machine = world.node.machine
    for pod in world.running(is_plugin):
        if machine.gpu is None:
            continue
        nvidia = (yaml.safe_load(_mounted(world, pod, "/device-config.yaml")) or {}).get("nvidia", {})
        node_config: dict[str, Any] = {}
        text = _mounted(world, pod, "/config")
        if text:
            node_config = next((n for n in json.loads(text).get("nodeconfig", []) if n.get("name") == world.node.name), {})
        split = int(node_config.get("devicesplitcount", nvidia.get("deviceSplitCount", 10)))
        memory = float(node_config.get("devicememoryscaling", nvidia.get("deviceMemoryScaling", 1)))
        cores = float(nvidia.get("deviceCoreScaling", 1))
        out.resources |= {
            nvidia.get("resourceCountName", "nvidia.com/gpu"): machine.gpus * split,
            nvidia.get("resourceMemoryName", "nvidia.com/gpumem"): int(machine.gpus * machine.gpu.memoryMiB * memory),
            nvidia.get("resourceCoreName", "nvidia.com/gpucores"): int(machine.gpus * 100 * cores),
        }
        plugin = next(c for c in containers(pod) if "nvidia-device-plugin" in command_line(c))
        out.injection |= set(env_of(plugin).get("DEVICE_LIST_STRATEGY", "envvar").split(","))
