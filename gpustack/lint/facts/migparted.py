"""nvidia-mig-parted's config files (the MIG manager's layouts), read as mig-parted reads them.

The GPU Operator's MIG manager applies the layout named by a node's ``nvidia.com/mig.config``
label from a mig-parted config (a ConfigMap, ``migManager.config``). mig-parted parses the whole
file strictly (``api/spec/v1/spec.go``, https://github.com/NVIDIA/mig-parted/blob/main/api/spec/v1/spec.go):
``version: v1`` is required, ``mig-configs`` is the only other top-level key, every layout holds
at least one entry, and each entry has ``devices`` (``all`` or GPU indices) and ``mig-enabled``,
``mig-devices`` exactly when MIG is enabled, ``device-filter`` optionally, and no other key. A
profile must read as ``[Nc.]Ng.Ngb[+attributes]`` with a count of zero or more, one above zero
(go-nvlib's ``parseMigProfile``). One fault and the file is refused: the MIG manager applies no
layout and sets the node's ``nvidia.com/mig.config.state`` to ``failed``.

``problems`` lists what mig-parted would refuse, in its own words where it has them; a test runs
mig-parted's parser on the same configs (``tests/cluster/agents``) to hold the two together.
``filtered_gpus`` names the GPUs an entry's ``device-filter`` selects (PCI device ids, as
``0x233010DE``) among the catalogue's (``specs/gpus.yaml``, read as plain YAML), with the MIG
profiles each offers.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any, NamedTuple

from gpustack.lint.model import Path
from gpustack.shipped import data_dir

KEY = "mig-configs"
VERSION = "v1"
_ENTRY_KEYS = frozenset({"device-filter", "devices", "mig-enabled", "mig-devices"})
_ATTRIBUTE = r"[A-Za-z][A-Za-z0-9.]*(?<!\.)"
_PROFILE = re.compile(rf"^(?:\d+c\.)?\d+g\.\d+gb(?:[+-]{_ATTRIBUTE}(?:,{_ATTRIBUTE})*)?$")
_PCI_FILTER = re.compile(r"^0x([0-9a-fA-F]{4})10de$", re.IGNORECASE)


class Problem(NamedTuple):
    path: Path  # inside the config
    says: str


class CatalogueGpu(NamedTuple):
    name: str
    profiles: frozenset[str]


def is_config(value: Any) -> bool:
    """Whether a mapping is a mig-parted config (it has ``mig-configs``)."""
    return isinstance(value, Mapping) and KEY in value


def problems(config: Mapping[str, Any]) -> Iterator[Problem]:
    """Why mig-parted refuses the config, the first fault of each place (spec.go's checks)."""
    version = config.get("version")
    if version is None:
        yield Problem((), "unable to parse with missing 'version' field")
    elif version != VERSION:
        yield Problem(("version",), f"unknown version: {version}")
    for key in config:
        if key not in ("version", KEY):
            yield Problem((str(key),), f"unexpected field: {key}")
    layouts = config.get(KEY)
    if not isinstance(layouts, Mapping) or not layouts:
        yield Problem((KEY,), f"at least one entry in '{KEY}' is required")
        return
    for name, entries in layouts.items():
        if not isinstance(entries, list) or not entries:
            yield Problem((KEY, name), f"at least one entry in '{name}' is required")
            continue
        for index, entry in enumerate(entries):
            found = _entry_problem(entry)
            if found is not None:
                where, says = found
                yield Problem((KEY, name, index, *where), says)


def _entry_problem(entry: Any) -> tuple[Path, str] | None:
    if not isinstance(entry, Mapping):
        return (), "an entry is not a mapping"
    for required in ("devices", "mig-enabled"):
        if required not in entry:
            return (), f"missing required field: {required}"
    for key in entry:
        if key not in _ENTRY_KEYS:
            return (str(key),), f"unexpected field: {key}"
    devices = entry["devices"]
    if isinstance(devices, str) and devices != "all":
        return ("devices",), f"invalid string input for 'devices': {devices}"
    if not isinstance(devices, str) and not (isinstance(devices, list) and all(type(d) is int for d in devices)):
        return ("devices",), "'devices' is neither 'all' nor a list of GPU indices"
    enabled = entry["mig-enabled"]
    if not isinstance(enabled, bool):
        return ("mig-enabled",), "'mig-enabled' is not a boolean"
    layout = entry.get("mig-devices")
    if layout is not None:
        found = _layout_problem(layout)
        if found is not None:
            return ("mig-devices",), f"error validating values in 'mig-devices' field: {found}"
    if enabled and layout is None:
        return (), "missing required field 'mig-devices' when 'mig-enabled' is true"
    if not enabled and layout:
        return ("mig-devices",), "MIG devices included when 'mig-enabled' is false"
    return None


def _layout_problem(layout: Any) -> str | None:
    if not isinstance(layout, Mapping):
        return "not a map of MIG profiles to counts"
    for profile, count in layout.items():
        if not _PROFILE.match(str(profile)):
            return f"invalid format for '{profile}'"
        if type(count) is not int or count < 0:
            return f"invalid count for '{profile}': {count}"
    if layout and not any(count > 0 for count in layout.values()):
        return "all counts for all MigProfiles are 0"
    return None


def filtered_gpus(entry: Mapping[str, Any]) -> tuple[CatalogueGpu, ...]:
    """The catalogue GPUs an entry's ``device-filter`` names; () without one, or where any id it
    names is not in the catalogue (the entry may be for a GPU gpustack does not know)."""
    ids = entry.get("device-filter")
    ids = [ids] if isinstance(ids, str) else ids if isinstance(ids, list) else []
    found = []
    for text in ids:
        match = _PCI_FILTER.match(str(text).strip())
        gpus = _catalogue().get(match.group(1).lower()) if match else None
        if gpus is None:
            return ()
        found += gpus
    return tuple(found)


@cache
def _catalogue() -> dict[str, list[CatalogueGpu]]:
    """PCI device id → the catalogue's GPUs with it (plain YAML: the pydantic catalogue stays off
    lint's path)."""
    import yaml

    text = (data_dir("specs") / "gpus.yaml").read_text(encoding="utf-8")
    by_id: dict[str, list[CatalogueGpu]] = {}
    for name, entry in yaml.load(text, Loader=yaml.CSafeLoader)["gpus"].items():
        by_id.setdefault(str(entry["pciDevice"]).lower(), []).append(CatalogueGpu(name, frozenset(entry["migProfiles"])))
    return by_id
