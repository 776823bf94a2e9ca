"""sitebuild/mermaid.py: the site's Mermaid comes from the cache, and what fills the cache is
the npm package whose integrity the registry published, or nothing."""

from __future__ import annotations

import functools
import importlib.util
import io
import tarfile
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from site_build import REPO


@pytest.fixture
def mermaid(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """The module, with its cache in a folder of the test's own."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    spec = importlib.util.spec_from_file_location("sitebuild_mermaid", REPO / "sitebuild" / "mermaid.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002  # the base class's name
        pass


@pytest.fixture
def registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mermaid: ModuleType) -> Iterator[Path]:
    """A local npm registry serving a tarball in place of mermaid's."""
    root = tmp_path / "registry"
    tarball = root / "mermaid" / "-" / f"mermaid-{mermaid.VERSION}.tgz"
    tarball.parent.mkdir(parents=True)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        script = b"globalThis.mermaid = {};"
        member = tarfile.TarInfo(mermaid.MEMBER)
        member.size = len(script)
        archive.addfile(member, io.BytesIO(script))
    tarball.write_bytes(buffer.getvalue())
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(root)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    monkeypatch.setenv("npm_config_registry", f"http://127.0.0.1:{httpd.server_address[1]}/")
    yield tarball
    httpd.shutdown()
    httpd.server_close()


def test_a_tarball_of_another_integrity_is_refused(mermaid: ModuleType, registry: Path) -> None:
    with pytest.raises(mermaid.Unavailable, match="integrity sha512-"):
        mermaid.script()
    assert not mermaid.cache_dir().exists() or not any(mermaid.cache_dir().iterdir())


def test_a_cached_script_is_used_as_it_is(mermaid: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("npm_config_registry", "http://127.0.0.1:9/")  # nothing listens there
    cached = mermaid.cache_dir() / "mermaid.min.js"
    cached.parent.mkdir(parents=True)
    cached.write_text("globalThis.mermaid = {};")
    assert mermaid.script() == cached


def test_an_unreachable_registry_says_where_the_cache_is(mermaid: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("npm_config_registry", "http://127.0.0.1:9/")
    with pytest.raises(mermaid.Unavailable, match=f"Mermaid is not in {mermaid.cache_dir()}"):
        mermaid.script()
