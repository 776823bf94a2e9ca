"""What GS031 and GS042 say about a values key: which keys a layer writes (and which it writes
empty), which versions of the chart read a key, and the key the templates read that was most
likely meant."""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping
from typing import Any

from gpustack.lint.charts import chartkeys
from gpustack.lint.charts.chartkeys import ChartKeys, KeyPath
from gpustack.lint.releases.helmvalues import ValuesLayer


def written(layer: ValuesLayer) -> Iterator[KeyPath]:
    """Every key path a layer writes: the leaves and maps of a tree, each ``--set`` key; not
    the keys Helm reads itself (a dependency's ``condition`` and ``tags``)."""
    if layer.written is not None:
        yield from (path for path in layer.written if path not in layer.helm_reads)
        return

    def walk(values: Mapping[str, Any], prefix: KeyPath) -> Iterator[KeyPath]:
        for key, value in values.items():
            if (*prefix, key) not in layer.helm_reads:
                yield (*prefix, key)
            if isinstance(value, Mapping):
                yield from walk(value, (*prefix, key))

    yield from walk(layer.values, ())


def asks_nothing(layer: ValuesLayer, path: KeyPath) -> bool:
    """The layer writes ``path`` null or empty (``noTimestamp: null``, ``namespaceOverride: ""``,
    a key left without a value by a stray line): what a block copied from the chart's
    values.yaml writes, asking for nothing the chart would miss (Helm drops a null key)."""
    node = _written(layer, path)
    return node is not _NOT_HELD and (node is None or node in ("", {}, []))


def sets_default(layer: ValuesLayer, path: KeyPath, keys: ChartKeys) -> bool:
    """The layer writes ``path`` as the chart version's ``values.yaml`` has it (a declared-only
    key's scalar default, or a block whose every scalar is its default, as a copy of the chart's
    ``values.yaml`` writes it): whether a template reads it or not, nothing changes."""
    return _is_default(_written(layer, path), path, keys)


def _is_default(node: Any, path: KeyPath, keys: ChartKeys) -> bool:
    if isinstance(node, Mapping):
        return bool(node) and all(_is_default(value, (*path, str(key)), keys) for key, value in node.items())
    default = keys.declared_default(path)
    return default is not None and type(node) is type(default) and node == default


_NOT_HELD = object()


def _written(layer: ValuesLayer, path: KeyPath) -> Any:
    """The value the layer writes at ``path``; ``_NOT_HELD`` where it holds none (a ``--set``
    list item's key: its value is not held)."""
    node: Any = layer.values
    for key in path:
        if not isinstance(node, Mapping) or key not in node:
            return _NOT_HELD
        node = node[key]
    return node


def other_versions(keys: ChartKeys, path: KeyPath) -> str | None:
    """``read by chart 2.5.3 to 2.6.1; not from 2.7.1 on``: the versions of gpustack's data
    whose templates read ``path``, or None when none does. Only versions with data are named:
    a release between two of them (24.6.0 between 24.3.0 and 24.6.2) is not known either way."""
    known = keys.data.versions
    reading = keys.versions_reading(path)
    if not reading:
        return None
    first, last = known.index(reading[0]), known.index(reading[-1])
    contiguous = last - first + 1 == len(reading)
    span = (f"{reading[0]} to {reading[-1]}" if len(reading) > 1 else reading[0]) if contiguous else ", ".join(reading)
    text = f"read by chart {span}"
    if contiguous and keys.column > last:
        text += f"; not from {known[last + 1]} on"
    elif contiguous and keys.column < first:
        text += f"; not by {known[first - 1]} or earlier"
    return text


def _normalise(text: str) -> str:
    return text.lower().replace(".", "").replace("_", "").replace("-", "")


def closest_read(keys: ChartKeys, path: KeyPath) -> KeyPath | None:
    """The key the templates read that ``path`` most likely meant, first found of: the one read
    key anywhere with the same last name (``gfd.sleepInterval`` -> top-level ``sleepInterval``,
    ``manager`` -> ``driver.manager``); the closest read key under the same parent (``imageTag``
    -> ``image.tag``); the one read key anywhere with nearly the same last name."""
    parent, unknown = path[:-1], path[-1]
    by_name: dict[str, list[KeyPath]] = {}
    for candidate in keys.siblings(()):
        if candidate != path:
            by_name.setdefault(_normalise(candidate[-1]), []).append(candidate)
    # Only a name that one read key has: `enabled` is everywhere and says nothing.
    if len(by_name.get(_normalise(unknown), ())) == 1:
        return by_name[_normalise(unknown)][0]
    candidates = {_normalise(".".join(c)): (*parent, *c) for c in keys.siblings(parent)}
    match = difflib.get_close_matches(_normalise(unknown), list(candidates), n=1, cutoff=0.6)
    if match and candidates[match[0]] != path:
        return candidates[match[0]]
    match = difflib.get_close_matches(_normalise(unknown), list(by_name), n=1, cutoff=0.85)
    return by_name[match[0]][0] if match and len(by_name[match[0]]) == 1 else None


def did_you_mean(keys: ChartKeys, path: KeyPath) -> str | None:
    parts = tuple(path[-1].split("."))
    if len(parts) > 1 and parts in keys.siblings(path[:-1]):
        # `cdi.enabled: true` is one key with a dot in its name, not `cdi: {enabled: true}`.
        nested = "".join(f"{part}: {{" for part in parts[:-1]) + f"{parts[-1]}: ..." + "}" * (len(parts) - 1)
        return f"Values are nested maps, not dotted paths: write `{nested}`"
    found = closest_read(keys, path)
    if found is None:
        return None
    where = " (top level)" if len(found) == 1 and len(path) > 1 else ""
    return f"Did you mean `{'.'.join(found)}`{where}?"


def rename(chart: str, path: KeyPath, version: str | None) -> str | None:
    """A hint when ``path`` is one side of a rename (``renames.yaml``) that ``version`` lacks."""
    for known in chartkeys.renames(chart):
        newer = version is None or chartkeys.version_key(version) >= chartkeys.version_key(known.since)
        if newer and path == known.old:
            return f"The chart renamed it to `{'.'.join(known.new)}` in {known.since}"
        if not newer and path == known.new:
            return f"This key exists from chart {known.since} on; before it is `{'.'.join(known.old)}`"
    return None
