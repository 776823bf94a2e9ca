"""CDI specs for nvidia.com/gpu in /etc/cdi and /var/run/cdi (the toolkit's spec-dirs)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from gpustack.node import driver, toolkit, upstream_docs
from gpustack.node.result import LayerResult, not_applicable, ok, problem
from gpustack.node.root import Malformed, NodeRoot

LAYER = "cdi"
SPEC_DIRS = ("/etc/cdi", "/var/run/cdi")
KIND = "nvidia.com/gpu"
_LIBCUDA = re.compile(r"libcuda\.so\.(\d+\.\d+(?:\.\d+)?)")


@dataclass(frozen=True)
class CdiSpec:
    file: str
    devices: int
    driver_version: str | None  # from the libcuda.so.<version> it mounts


def read(root: NodeRoot) -> tuple[CdiSpec, ...]:
    """The nvidia.com/gpu specs; ``Malformed`` when a spec file does not parse."""
    specs = []
    for folder in SPEC_DIRS:
        for file in [*root.entries(folder, "*.yaml"), *root.entries(folder, "*.json")]:
            text = root.read_text(file) or ""
            document = _parse(file, text)
            if isinstance(document, dict) and document.get("kind") == KIND:
                match = _LIBCUDA.search(text)
                specs.append(CdiSpec(file, len(document.get("devices") or []), match.group(1) if match else None))
    return tuple(specs)


def _parse(file: str, text: str) -> Any:
    try:
        return YAML(typ="safe").load(text)  # JSON is YAML too
    except YAMLError as exc:
        raise Malformed(f"{file}: {exc}") from None


def _mode(root: NodeRoot) -> str:
    try:
        return toolkit.read(root).mode
    except Malformed:
        return "auto"  # the toolkit layer reports the broken config


def _regenerate(file: str = "/var/run/cdi/nvidia.yaml") -> str:
    return f"regenerate it: `nvidia-ctk cdi generate --output={file}`"


def check(root: NodeRoot) -> LayerResult:
    try:
        specs = read(root)
    except Malformed as exc:
        return problem(LAYER, f"spec does not parse: {exc}", fix=_regenerate(), docs=upstream_docs.CDI)
    if not specs:
        mode = _mode(root)
        if mode == "cdi":
            return problem(LAYER, f"toolkit mode cdi but no CDI spec for {KIND}", fix=_regenerate(), docs=upstream_docs.CDI)
        return not_applicable(LAYER, f"no CDI spec for {KIND}; toolkit mode {mode} uses the legacy hook")
    loaded = driver.loaded_version(root)
    # A spec generated before a driver upgrade mounts libraries that no longer exist.
    stale = [s for s in specs if loaded and s.driver_version and s.driver_version != loaded]
    if stale:
        spec = stale[0]
        return problem(
            LAYER,
            f"{spec.file} was generated for driver {spec.driver_version}, but {loaded} is loaded",
            fix=_regenerate(spec.file),
            docs=upstream_docs.CDI,
        )
    listed = "; ".join(f"{s.file}: {s.devices} devices" for s in specs)
    return ok(LAYER, f"{KIND} in {listed}")
