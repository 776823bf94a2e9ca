"""Kubernetes label selectors (``matchLabels`` / ``matchExpressions``) as the API server evaluates them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpustack.lint.model import Resource, scalar_text
from gpustack.lint.releases.helmvalues import mapping


def labels_of(resource: Resource) -> Mapping[str, Any]:
    return mapping(resource.get(("metadata", "labels")))


def selector_matches(selector: Mapping[str, Any], labels: Mapping[str, Any]) -> bool:
    """Kubernetes LabelSelector semantics; an empty selector matches everything."""
    for key, value in mapping(selector.get("matchLabels")).items():
        if key not in labels or scalar_text(labels[key]) != scalar_text(value):
            return False
    expressions = selector.get("matchExpressions")
    for expression in expressions if isinstance(expressions, list) else ():
        if not isinstance(expression, Mapping):
            continue
        key, op = expression.get("key"), expression.get("operator")
        values = {scalar_text(v) for v in expression.get("values") or ()}
        present = key in labels
        value = scalar_text(labels.get(key))
        if (
            (op == "In" and not (present and value in values))
            or (op == "NotIn" and present and value in values)
            or (op == "Exists" and not present)
            or (op == "DoesNotExist" and present)
        ):
            return False
    return True

