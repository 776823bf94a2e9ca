"""The generated many-pool spec is a valid GpuStack (schema and cross-field checks)."""

from __future__ import annotations

from pathlib import Path

from gpustack.spec.load import load_spec
from specs import spec_file


def test_fifty_pool_spec_is_valid(tmp_path: Path) -> None:
    loaded = load_spec(str(spec_file(50, tmp_path)))
    assert len(loaded.stack.spec.nodePools) == 50
