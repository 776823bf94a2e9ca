"""YAML in and out.

Reading keeps positions (ruamel.yaml round-trip nodes carry line/column) so that errors can
point at ``file:line:col``, in time linear in the text's size, to ``MAX_DEPTH`` levels and
``MAX_ALIAS_NODES`` nodes added by aliases. Writing is deterministic: key order as built, block style, no
line wrapping, multi-line strings as literal blocks.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.composer import Composer
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.scalarstring import DoubleQuotedScalarString, LiteralScalarString
from ruamel.yaml.scanner import Scanner

from gpustack.errors import GpustackError, Problem
from gpustack.userinput import ALIAS_BOMB, MAX_ALIAS_NODES

# A spec nests about eight levels. ruamel composes and constructs recursively, four Python
# frames per level: far deeper input would end in a RecursionError (after seconds) instead.
MAX_DEPTH = 64


class _TooDeep(Exception):
    def __init__(self, mark: Any, message: str = f"nested deeper than {MAX_DEPTH} levels: not read") -> None:
        super().__init__(message)
        self.mark = mark
        self.message = message


def _check_structure(text: str) -> None:
    """``_TooDeep`` at the first node deeper than ``MAX_DEPTH``, or at the alias past which
    aliases expand to more than ``MAX_ALIAS_NODES`` nodes (an alias bomb: 559 bytes can stand
    for billions of strings, which every walk over the data would visit), found by libyaml's
    C parser in one pass over the events: ruamel's scanner takes seconds over a line of
    thousands of ``[`` before its composer gets that deep. What libyaml cannot parse is left
    to ruamel to report, in its own words."""
    import yaml

    parser = yaml.CSafeLoader(text)
    sizes = [0]  # nodes each open container stands for, aliases expanded; [0]: the stream
    anchors: list[str | None] = [None]
    expanded: dict[str, int] = {}  # anchor -> nodes it stands for
    alias_nodes = 0
    try:
        while (event := parser.get_event()) is not None:
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                if len(sizes) > MAX_DEPTH:
                    raise _TooDeep(event.start_mark)
                sizes.append(1)
                anchors.append(event.anchor)
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                size, anchor = sizes.pop(), anchors.pop()
                if anchor is not None:
                    expanded[anchor] = size
                sizes[-1] += size
            elif isinstance(event, yaml.ScalarEvent):
                sizes[-1] += 1
                if event.anchor is not None:
                    expanded[event.anchor] = 1
            elif isinstance(event, yaml.AliasEvent):
                size = expanded.get(event.anchor, 1)
                alias_nodes += size
                if alias_nodes > MAX_ALIAS_NODES:
                    raise _TooDeep(event.start_mark, ALIAS_BOMB)
                sizes[-1] += size
    except yaml.MarkedYAMLError as exc:
        if exc.problem == "exceeded maximum nesting depth":  # libyaml's own limit, 1000 levels
            raise _TooDeep(exc.problem_mark) from None
    except yaml.YAMLError:
        pass
    finally:
        parser.dispose()


class _DepthLimitedComposer(Composer):  # type: ignore[misc]
    """ruamel's composer, which recurses once per level: stopped at ``MAX_DEPTH`` levels, long
    before Python's recursion limit (a RecursionError, seconds later)."""

    _nesting = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        self._nesting += 1
        try:
            if self._nesting > MAX_DEPTH:
                raise _TooDeep(self.parser.peek_event().start_mark)
            return super().compose_node(parent, index)
        finally:
            self._nesting -= 1


def load_positioned(text: str, filename: str) -> Any:
    """Parse one YAML document keeping positions; raise ``GpustackError`` with the location."""
    yaml = YAML(typ="rt")
    # Comments are dropped while scanning: the round-trip scanner joins a run of comment lines
    # one string concatenation at a time, quadratic in their number (100,000 comment lines
    # took 44 s). The composer and constructor still record every key's and item's position.
    yaml.Scanner = Scanner
    yaml.Composer = _DepthLimitedComposer
    try:
        _check_structure(text)
        return yaml.load(text)
    except _TooDeep as exc:
        line, column = exc.mark.line + 1, exc.mark.column + 1
        raise GpustackError(Problem(exc.message, filename, line, column)) from None
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        column = mark.column + 1 if mark else None
        raise GpustackError(
            Problem(f"invalid YAML: {exc.problem or exc.context}", filename, line, column)
        ) from None
    except YAMLError as exc:
        raise GpustackError(Problem(f"invalid YAML: {exc}", filename)) from None
    except (ValueError, TypeError, IndexError, KeyError) as exc:
        # ruamel's constructors on odd tagged values, e.g. a bare `!!int`: an IndexError
        raise GpustackError(Problem(f"invalid YAML: a value it cannot construct ({exc})", filename)) from None


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
