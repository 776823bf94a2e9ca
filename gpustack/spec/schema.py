"""The spec's JSON Schema, generated from the models (committed as specs/gpustack.schema.json)."""

from __future__ import annotations

import json

from gpustack.spec.models import GpuStack


def spec_schema() -> dict:
    schema = GpuStack.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "GpuStack"
    return schema


def spec_schema_text() -> str:
    return json.dumps(spec_schema(), indent=2, sort_keys=True) + "\n"
