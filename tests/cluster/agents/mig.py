"""NVIDIA's MIG manager (k8s-mig-manager, https://github.com/NVIDIA/mig-parted): it applies the
mig-config that the node label ``nvidia.com/mig.config`` names from its config file, parsed by
mig-parted's own types (tests/cluster/agents/nvidia_config.py), and reports the outcome in
``nvidia.com/mig.config.state`` (``success`` or ``failed``;
deployments/gpu-operator/reconfigure-mig.sh). A profile the GPU cannot make fails the apply:
the GPU's MIG profiles are hardware facts (``specs/gpus.yaml``, from NVIDIA's MIG user guide).
"""

from __future__ import annotations

import functools
import json
from typing import Any

from tests.cluster.agents import nvidia_config
from tests.cluster.agents.world import World

# The all-disabled entry of the GPU Operator's default-mig-parted-config, which it uses when
# migManager.config.name is empty (https://github.com/NVIDIA/gpu-operator, assets/state-mig-manager/).
ALL_DISABLED = "version: v1\nmig-configs:\n  all-disabled:\n  - devices: all\n    mig-enabled: false\n"
CONFIG_LABEL = "nvidia.com/mig.config"
STATE_LABEL = "nvidia.com/mig.config.state"


def _devices(entry: dict[str, Any], gpus: int) -> list[int]:
    devices = entry.get("devices", "all")
    return list(range(gpus)) if devices == "all" else [int(d) for d in devices]


def apply(world: World, config_text: str, selected: str) -> str:
    """Apply the mig-config ``selected`` to the node's GPUs; the state label's value."""
    machine = world.node.machine
    if machine.gpu is None or not machine.gpu.mig_capable:
        return "failed"
    entries = _selected(config_text, selected)
    if entries is None:
        return "failed"
    layout: dict[int, list[str]] = {}
    for entry in entries:
        for index in _devices(entry, machine.gpus):
            if not entry.get("mig-enabled"):
                layout[index] = []
                continue
            profiles = [p for p, n in (entry.get("mig-devices") or {}).items() for _ in range(int(n))]
            if any(p not in machine.gpu.migProfiles for p in profiles):
                return "failed"
            layout[index] = profiles
    world.memory.mig = {i: p for i, p in layout.items() if p}
    return "success"


@functools.lru_cache(maxsize=64)
def _parsed(config_text: str, selected: str) -> str | None:
    try:
        return json.dumps(nvidia_config.mig_parted_config(config_text, selected))
    except nvidia_config.ConfigError:
        return None


def _selected(config_text: str, selected: str) -> list[dict[str, Any]] | None:
    """mig-parted's parse of the selected mig-config, once per kubelet (None: it fails)."""
    text = _parsed(config_text, selected)
    return None if text is None else json.loads(text)
