"""The built site in a real browser: Debian's chromium (``apt-get install chromium``) driven by
Playwright, never a browser Playwright downloads. The site is served from a local HTTP server;
every request the pages make must go to it (no CDN, no web fonts). The home page draws its
Mermaid diagram as SVG, the search finds a rule by a word of its summary, the palette toggles
dark mode, and no page logs an error. Screenshots go to $GPUSTACK_ARTIFACTS (else a temporary
folder), printed. Skipped without chromium or Playwright, except in CI (CI=true)."""

from __future__ import annotations

import functools
import os
import shutil
import sys
import threading
import time
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from site_build import unavailable

from gpustack.lint.catalogue import load_catalogue

# Material draws a diagram into a closed shadow root; the test's pages make it open to look inside.
OPEN_SHADOW_ROOTS = """
const attach = Element.prototype.attachShadow;
Element.prototype.attachShadow = function (init) { return attach.call(this, {...init, mode: "open"}); };
"""
# A rule and a word of its summary that the search must find it by.
SEARCHED_RULE, SEARCHED_WORD = "GS044", "NVSwitch"


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002  # the base class's name
        pass


@pytest.fixture(scope="module")
def server(site: Path) -> Iterator[str]:
    handler = functools.partial(_Quiet, directory=str(site))
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        unavailable("no chromium (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("playwright not installed (pip install '.[test]')")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium)
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = Path(os.environ["GPUSTACK_ARTIFACTS"]) / "docs" if "GPUSTACK_ARTIFACTS" in os.environ else None
    folder = folder or tmp_path_factory.mktemp("docs-screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    print(f"\nscreenshots: {folder}", file=sys.stderr)
    return folder


class Visit:
    """A browser page that records every request and every error it logs."""

    def __init__(self, browser: Any, origin: str) -> None:
        self.origin = origin
        self.page = browser.new_page(viewport={"width": 1280, "height": 900})
        self.page.add_init_script(OPEN_SHADOW_ROOTS)
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.page.on("console", lambda message: message.type == "error" and self.errors.append(message.text))
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))

    def open(self, path: str) -> Any:
        self.page.goto(self.origin + path, wait_until="networkidle")
        return self.page

    def elsewhere(self) -> list[str]:
        return [url for url in self.requests if not url.startswith((self.origin + "/", "data:", "blob:"))]


@pytest.fixture
def visit(browser: Any, server: str) -> Iterator[Visit]:
    visit = Visit(browser, server)
    yield visit
    visit.page.close()
    assert visit.errors == []
    assert visit.elsewhere() == []


def test_home_page_draws_its_mermaid_diagram(visit: Visit, artifacts: Path) -> None:
    started = time.monotonic()
    page = visit.open("/")
    svg = page.wait_for_selector(".mermaid svg", timeout=20_000)
    assert svg.bounding_box()["width"] > 100
    assert len(svg.query_selector_all("g.node")) >= 2 and svg.text_content().strip()
    page.screenshot(path=str(artifacts / "home.png"))
    palette = page.get_attribute("body", "data-md-color-scheme")
    page.click("label.md-header__button[for^='__palette_']:visible")
    assert page.get_attribute("body", "data-md-color-scheme") != palette
    page.wait_for_selector(".mermaid svg", timeout=20_000)  # redrawn in the other palette
    page.screenshot(path=str(artifacts / "home-dark.png"))
    print(f"home page: {time.monotonic() - started:.1f} s", file=sys.stderr)


def test_search_finds_a_rule_by_a_word_of_its_summary(visit: Visit, artifacts: Path) -> None:
    assert SEARCHED_WORD in load_catalogue()[SEARCHED_RULE].summary
    page = visit.open("/")
    found = page.locator(f".md-search-result__link[href*='rules/{SEARCHED_RULE}/']")
    deadline = time.monotonic() + 30
    # The search worker builds its index after the page loads; a query typed before it is
    # ready finds nothing until typed again.
    page.click("input.md-search__input")  # opens the search
    while not found.count() and time.monotonic() < deadline:
        page.keyboard.press("Control+A")
        page.keyboard.type(SEARCHED_WORD)
        page.wait_for_timeout(500)
    assert found.count(), page.inner_text(".md-search-result__meta")
    page.screenshot(path=str(artifacts / "search.png"))


def test_a_rule_page_shows_its_rule(visit: Visit, artifacts: Path) -> None:
    info = load_catalogue()["GS004"]
    page = visit.open("/rules/GS004/")
    assert page.inner_text(".md-content h1").removesuffix("¶") == f"{info.id} {info.name}"  # ¶: its permalink
    assert page.locator(".md-content pre code").count() == len(info.fires) + len(info.clean)
    assert page.locator("pre button[title='Copy to clipboard']").count() == len(info.fires) + len(info.clean)
    page.screenshot(path=str(artifacts / "rule-GS004.png"))


def test_the_spec_reference_links_its_tables(visit: Visit, artifacts: Path) -> None:
    page = visit.open("/spec/reference/")
    page.click(".md-content td a[href='#speccluster']")
    assert page.evaluate("location.hash") == "#speccluster"
    assert page.locator("#speccluster").is_visible()
    page.screenshot(path=str(artifacts / "spec-reference.png"))
