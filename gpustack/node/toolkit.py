"""NVIDIA Container Toolkit: nvidia-ctk and nvidia-container-runtime on PATH, and its mode."""

from __future__ import annotations

import os
from dataclasses import dataclass

from gpustack.node import upstream_docs
from gpustack.node.result import LayerResult, ok, problem
from gpustack.node.root import Malformed, NodeRoot

LAYER = "toolkit"
CONFIG = "/etc/nvidia-container-runtime/config.toml"
# Where services find programs, plus the GPU Operator's toolkit folder that K3s also searches
# (https://github.com/k3s-io/k3s, pkg/agent/containerd).
_STANDARD_PATH = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")
_OPERATOR_TOOLKIT = "/usr/local/nvidia/toolkit"


@dataclass(frozen=True)
class ToolkitFacts:
    ctk: str | None  # absolute node paths, None when not found
    runtime: str | None
    mode: str
    mode_source: str

    @property
    def missing(self) -> tuple[str, ...]:
        found = {"nvidia-ctk": self.ctk, "nvidia-container-runtime": self.runtime}
        return tuple(program for program, path in found.items() if path is None)


def search_path() -> tuple[str, ...]:
    entries = [e for e in os.environ.get("PATH", "").split(os.pathsep) if e.startswith("/")]
    return tuple(dict.fromkeys([*entries, *_STANDARD_PATH, _OPERATOR_TOOLKIT]))


def which(root: NodeRoot, program: str) -> str | None:
    """The first ``program`` on the search path under ``root``."""
    return next((f"{d}/{program}" for d in search_path() if root.is_file(f"{d}/{program}")), None)


def read(root: NodeRoot) -> ToolkitFacts:
    """``Malformed`` when config.toml does not parse."""
    config = root.read_toml(CONFIG)
    # auto picks CDI when specs exist and the legacy hook otherwise.
    mode = (config or {}).get("nvidia-container-runtime", {}).get("mode")
    return ToolkitFacts(
        ctk=which(root, "nvidia-ctk"),
        runtime=which(root, "nvidia-container-runtime"),
        mode=mode or "auto",
        mode_source=CONFIG if mode else "default",
    )


def check(root: NodeRoot) -> LayerResult:
    try:
        facts = read(root)
    except Malformed as exc:
        return problem(
            LAYER,
            f"config does not parse: {exc}",
            fix=f"fix the TOML, or regenerate it with `nvidia-ctk config default --output={CONFIG}`",
            docs=upstream_docs.TOOLKIT,
        )
    if facts.missing:
        return problem(
            LAYER,
            f"{' and '.join(facts.missing)} not on PATH",
            fix="install the NVIDIA Container Toolkit from NVIDIA's repository "
            "(`apt-get install nvidia-container-toolkit`)",
            docs=upstream_docs.TOOLKIT,
        )
    return ok(LAYER, f"{facts.ctk}, {facts.runtime}; mode {facts.mode} ({facts.mode_source})")
