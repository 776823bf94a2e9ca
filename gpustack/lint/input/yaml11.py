"""Kubernetes' YAML semantics for plain scalars and keys.

The API server reads manifests with go-yaml v2 (through sigs.k8s.io/yaml), which resolves
plain scalars by YAML 1.1 rules: ``y``/``yes``/``on`` are true, ``n``/``no``/``off`` false,
``0777`` is octal, ``1e3`` a float, underscores vanish from numbers, timestamps stay strings.
One function, ``plain``, applies those rules everywhere, so that a rule sees what the API
server sees (an unquoted ``gpu: on`` label is the boolean true, which the apply rejects).
"""

from __future__ import annotations

import re
from typing import Any, Final

MERGE: Final = object()  # the plain key ``<<``: merge the mapping(s) it holds

_RESERVED: Final[dict[str, Any]] = {
    **dict.fromkeys(("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"), True),
    **dict.fromkeys(("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"), False),
    **dict.fromkeys(("", "~", "null", "Null", "NULL"), None),
    **dict.fromkeys((".nan", ".NaN", ".NAN"), float("nan")),
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), float("inf")),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), float("-inf")),
    "<<": MERGE,
}
_GO_OCTAL = re.compile(r"[-+]?0[0-7]+")  # strconv.ParseInt(s, 0, 64) reads a leading 0 as octal
_YAML_STYLE_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
_INT_RANGE = range(-(2**63), 2**64)  # int64, then uint64


def plain(text: str) -> Any:
    """The value of an untagged plain scalar, as go-yaml v2 resolves it."""
    reserved = _RESERVED.get(text, _RESERVED)
    if reserved is not _RESERVED:
        return reserved
    first = text[:1]
    if first == "." and "_" not in text:
        try:
            return float(text)
        except ValueError:
            return text
    if first and first in "0123456789+-":
        number = text.replace("_", "")
        try:
            value = int(number, 8) if _GO_OCTAL.fullmatch(number) else int(number, 0)
        except ValueError:
            pass
        else:
            if value in _INT_RANGE:
                return value
        if _YAML_STYLE_FLOAT.fullmatch(number):
            return float(number)
    return text


def key_text(value: Any) -> str:
    """A mapping key as JSON sees it (sigs.k8s.io/yaml turns YAML into JSON: keys are strings)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    return str(value)
