"""specs/gpustack.schema.json is what `gpustack schema` generates from the models."""

from __future__ import annotations

from pathlib import Path

from gpustack.spec.schema import spec_schema_text

SCHEMA = Path(__file__).resolve().parents[2] / "specs" / "gpustack.schema.json"


def test_committed_schema_is_fresh():
    assert SCHEMA.read_text(encoding="utf-8") == spec_schema_text(), (
        "stale schema: regenerate with `gpustack schema -o specs/gpustack.schema.json`"
    )


def test_schema_documents_defaults():
    text = spec_schema_text()
    for default in ('"default": "1.36"', '"default": "0.20.0"', '"default": "2m"'):
        assert default in text
