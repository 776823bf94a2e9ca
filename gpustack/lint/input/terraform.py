"""Terraform files as python-hcl2 reads them: the parse and its string literals, for the readers
of ``helm_release`` resources (``releases/outside.py``) and of GPU node pools (``cloudpools``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def parse(text: str) -> Mapping[str, Any] | None:
    """The file's blocks, or None for HCL python-hcl2 cannot read."""
    import hcl2  # lazily: only files that declare what a reader wants pay for the parser

    try:
        parsed = hcl2.loads(text)
    except Exception:  # noqa: BLE001 - python-hcl2 raises lark's many errors for HCL it cannot read
        return None
    return parsed if isinstance(parsed, Mapping) else None


def string(value: object) -> str | None:
    """A string literal without the quotes python-hcl2 keeps (``'"gpu-operator"'``); None for an
    expression, which has none."""
    if isinstance(value, str) and len(value) >= 2 and value[0] == value[-1] == '"':
        return value[1:-1]
    return None
