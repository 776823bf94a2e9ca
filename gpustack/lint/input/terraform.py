"""Terraform files as python-hcl2 reads them: the parse, its string literals, and the Helm charts
a file releases (``helm_release``), for the readers of GPU node pools (``cloudpools``), of helm
installs in scripts and Terraform (``hostscripts``) and of values files' charts
(``releases/outside.py``)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

_RELEASE = re.compile(r'resource\s+"helm_release"\s+"([^"]+)"')
# values = [file("${path.module}/values.yaml")], or a template that fills in nothing
_FILE = re.compile(r'^\$\{(?:file\(\s*"([^"]+)"\s*\)|templatefile\(\s*"([^"]+)"\s*,\s*\{\s*\}\s*\))\}$')
_TEMPLATE_FILE = re.compile(r'\btemplatefile\(\s*"([^"]+)"')
_MODULE_PATH = re.compile(r"^\$\{path\.(?:module|root)\}/")


@dataclass(frozen=True)
class HelmRelease:
    """A ``helm_release`` resource as its literals tell it
    (https://registry.terraform.io/providers/hashicorp/helm/latest/docs/resources/release)."""

    resource: str  # its Terraform name
    line: int
    chart: str | None  # None where an expression names it
    version: str | None
    name: str | None
    namespace: str | None
    files: tuple[str, ...]  # values files (``file()``), relative to the Terraform file's folder
    templates: tuple[str, ...]  # values templates (``templatefile()``): files whose text Terraform fills in
    inline: tuple[str, ...]  # values written as YAML string literals (heredocs)
    sets: tuple[tuple[str, str, str], ...]  # set blocks: name, value, type ("auto" or "string")
    unknown: str | None  # why its values cannot be told from the file, if they cannot


@lru_cache(maxsize=8)
def parse(text: str) -> Mapping[str, Any] | None:
    """The file's blocks, or None for HCL python-hcl2 cannot read. Kept for the last few texts:
    a file's node pools and its ``helm_release`` resources are read from one parse (callers only
    read it)."""
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


def helm_releases(text: str) -> Iterator[HelmRelease]:
    """The ``helm_release`` resources of a Terraform file, in file order."""
    if "helm_release" not in text:
        return
    parsed = parse(text)
    if parsed is None:
        return
    lines = {match.group(1): text.count("\n", 0, match.start()) + 1 for match in _RELEASE.finditer(text)}
    for block in parsed.get("resource", ()):
        for label, releases in block.items() if isinstance(block, Mapping) else ():
            if _unquoted(label) != "helm_release" or not isinstance(releases, Mapping):
                continue
            for resource, body in releases.items():
                if isinstance(body, Mapping):
                    name = _unquoted(resource)
                    yield _release(name, lines.get(name, 1), body)


def _release(resource: str, line: int, body: Mapping[str, Any]) -> HelmRelease:
    files, templates, inline, unknown = [], [], [], None
    for entry in body.get("values") or ():
        if (literal := string(entry)) is not None and "${" not in literal:
            inline.append(_heredoc_body(literal))
        elif (found := _FILE.match(str(entry))) and "${" not in (path := _MODULE_PATH.sub("", found.group(1) or found.group(2))):
            files.append(path)
        else:
            templates += [_MODULE_PATH.sub("", path) for path in _TEMPLATE_FILE.findall(str(entry))]
            unknown = unknown or f"a values entry Terraform computes ({str(entry)[:60]})"
    sets = []
    for kind in ("set", "set_sensitive"):
        for item in body.get(kind) or ():
            name, value = (string(item.get(key)) if isinstance(item, Mapping) else None for key in ("name", "value"))
            if name is None or value is None or "${" in name + value:
                unknown = unknown or f"a {kind} value Terraform computes"
                continue
            sets.append((name, value, string(item.get("type")) or "auto"))
    if body.get("set_list") or body.get("dynamic"):
        unknown = unknown or "values Terraform computes (set_list, dynamic blocks)"
    return HelmRelease(
        resource=resource, line=line, chart=_literal(body.get("chart")), version=_literal(body.get("version")),
        name=_literal(body.get("name")), namespace=_literal(body.get("namespace")), files=tuple(files),
        templates=tuple(templates), inline=tuple(inline), sets=tuple(sets), unknown=unknown,
    )


def _heredoc_body(text: str) -> str:
    """A heredoc's lines (``<<-EOT`` … ``EOT``, as python-hcl2 keeps it), or the string itself."""
    if not text.startswith("<<"):
        return text
    marker = text.split("\n", 1)[0].lstrip("<-").strip()
    lines = text.split("\n")[1:]
    if lines and lines[-1].strip() == marker:
        lines = lines[:-1]
    return "\n".join(lines)


def _literal(value: object) -> str | None:
    """A string literal that interpolates nothing."""
    found = string(value)
    return found if found and "${" not in found else None


def _unquoted(label: object) -> str:
    return string(label) or str(label)
