"""MkDocs hook: the rule pages (``docs/rules/GSNNN.md``, written by ``gpustack docs``) in the
nav after the rules index, in id order, so mkdocs.yml need not list each rule by hand."""

from __future__ import annotations

from pathlib import Path
from typing import Any

INDEX = "rules/index.md"


def on_config(config: Any) -> Any:
    pages = [f"rules/{path.name}" for path in sorted(Path(config.docs_dir).glob("rules/GS*.md"))]
    section = _section_of(config.nav, INDEX)
    if section is None:
        raise ValueError(f"mkdocs.yml: no nav section holds {INDEX}")
    section.extend(page for page in pages if page not in section)
    return config


def _section_of(nav: Any, page: str) -> list[Any] | None:
    """The nav list that holds ``page``, at any depth."""
    if isinstance(nav, list):
        if page in nav:
            return nav
        items = nav
    elif isinstance(nav, dict):
        items = list(nav.values())
    else:
        return None
    for item in items:
        found = _section_of(item, page)
        if found is not None:
            return found
    return None
