"""containerd's CRI config: is an nvidia runtime registered (K3s's generated file, or the stock one)?"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Any

from gpustack.node import distribution, upstream_docs
from gpustack.node.result import LayerResult, ok, problem
from gpustack.node.root import Malformed, NodeRoot

LAYER = "containerd"
K3S_CONFIG = "/var/lib/rancher/k3s/agent/etc/containerd/config.toml"
STOCK_CONFIG = "/etc/containerd/config.toml"
STOCK_DROP_INS = "/etc/containerd/conf.d"
# The CRI plugin's key: config version 2 (containerd 1.x) and version 3 (containerd 2.x)
# (containerd.io/docs/2.3/cri/config; K3s writes v3 since v1.31.6+k3s1, https://docs.k3s.io/advanced).
CRI_PLUGINS = ("io.containerd.grpc.v1.cri", "io.containerd.cri.v1.runtime")
CONFIGURE = (
    "`nvidia-ctk runtime configure --runtime=containerd` (writes /etc/containerd/conf.d/99-nvidia.toml "
    "and imports it), then `systemctl restart containerd`"
)


@dataclass(frozen=True)
class Runtime:
    name: str
    binary: str | None
    file: str


@dataclass(frozen=True)
class ContainerdFacts:
    files: tuple[str, ...]  # the config files read, main file first
    runtimes: tuple[Runtime, ...]  # every CRI runtime, nvidia or not
    default_runtime: str | None

    @property
    def nvidia(self) -> tuple[Runtime, ...]:
        return tuple(r for r in self.runtimes if "nvidia" in r.name)


def read(root: NodeRoot, main: str) -> ContainerdFacts:
    """The main file, what it imports and (stock containerd) conf.d drop-ins; ``Malformed`` on bad TOML."""
    config = root.read_toml(main)
    files = [] if config is None else [main, *_imports(root, main, config)]
    if main == STOCK_CONFIG:  # containerd >= 2.2 imports conf.d even without an imports entry
        files += root.entries(STOCK_DROP_INS, "*.toml")
    files = list(dict.fromkeys(files))
    runtimes: list[Runtime] = []
    default = None
    for file in files:
        for cri in _cri_tables(config if file == main else root.read_toml(file)):
            default = cri.get("default_runtime_name", default)
            for name, table in (cri.get("runtimes") or {}).items():
                runtimes.append(Runtime(name, (table.get("options") or {}).get("BinaryName"), file))
    return ContainerdFacts(tuple(files), tuple(runtimes), default)


def _imports(root: NodeRoot, main: str, config: dict[str, Any]) -> list[str]:
    """``imports`` entries are globs, relative to the main file's folder unless absolute."""
    found = []
    for pattern in config.get("imports") or []:
        absolute = posixpath.join(posixpath.dirname(main), pattern)
        folder, glob = posixpath.split(absolute)
        found += root.entries(folder, glob)
    return found


def _cri_tables(config: dict[str, Any] | None) -> list[dict[str, Any]]:
    plugins = (config or {}).get("plugins") or {}
    return [plugins[key]["containerd"] for key in CRI_PLUGINS if "containerd" in plugins.get(key, {})]


def check(root: NodeRoot) -> LayerResult:
    is_k3s = distribution.detect(root).name == "k3s"
    main = K3S_CONFIG if is_k3s else STOCK_CONFIG
    try:
        facts = read(root, main)
    except Malformed as exc:
        return problem(LAYER, f"config does not parse: {exc}", fix="fix the TOML syntax", docs=upstream_docs.CONTAINERD)
    if is_k3s:
        # K3s registers nvidia runtimes itself, at start, when nvidia-container-runtime is on
        # its PATH (https://docs.k3s.io/advanced); editing its generated file is undone.
        fix = "install the NVIDIA Container Toolkit, then `systemctl restart k3s` (k3s-agent on agents)"
    else:
        fix = CONFIGURE
    if not facts.files:
        return problem(LAYER, f"no containerd config at {main}", fix=fix, docs=upstream_docs.CONTAINERD)
    if not facts.nvidia:
        return problem(LAYER, f"no nvidia runtime in {', '.join(facts.files)}", fix=fix, docs=upstream_docs.CONTAINERD)
    listed = ", ".join(f"{r.name} → {r.binary or 'runc'} ({r.file})" for r in facts.nvidia)
    default = facts.default_runtime or "runc"
    note = "" if "nvidia" in default else " (GPU pods need runtimeClassName: nvidia)"
    return ok(LAYER, f"{listed}; default runtime {default}{note}")
