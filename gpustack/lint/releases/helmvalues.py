"""Helm values as GitOps files write them: layers with their positions, merged as Helm merges.

``ValuesLayer`` is one place that sets a release's values (a values tree, a YAML string, or
``--set``-style pairs such as K3s ``set`` and Argo CD ``parameters``), so rules can point at
the key a value comes from; ``coalesce`` is Helm's merge.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from gpustack.lint.model import Path, Resource


@dataclass(frozen=True)
class ValuesLayer:
    """One place that sets a release's values. ``path`` is where they sit in ``resource``
    (it may go on into a YAML string: the loader locates inside it). ``written`` maps each
    key path of a ``--set``-style layer (K3s ``set``, Argo CD ``parameters``) to where it is
    written; None for a values tree. ``helm_reads``: key paths of ``values`` that Helm itself
    reads, not a template (a chart folder's dependency ``condition`` and ``tags`` keys)."""

    resource: Resource
    path: Path
    values: Mapping[str, Any]
    written: Mapping[tuple[str, ...], Path] | None = None
    helm_reads: frozenset[tuple[str, ...]] = frozenset()

    def where(self, keys: tuple[str, ...]) -> Path | None:
        """Where this layer sets ``keys`` (or a key below it), or None."""
        if self.written is not None:
            return next((path for written, path in self.written.items() if written[: len(keys)] == keys), None)
        node: Any = self.values
        for key in keys:
            if not isinstance(node, Mapping) or key not in node:
                return None
            node = node[key]
        return (*self.path, *keys)


def text_layer(resource: Resource, path: Path) -> ValuesLayer | None:
    """Values written as a YAML string (K3s ``valuesContent``, Argo CD ``helm.values``)."""
    text = resource.get(path)
    values = yaml_mapping(text) if isinstance(text, str) else {}
    return ValuesLayer(resource, path, values) if values else None


@lru_cache(maxsize=256)
def yaml_mapping(text: str) -> Mapping[str, Any]:
    """Values written as a YAML string, read as Helm reads them (sigs.k8s.io/yaml, like manifests)."""
    if not text.strip():
        return {}
    from gpustack.lint.input.load import load_text

    documents = load_text("<values>", text).resources
    return documents[0].data if documents else {}


def mapping(value: Any) -> Mapping[str, Any]:
    """``value`` when it is a mapping, else an empty one."""
    return value if isinstance(value, Mapping) else {}


def dotted_layer(resource: Resource, path: Path) -> ValuesLayer | None:
    """``--set``-style ``{"a.b": "false"}`` (K3s HelmChart ``set``)."""
    pairs = [(key, value, (*path, key)) for key, value in mapping(resource.get(path)).items() if isinstance(key, str)]
    return _dotted(resource, path, pairs) if pairs else None


def parameters_layer(resource: Resource, path: Path, parameters: Any) -> ValuesLayer | None:
    """Argo CD ``helm.parameters``: ``[{name: a.b, value: "1"}]``."""
    pairs = [
        (item["name"], item.get("value"), (*path, index, "name"))
        for index, item in enumerate(parameters if isinstance(parameters, list) else ())
        if isinstance(item, Mapping) and isinstance(item.get("name"), str)
    ]
    return _dotted(resource, path, pairs) if pairs else None


def _dotted(resource: Resource, path: Path, pairs: list[tuple[str, Any, Path]]) -> ValuesLayer:
    """Nested values of ``--set`` pairs (``true``/``false`` as Helm reads them; ``\\.`` escapes a
    dot; ``a[0]`` indexes a list, whose items are not followed)."""
    nested: dict[str, Any] = {}
    written: dict[tuple[str, ...], Path] = {}
    for key, value, where in pairs:
        parts = tuple(part.replace("\\.", ".") for part in re.split(r"(?<!\\)\.", key))
        indexed = next((i for i, part in enumerate(parts) if "[" in part), None)
        if indexed is not None:  # a list item: its key is checked, its value not followed
            written[(*parts[:indexed], parts[indexed].split("[", 1)[0])] = where
            continue
        written[parts] = where
        node = nested
        for part in parts[:-1]:
            child = node.get(part)
            node[part] = node = child if isinstance(child, dict) else {}
        node[parts[-1]] = {"true": True, "false": False}.get(value, value) if isinstance(value, str) else value
    return ValuesLayer(resource, path, nested, written)


def coalesce(base: Mapping[str, Any], override: Mapping[str, Any]) -> Mapping[str, Any]:
    """Helm's coalescing of ``override`` into ``base``: maps merge key by key (so a user map
    never replaces a default map wholesale), a null value deletes the key."""
    merged = dict(base)
    for key, value in override.items():
        if value is None:
            merged.pop(key, None)
        elif isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = coalesce(merged[key], value)
        else:
            merged[key] = value
    return merged
