"""Validate rendered Kubernetes objects against the OpenAPI schema of the target version.

Uses kubernetes-validate's strict schemas (unknown fields are errors). A naive
``kubernetes_validate.validate`` call re-reads and re-compiles the schema each time (~11 ms per
object), so compiled validators are cached per (apiVersion, kind, schema version). Kinds that
kubernetes-validate does not know (CRDs: HelmChart, Application, PrometheusRule) are checked
against gpustack's own CRD schemas (``crd_schemas``); other unknown kinds are skipped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any

from gpustack.errors import GpustackError, Problem
from gpustack.render import crd_schemas


def schema_version(minor: int) -> str:
    """The newest schema version kubernetes-validate ships that is not newer than 1.<minor>."""
    from kubernetes_validate.utils import all_versions

    shipped = [v for v in all_versions() if int(v.split(".")[1]) <= minor]
    if not shipped:
        raise GpustackError(f"kubernetes-validate has no schema for Kubernetes 1.{minor} or older")
    return shipped[-1]


@cache
def _definitions(schema_dir: str) -> Any:
    from kubernetes_validate.utils import schema_contents
    from referencing import Resource

    return Resource.from_contents(schema_contents(f"kubernetes-json-schema/{schema_dir}/_definitions.json", schema_dir))


@cache
def _validator(api_version: str, kind: str, version: str) -> Any | None:
    """A compiled strict validator, or ``None`` when the kind is not a built-in one."""
    from jsonschema.validators import Draft202012Validator
    from kubernetes_validate.utils import schema_contents
    from referencing import Registry, Resource

    schema_dir = f"v{version}-local-strict"
    # Same file naming as kubernetes_validate.validate: rbac.authorization.k8s.io/v1 → rbac-v1.
    group_version = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    try:
        schema = schema_contents(f"kubernetes-json-schema/{schema_dir}/{kind.lower()}-{group_version}.json", version)
    except FileNotFoundError:
        return None
    registry = _definitions(schema_dir) @ (Resource.from_contents(schema) @ Registry())
    return Draft202012Validator(schema, registry=registry)


def problems(obj: Mapping[str, Any], *, minor: int, where: str) -> list[Problem]:
    """Schema violations of one object (empty when valid or when its kind is not built in)."""
    name = "/".join(p for p in (obj["metadata"].get("namespace"), obj["metadata"]["name"]) if p)
    validator = _validator(obj["apiVersion"], obj["kind"], schema_version(minor))
    if validator is None:
        # Custom resources gpustack emits: its own schemas (gpustack.render.crd_schemas).
        return [
            Problem(f"{obj['kind']} {name}: {message}", where, path=path or None)
            for path, message in crd_schemas.problems(obj)
        ]
    return [
        Problem(f"{obj['kind']} {name}: {error.message}", where, path=".".join(str(p) for p in error.absolute_path) or None)
        for error in sorted(validator.iter_errors(dict(obj)), key=lambda e: list(map(str, e.absolute_path)))
    ]


def validate_all(objects: Iterable[tuple[str, Mapping[str, Any]]], *, minor: int) -> None:
    """Raise ``GpustackError`` listing every violation of ``(file, object)`` pairs."""
    found = [p for where, obj in objects for p in problems(obj, minor=minor, where=where)]
    if found:
        raise GpustackError(found)
