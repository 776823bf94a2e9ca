"""The site's generated pages (``gpustack docs``): committed as generated, a page for every
rule (the very text ``gpustack explain`` prints) with a row in the index, and a table in the
spec reference for every object of the spec's JSON Schema, with every field."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gpustack.cli import main
from gpustack.lint.catalogue import load_catalogue
from gpustack.lint.rule_docs import GENERATED
from gpustack.site_pages import generated_pages, stale_rule_pages

DOCS = Path(__file__).resolve().parents[2] / "docs"
CATALOGUE = load_catalogue()


def test_the_committed_pages_are_current() -> None:
    pages = generated_pages()
    stale = [name for name, text in pages.items() if not (DOCS / name).is_file() or (DOCS / name).read_text() != text]
    assert stale == [], "stale pages: run `gpustack docs`"
    assert stale_rule_pages(DOCS, pages) == [], "pages of rules that are gone: run `gpustack docs`"


@pytest.mark.parametrize("rule_id", list(CATALOGUE))
def test_each_rule_page_is_what_explain_prints(rule_id: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["explain", rule_id])
    assert exit_.value.code in (0, None)
    printed = capsys.readouterr().out
    body, page_line = printed.rsplit("\nPage: ", 1)
    assert page_line == f"docs/rules/{rule_id}.md\n"
    page = (DOCS / "rules" / f"{rule_id}.md").read_text(encoding="utf-8")
    assert page.replace(f"{GENERATED}\n\n", "", 1) == body  # less the line that says it is generated


def test_the_rules_index_links_every_rule_once() -> None:
    index = (DOCS / "rules" / "index.md").read_text(encoding="utf-8")
    assert re.findall(r"\]\((GS\d{3})\.md\)", index) == list(CATALOGUE)


def _tables(page: str) -> dict[str, set[str]]:
    """Heading -> the field names of its table."""
    tables: dict[str, set[str]] = {}
    heading = ""
    for line in page.splitlines():
        if line.startswith("## "):
            heading = line[3:]
            tables[heading] = set()
        elif heading and (row := re.match(r"\| `([^`]+)` \|", line)):
            tables[heading].add(row.group(1))
    return tables


def test_every_object_of_the_schema_has_a_table_with_every_field(repo: Path) -> None:
    schema = json.loads((repo / "specs" / "gpustack.schema.json").read_text(encoding="utf-8"))
    objects = {"(top level)": schema, **schema["$defs"]}
    tables = list(_tables((DOCS / "spec" / "reference.md").read_text(encoding="utf-8")).values())
    missing = [name for name, definition in objects.items() if set(definition.get("properties", {})) not in tables]
    assert missing == []


def test_docs_writes_the_pages_and_removes_those_of_rules_gone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "GS999.md").write_text("# a rule that is gone\n")
    for expected in ("rules/GS999.md", "up to date"):
        with pytest.raises(SystemExit) as exit_:
            main(["docs", str(tmp_path)])
        out = capsys.readouterr().out
        assert exit_.value.code in (0, None) and expected in out
    written = sorted(str(path.relative_to(tmp_path)) for path in tmp_path.rglob("*.md"))
    assert written == sorted(generated_pages())


def test_docs_into_what_is_no_folder_is_a_clean_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "file").write_text("")
    for given in (tmp_path / "file", tmp_path / "missing"):
        with pytest.raises(SystemExit) as exit_:
            main(["docs", str(given)])
        assert exit_.value.code == 2
        assert capsys.readouterr().err == f"error: {given}: no such folder (the site's docs folder, e.g. docs)\n"
