"""GS069: a mig-parted config (the MIG manager's layouts) that mig-parted refuses, or a layout
that asks a GPU for a MIG profile it does not offer.

mig-parted parses its config file strictly and refuses all of it on one fault
(``facts/migparted``); the GPU Operator's MIG manager then applies no layout and sets the node's
``nvidia.com/mig.config.state`` to ``failed``, so the MIG devices the workloads request never
appear. Common faults: camelCase keys (``migEnabled``, ``migDevices``), a missing
``version: v1``, ``mig-devices`` under ``mig-enabled: false``.

A layout whose entry names its GPUs by ``device-filter`` (PCI device ids, ``0x233010DE``) is
checked against the profiles those GPUs offer (the catalogue, ``specs/gpus.yaml``, from NVIDIA's
MIG user guide): a B200 has ``1g.23gb``, not ``1g.25gb``; mig-parted cannot create the instance
and the layout fails. Entries without a filter, or with ids the catalogue does not hold, are not
judged for profiles.

Read in ConfigMaps' values and in files that hold a mig-parted config of their own.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from gpustack.lint.context import LintContext
from gpustack.lint.facts import migparted
from gpustack.lint.model import Hit, Path, Resource
from gpustack.lint.registry import Rule
from gpustack.lint.releases.helmvalues import yaml_mapping

_COMPUTE_INSTANCE = re.compile(r"^\d+c\.")
FIX = ("Write the config as mig-parted reads it (https://github.com/NVIDIA/mig-parted#the-configuration-file): "
       "`version: v1`, `mig-configs`, and entries of `devices`, `mig-enabled`, `mig-devices` (and `device-filter`).")


def check(resource: Resource, ctx: LintContext) -> Iterator[Hit]:
    if resource.kind is None:
        if migparted.is_config(resource.data):
            yield from _judged(resource, (), resource.data, "the mig-parted config")
    elif resource.kind == "ConfigMap":
        data = resource.get(("data",))
        for key, text in data.items() if isinstance(data, Mapping) else ():
            if isinstance(text, str) and migparted.KEY in text:
                config = yaml_mapping(text)
                if migparted.is_config(config):
                    yield from _judged(resource, ("data", key), config, f"{resource.ref} ({key})")


def _judged(resource: Resource, at: Path, config: Mapping[str, Any], what: str) -> Iterator[Hit]:
    refused = list(migparted.problems(config))
    for problem in refused:
        yield Hit(
            resource,
            (*at, *problem.path),
            f"{what} is refused by mig-parted ({problem.says}): the MIG manager applies none of its layouts and "
            "the node's nvidia.com/mig.config.state turns failed",
            fix=FIX,
        )
    if not refused:
        yield from _absent_profiles(resource, at, config)


def _absent_profiles(resource: Resource, at: Path, config: Mapping[str, Any]) -> Iterator[Hit]:
    for name, entries in config[migparted.KEY].items():
        for index, entry in enumerate(entries):
            gpus = migparted.filtered_gpus(entry)
            for profile in (entry.get("mig-devices") or {}) if gpus else ():
                instance = _COMPUTE_INSTANCE.sub("", str(profile)).split("+")[0].split("-")[0]
                lacking = [gpu for gpu in gpus if instance not in gpu.profiles]
                if lacking:
                    gpu = lacking[0]
                    offered = ", ".join(sorted(gpu.profiles)) or "no MIG profile"
                    yield Hit(
                        resource,
                        (*at, migparted.KEY, name, index, "mig-devices", profile),
                        f"layout {name} asks its {gpu.name} GPUs (device-filter) for {profile}, which they do not "
                        f"offer ({offered}): mig-parted cannot create it, and the MIG manager fails the layout",
                        fix=f"Use a profile the {gpu.name} offers: {offered}.",
                    )


RULE = Rule("GS069", "object", check, frozenset({"ConfigMap", None}))
