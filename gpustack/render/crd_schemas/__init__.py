"""JSON Schemas of the custom resources gpustack emits, written from the upstream field facts.

kubernetes-validate knows only built-in kinds; PrometheusRule (monitoring.coreos.com/v1),
HelmChart (helm.cattle.io/v1) and Application (argoproj.io/v1alpha1) are checked against these
(draft 2020-12, unknown fields refused like the API server's structural schemas do).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any

SCHEMA_FILES = {
    ("monitoring.coreos.com/v1", "PrometheusRule"): "prometheusrule.json",
    ("helm.cattle.io/v1", "HelmChart"): "helmchart.json",
    ("argoproj.io/v1alpha1", "Application"): "application.json",
}


def _load(name: str) -> dict[str, Any]:
    return json.loads(resources.files(__name__).joinpath(name).read_text(encoding="utf-8"))


@cache
def _validator(file: str) -> Any:
    from jsonschema.validators import Draft202012Validator
    from referencing import Registry, Resource

    common = _load("common.json")
    registry = Registry().with_resource(common["$id"], Resource.from_contents(common))
    return Draft202012Validator(_load(file), registry=registry, format_checker=Draft202012Validator.FORMAT_CHECKER)


def problems(obj: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(path, message)`` for each schema violation; empty for valid objects and unknown kinds."""
    file = SCHEMA_FILES.get((obj.get("apiVersion"), obj.get("kind")))
    if file is None:
        return []
    errors = sorted(_validator(file).iter_errors(dict(obj)), key=lambda e: list(map(str, e.absolute_path)))
    return [(".".join(map(str, error.absolute_path)), error.message) for error in errors]
