"""NVSwitch boards and NVIDIA Fabric Manager: which GPU products sit on them, and whether a set
runs Fabric Manager for them.

The products are the catalogue's (``specs/gpus.yaml``, ``nvswitchBoardGpus``), read as plain
YAML: the catalogue's pydantic model stays off lint's path. Fabric Manager runs as a host
service (nothing in a manifest shows it), inside the GPU Operator's driver container (which
starts it where it finds NVSwitches: https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/1.8/release-notes.html),
or in a container of the user's whose image or command names it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from typing import NamedTuple

from gpustack.lint.context import LintContext
from gpustack.lint.facts import operands
from gpustack.lint.facts.podspec import command_parts
from gpustack.shipped import data_dir

_FABRIC_MANAGER = re.compile(r"fabric-?manager", re.I)  # nv-fabricmanager, nvidia-fabricmanager, fabric-manager


@cache
def board_gpus() -> Mapping[str, int]:
    """GFD's ``nvidia.com/gpu.product`` of each NVSwitch part → GPUs of its NVSwitch board."""
    import yaml

    text = (data_dir("specs") / "gpus.yaml").read_text(encoding="utf-8")
    entries = yaml.load(text, Loader=yaml.CSafeLoader)["gpus"]
    return {e["product"]: e["nvswitchBoardGpus"] for e in entries.values() if e.get("nvswitchBoardGpus")}


class Evidence(NamedTuple):
    """Where the set runs Fabric Manager: a container of its own, the operator's driver container
    (plain data: it goes into the lint cache's keys)."""

    container: bool
    operator_driver: bool


def evidence(ctx: LintContext) -> Evidence:
    container = any(
        _FABRIC_MANAGER.search(str(c.data.get("image", ""))) or any(_FABRIC_MANAGER.search(s) for _, s in command_parts(c))
        for pod in ctx.pod_specs
        for c in pod.containers()
    )
    return Evidence(container, _operator_driver(ctx))


def _operator_driver(ctx: LintContext) -> bool:
    return any(operands.operator_deploys(ctx, "driver"))
