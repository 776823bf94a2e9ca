"""``mkdocs build --strict`` builds the site, every page in it; a link to a missing page or
anchor fails the build; and nothing the pages load comes from another site."""

from __future__ import annotations

import re
from pathlib import Path

from site_build import build, copy_of_the_site_sources

from gpustack.lint.catalogue import load_catalogue

# What a page loads: scripts, stylesheets, icons, images, fonts (links to read elsewhere are fine).
LOADED = re.compile(r"<(?:script|img|source|iframe)\b[^>]*\bsrc=\"([^\"]+)\"|<link\b[^>]*\bhref=\"([^\"]+)\"")


def test_every_page_is_built(site: Path) -> None:
    pages = {"index.html", "spec/reference/index.html", "rules/index.html", "ARCHITECTURE/index.html"}
    pages |= {f"rules/{rule_id}/index.html" for rule_id in load_catalogue()}
    assert sorted(page for page in pages if not (site / page).is_file()) == []
    assert (site / "assets/javascripts/mermaid.min.js").stat().st_size > 1_000_000


def test_rule_pages_are_in_the_navigation(site: Path) -> None:
    """Each rule page follows the rules index in the nav (sitebuild/rule_nav.py)."""
    html = (site / "rules" / "GS001" / "index.html").read_text(encoding="utf-8")
    links = re.findall(r'href="(?:\.\./)*rules/(GS\d{3})/"', (site / "index.html").read_text(encoding="utf-8"))
    assert sorted(set(links)) == sorted(load_catalogue())
    assert 'class="md-nav__link md-nav__link--active"' in html


def test_nothing_is_loaded_from_another_site(site: Path) -> None:
    remote = sorted(
        f"{page.relative_to(site)}: {url}"
        for page in site.rglob("*.html")
        for match in LOADED.finditer(page.read_text(encoding="utf-8"))
        for url in match.groups()
        if url and re.match(r"(?:https?:)?//", url)
    )
    assert remote == []


# Each broken the way the build must refuse: the strict build reports them all, then fails.
BROKEN_LINKS = {
    "[the rule](rules/GS001.md#no-such-section)": "no-such-section",  # an anchor the page lacks
    "[a page](rules/GS999.md)": "rules/GS999.md",  # a page that is not there
    "[the rules](/rules/)": "/rules/",  # absolute: breaks where the site is not at the domain's root
}


def test_a_broken_link_fails_the_build(tmp_path: Path, site: Path) -> None:
    sources = copy_of_the_site_sources(tmp_path / "src")
    with (sources / "docs" / "index.md").open("a", encoding="utf-8") as index:
        index.write("".join(f"\n{link}\n" for link in BROKEN_LINKS))
    result = build(sources, tmp_path / "site")
    assert result.returncode != 0
    assert [complaint for complaint in BROKEN_LINKS.values() if complaint not in result.stderr] == []
