"""The documentation site's generated pages: one per rule and their index (from ``policies/``)
and the spec reference (from ``specs/gpustack.schema.json``). ``gpustack docs`` writes them
into the docs folder; a test fails when the committed ones differ from what this makes."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urljoin

from gpustack.lint.catalogue import RuleInfo, load_catalogue
from gpustack.lint.rule_docs import RULES_FOLDER, page_path, rule_page, rules_index_markdown
from gpustack.shipped import data_dir
from gpustack.spec.reference_docs import PAGE_PATH, reference_markdown

DOCS_FOLDER = "docs"  # the site's pages, from the repository root


def page_url(info: RuleInfo, base: str | None) -> str:
    """The rule's page below ``base``, where the repository's files are served (GitHub's
    ``…/blob/<ref>/``); without a base, its path in the repository."""
    path = f"{DOCS_FOLDER}/{page_path(info)}"
    return urljoin(base if base.endswith("/") else base + "/", path) if base else path


def generated_pages() -> dict[str, str]:
    """Page text by path in the docs folder."""
    catalogue = load_catalogue()
    pages = {f"{RULES_FOLDER}/index.md": rules_index_markdown(catalogue)}
    pages |= {page_path(info): rule_page(info) for info in catalogue.values()}
    schema = json.loads((data_dir("specs") / "gpustack.schema.json").read_text(encoding="utf-8"))
    pages[PAGE_PATH] = reference_markdown(schema)
    return pages


def stale_rule_pages(folder: Path, pages: dict[str, str]) -> list[Path]:
    """Rule pages in ``folder`` of rules the catalogue no longer has."""
    return sorted(path for path in (folder / RULES_FOLDER).glob("GS*.md") if f"{RULES_FOLDER}/{path.name}" not in pages)


def write_pages(folder: Path) -> list[str]:
    """Write the pages into ``folder`` (removing rule pages of rules gone); the paths changed."""
    pages = generated_pages()
    changed = []
    for path in stale_rule_pages(folder, pages):
        path.unlink()
        changed.append(str(path.relative_to(folder)))
    for name, text in pages.items():
        target = folder / name
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
            changed.append(name)
    return changed
