"""containerd's CRI config in TOML, wherever the set writes it: a Talos CRI drop-in
(``facts/talos``), a ConfigMap's value, or a file of its own (``input/containerdfiles``: K3s and
RKE2 ``config.toml.tmpl`` / ``config-v3.toml.tmpl``, ``/etc/containerd/config.toml``).

Where containerd reads the default runtime and the runtimes, by CRI config version
(https://github.com/containerd/containerd/blob/main/docs/cri/config.md): version 2, containerd
1.x's, under ``[plugins."io.containerd.grpc.v1.cri".containerd]``; version 3, containerd 2.x's,
under ``[plugins."io.containerd.cri.v1.runtime".containerd]``. containerd 2.x converts a version 2
file to version 3 when it loads it, but a file that says ``version = 3`` is read as it is: a
``default_runtime_name`` or ``runtimes`` table it keeps in version 2's table is not read, so runc
stays the default and the runtime is never registered.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from gpustack.lint.model import Resource, posix_path

CRI_RUNTIME_TABLE = 'plugins."io.containerd.cri.v1.runtime".containerd'
CRI_DEFAULT_TABLES = {2: 'plugins."io.containerd.grpc.v1.cri".containerd', 3: CRI_RUNTIME_TABLE}
DEFAULT_RUNTIME = re.compile(r"""^\s*default_runtime_name\s*=\s*["']([^"']+)["']""", re.MULTILINE)
# The document ``input/containerdfiles`` makes of a containerd TOML file: its text under this key.
FILE_KEY = "containerdConfig"
# K3s and RKE2 read config-v3.toml.tmpl for containerd 2's config version 3
# (https://docs.k3s.io/advanced#configuring-containerd).
VERSION_3_TEMPLATE = "config-v3.toml.tmpl"
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_TEMPLATE_ACTION = "{{"


@dataclass(frozen=True)
class DefaultRuntime:
    """A ``default_runtime_name`` a CRI config writes, and where in its TOML."""

    runtime: str
    table: str | None  # the dotted table that holds it (``plugins."io.containerd…".containerd``); None: not TOML
    version: int | None  # the config's own ``version`` key, if it has one


@dataclass(frozen=True)
class RuntimeSetting:
    """A default runtime or a runtime table of a CRI config: what it says, its table, its version."""

    said: str  # ``default_runtime_name = "nvidia"``, ``the runtime table runtimes.nvidia``
    runtime: str
    table: str
    version: int | None
    table_entry: bool  # a runtimes table (else the default runtime)


def default_runtimes(content: str) -> list[DefaultRuntime]:
    """Every ``default_runtime_name`` of a CRI config's content, with its table (text that is not
    TOML: found line by line, tables unknown)."""
    parsed = _parsed(content)
    if parsed is None:
        return [DefaultRuntime(runtime, None, None) for runtime in DEFAULT_RUNTIME.findall(content)]
    return [DefaultRuntime(runtime, table, _version(parsed)) for table, runtime in _default_runtime_keys(parsed, ())]


def runtime_settings(content: str) -> list[RuntimeSetting]:
    """The default runtime and the runtime tables of a CRI config, under either CRI table. Lines
    with Go template actions (a K3s ``.tmpl``) are left out; content that is not TOML gives none."""
    parsed = _parsed("\n".join(line for line in content.splitlines() if _TEMPLATE_ACTION not in line))
    if parsed is None:
        return []
    version = _version(parsed)
    found = []
    for table in CRI_DEFAULT_TABLES.values():
        settings = _table(parsed, table)
        runtime = settings.get("default_runtime_name")
        if isinstance(runtime, str):
            found.append(RuntimeSetting(f'default_runtime_name = "{runtime}"', runtime, table, version, False))
        runtimes = settings.get("runtimes")
        for name in runtimes if isinstance(runtimes, Mapping) else ():
            found.append(RuntimeSetting(f"the runtime table runtimes.{_key(name)}", name, table, version, True))
    return found


def is_config_file(resource: Resource) -> bool:
    """A containerd TOML file as ``input/containerdfiles`` reads it."""
    return resource.kind is None and isinstance(resource.data.get(FILE_KEY), str)


def implied_version(file: str) -> int | None:
    """The config version a file's name implies (K3s's ``config-v3.toml.tmpl``: 3)."""
    return 3 if posix_path(file).rsplit("/", 1)[-1] == VERSION_3_TEMPLATE else None


def _parsed(content: str) -> Mapping[str, Any] | None:
    import tomllib  # lazily: the file discovery imports this module, and few sets hold TOML

    try:
        return tomllib.loads(content)
    except tomllib.TOMLDecodeError:
        return None


def _version(parsed: Mapping[str, Any]) -> int | None:
    version = parsed.get("version")
    return version if isinstance(version, int) and not isinstance(version, bool) else None


def _table(parsed: Mapping[str, Any], dotted: str) -> Mapping[str, Any]:
    node: Any = parsed
    for part in ("plugins", dotted.split('"')[1], "containerd"):
        node = node.get(part) if isinstance(node, Mapping) else None
    return node if isinstance(node, Mapping) else {}


def _default_runtime_keys(table: Mapping[str, Any], path: tuple[str, ...]) -> Iterator[tuple[str, str]]:
    for key, value in table.items():
        if isinstance(value, Mapping):
            yield from _default_runtime_keys(value, (*path, key))
        elif key == "default_runtime_name" and isinstance(value, str):
            yield ".".join(_key(part) for part in path), value


def _key(part: str) -> str:
    return part if _BARE_KEY.fullmatch(part) else f'"{part}"'
