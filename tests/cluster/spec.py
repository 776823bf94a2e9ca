"""The spec as the harness reads it: gpustack's own loader (``gpustack.spec``) and catalogue."""

from __future__ import annotations

from pathlib import Path

from gpustack.spec.gpu_catalogue import GpuModel, load_catalogue
from gpustack.spec.load import load_spec
from gpustack.spec.models import GpuStack
from gpustack.spec.models.cluster import NodePool


def load(path: Path) -> GpuStack:
    return load_spec(str(path)).stack


def gpu_model(pool: NodePool) -> GpuModel:
    """The pool's GPU from the catalogue (or the spec's own ``custom`` entry)."""
    if pool.gpu.custom is not None:
        return pool.gpu.custom
    found = load_catalogue().resolve(pool.gpu.model)
    assert found is not None, f"GPU model {pool.gpu.model} is not in the catalogue"
    return found[1]
