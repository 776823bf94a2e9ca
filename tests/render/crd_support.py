"""Validate custom resources against gpustack's own CRD schemas and, when present, upstream's CRDs."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any

import pytest
from jsonschema.validators import Draft202012Validator
from render_helpers import REPO
from ruamel.yaml import YAML

from gpustack.render import crd_schemas

CRDS = REPO.parent / "shared" / "reference" / "crds"


@cache
def upstream_schemas() -> dict[tuple[str, str], dict[str, Any]]:
    """(apiVersion, kind) → openAPIV3Schema of each upstream CRD in ../shared/reference/crds."""
    if not CRDS.is_dir():
        pytest.skip(f"{CRDS} not present")
    schemas = {}
    for path in sorted(CRDS.glob("*.yaml")):
        for doc in YAML(typ="safe").load_all(path.read_text(encoding="utf-8")):
            if not doc or doc.get("kind") != "CustomResourceDefinition":
                continue
            group, kind = doc["spec"]["group"], doc["spec"]["names"]["kind"]
            for version in doc["spec"]["versions"]:
                schemas[(f"{group}/{version['name']}", kind)] = version["schema"]["openAPIV3Schema"]
    return schemas


def upstream_problems(obj: Mapping[str, Any]) -> list[str]:
    schema = upstream_schemas()[(obj["apiVersion"], obj["kind"])]
    return [f"{list(e.absolute_path)}: {e.message}" for e in Draft202012Validator(schema).iter_errors(dict(obj))]


def custom_resources(objects: Iterator[tuple[str, Mapping[str, Any]]]) -> list[tuple[str, Mapping[str, Any]]]:
    return [
        (where, obj) for where, obj in objects if (obj.get("apiVersion"), obj.get("kind")) in crd_schemas.SCHEMA_FILES
    ]


def assert_valid(obj: Mapping[str, Any]) -> None:
    """Valid for gpustack's schema and for the upstream CRD (the latter skipped when absent)."""
    assert crd_schemas.problems(obj) == []
    if CRDS.is_dir():
        assert upstream_problems(obj) == []
