"""YAML in and out.

Reading keeps positions (ruamel.yaml round-trip nodes carry line/column) so that errors can
point at ``file:line:col``. Writing is deterministic: key order as built, block style, no
line wrapping, multi-line strings as literal blocks.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.scalarstring import DoubleQuotedScalarString, LiteralScalarString

from gpustack.errors import GpustackError, Problem


def load_positioned(text: str, filename: str) -> Any:
    """Parse one YAML document keeping positions; raise ``GpustackError`` with the location."""
    yaml = YAML(typ="rt")
    try:
        return yaml.load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        column = mark.column + 1 if mark else None
        raise GpustackError(
            Problem(f"invalid YAML: {exc.problem or exc.context}", filename, line, column)
        ) from None
    except YAMLError as exc:
        raise GpustackError(Problem(f"invalid YAML: {exc}", filename)) from None


def position(node: Any, path: Sequence[str | int]) -> tuple[int, int] | None:
    """1-based (line, column) of the deepest key or item of ``path`` present in ``node``.

    For a mapping key the position is the key's; for a sequence item, the item's.
    """
    found: tuple[int, int] | None = None
    current = node
    for step in path:
        if isinstance(current, CommentedMap) and isinstance(step, str) and step in current:
            line, col = current.lc.key(step)
            found = (line + 1, col + 1)
            current = current[step]
        elif isinstance(current, CommentedSeq) and isinstance(step, int) and 0 <= step < len(current):
            line, col = current.lc.item(step)
            found = (line + 1, col + 1)
            current = current[step]
        else:
            break
    if found is None and hasattr(node, "lc"):
        found = (node.lc.line + 1, node.lc.col + 1)
    return found


# Strings that a YAML 1.1 reader (Kubernetes' sigs.k8s.io/yaml, PyYAML) resolves to a
# bool, a sexagesimal or an octal number, although YAML 1.2 keeps them strings: always quote.
_YAML11_NON_STRINGS = re.compile(
    r"^(?:y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF"
    r"|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?"
    r"|[-+]?0[0-7_]+)$"
)


def _prepare(value: Any) -> Any:
    """Plain data for the dumper: literal blocks for multi-line strings, lists for tuples."""
    if isinstance(value, Mapping):
        return {str(k): _prepare(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_prepare(v) for v in value]
    if isinstance(value, str) and "\n" in value:
        # Literal blocks cannot hold trailing spaces on a line; such strings stay quoted.
        if not any(line != line.rstrip() for line in value.splitlines()):
            return LiteralScalarString(value)
    if isinstance(value, str) and _YAML11_NON_STRINGS.match(value):
        return DoubleQuotedScalarString(value)
    return value


def _dumper() -> YAML:
    yaml = YAML(typ="rt")
    yaml.default_flow_style = False
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=2, offset=0)
    return yaml


def dump(data: Any) -> str:
    """Serialise one document deterministically."""
    out = io.StringIO()
    _dumper().dump(_prepare(data), out)
    return out.getvalue()


def dump_all(documents: Iterable[Any]) -> str:
    """Serialise several documents as one stream separated by ``---``."""
    return "".join(f"---\n{dump(doc)}" for doc in documents)
