"""The spec reference page (``docs/spec/reference.md``, written by ``gpustack docs``): every field
of the spec's JSON Schema (``specs/gpustack.schema.json``) with its type, default and
description, one table per object, headed by the object's path. An object reached through a list gets ``[]`` in its path,
through a map ``.*``; each form of a union (``oneOf``) gets a table of its own, named by its
discriminator value (``strategy: mps``) or else its title."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

PAGE_PATH = "spec/reference.md"  # in the site's docs folder
GENERATED = "<!-- Generated from specs/gpustack.schema.json by `gpustack docs`; do not edit. -->"

Schema = Mapping[str, Any]


@dataclass(frozen=True)
class Section:
    """An object of the spec at ``path``: a heading and a table of its fields."""

    path: str
    variant: str | None
    schema: Schema

    @property
    def title(self) -> str:
        name = f"`{self.path}`" if self.path else "Top level"
        return name + (f" ({self.variant})" if self.variant else "")

    @property
    def anchor(self) -> str:
        """The heading's id, as MkDocs (Python-Markdown's toc) and GitHub both make it."""
        text = self.title.replace("`", "").lower()
        return re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", text).strip())


def reference_markdown(schema: Schema) -> str:
    sections = list(_sections(schema, schema, "", None, ()))
    anchors = {(section.path, section.variant): section.anchor for section in sections}
    lines = [
        "# Spec reference",
        "",
        GENERATED,
        "",
        schema.get("description", "").strip(),
        "",
        "Every field of a spec file, object by object. `[]` in a path is an item of a list, `.*` a value of a map.",
        "A field is optional unless its default says required; an object or list without a default starts with its own fields' defaults, or empty.",
        "",
    ]
    for section in sections:
        lines += [f"## {section.title}", ""]
        description = section.schema.get("description")
        if description and section.path:
            lines += [_text(description), ""]
        lines += ["| Field | Type | Default | Description |", "|---|---|---|---|"]
        required = set(section.schema.get("required", ()))
        for name, field in section.schema.get("properties", {}).items():
            path = f"{section.path}.{name}" if section.path else name
            default = "required" if name in required else _default(field)
            kind = _type(schema, field, path, anchors)
            lines.append(f"| `{name}` | {kind} | {default} | {_text(_description(schema, field))} |")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _sections(root: Schema, node: Schema, path: str, variant: str | None, seen: tuple[str, ...]) -> Iterator[Section]:
    """The objects below ``node`` (itself first), depth first in field order."""
    if "properties" in node:
        yield Section(path, variant, node)
        for name, field in node["properties"].items():
            yield from _below(root, field, f"{path}.{name}" if path else name, seen)


def _below(root: Schema, field: Schema, path: str, seen: tuple[str, ...]) -> Iterator[Section]:
    for form, suffix, variant in _forms(root, field):
        target, name = _resolve(root, form)
        if name in seen:  # a recursive type: its table is above
            continue
        yield from _sections(root, target, path + suffix, variant, (*seen, *([name] if name else [])))


def _forms(root: Schema, field: Schema) -> Iterator[tuple[Schema, str, str | None]]:
    """(schema, path suffix, variant) of each object form a field may take."""
    field, _ = _resolve(root, field)
    for member in field.get("anyOf", ()):
        yield from _forms(root, member)
    union = field.get("oneOf", ())
    if union:
        discriminator = field.get("discriminator", {})
        by_ref = {ref: value for value, ref in discriminator.get("mapping", {}).items()}
        for member in union:
            target, name = _resolve(root, member)
            value = by_ref.get(member.get("$ref", ""))
            yield target, "", f"{discriminator['propertyName']}: {value}" if value else target.get("title", name)
    if field.get("type") == "array" and isinstance(field.get("items"), Mapping):
        for form, suffix, variant in _forms(root, field["items"]):
            yield form, "[]" + suffix, variant
    values = field.get("additionalProperties")
    if field.get("type") == "object" and isinstance(values, Mapping):
        for form, suffix, variant in _forms(root, values):
            yield form, ".*" + suffix, variant
    if "properties" in field:
        yield field, "", None


def _resolve(root: Schema, node: Schema) -> tuple[Schema, str | None]:
    """The schema a ``$ref`` names (with the name), else the node itself."""
    ref = node.get("$ref")
    if not ref:
        return node, None
    name = ref.rsplit("/", 1)[-1]
    return root["$defs"][name], name


def _type(root: Schema, field: Schema, path: str, anchors: Mapping[tuple[str, str | None], str]) -> str:
    """The field's type in words; an object links to its table."""
    field, _ = _resolve(root, field)
    if "const" in field:
        return f"`{json.dumps(field['const'])}`"
    if "enum" in field:
        return "one of " + ", ".join(f"`{value}`" for value in field["enum"])
    members = field.get("anyOf") or field.get("oneOf")
    if members:
        forms = [member for member in members if member.get("type") != "null"]
        if field.get("oneOf"):
            return " or ".join(_link(path, _variant(root, field, member), anchors) for member in forms)
        return " or ".join(_type(root, member, path, anchors) for member in forms)
    kind = field.get("type")
    if kind == "array":
        items = field.get("items", {})
        return f"list of {_type(root, items, path + '[]', anchors)}"
    if kind == "object" and "properties" in field:
        return _link(path, None, anchors)
    if kind == "object":
        values = field.get("additionalProperties")
        return f"map of string to {_type(root, values, path + '.*', anchors)}" if isinstance(values, Mapping) else "map"
    bounds = [f"≥ {field['minimum']}"] if "minimum" in field else []
    bounds += [f"> {field['exclusiveMinimum']}"] if "exclusiveMinimum" in field else []
    bounds += [f"≤ {field['maximum']}"] if "maximum" in field else []
    return " ".join([str(kind or "any"), *bounds])


def _variant(root: Schema, union: Schema, member: Schema) -> str | None:
    for form, _, variant in _forms(root, union):
        if form is _resolve(root, member)[0]:
            return variant
    return None


def _link(path: str, variant: str | None, anchors: Mapping[tuple[str, str | None], str]) -> str:
    label = variant or "object"
    return f"[{label}](#{anchors[(path, variant)]})"


def _description(root: Schema, field: Schema) -> str:
    """The field's own description, else its type's."""
    if field.get("description"):
        return str(field["description"])
    target, _ = _resolve(root, field)
    return str(target.get("description", ""))


def _default(field: Schema) -> str:
    if "default" not in field:
        return ""
    return f"`{json.dumps(field['default'], ensure_ascii=False)}`"


def _text(text: str) -> str:
    """Text for one table cell (``<`` as text: ``output/<name>`` is no HTML tag)."""
    return " ".join(text.split()).replace("|", "\\|").replace("<", "&lt;")
