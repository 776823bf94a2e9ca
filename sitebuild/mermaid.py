"""Mermaid for the documentation site, served by the site itself: never from a CDN.

Material for MkDocs renders ``mermaid`` fences with the global ``mermaid`` when the page
defines one, and only otherwise loads it from unpkg.com. mkdocs.yml lists
``assets/javascripts/mermaid.min.js`` in ``extra_javascript``; this module, an MkDocs hook,
adds that file to the site from a local cache.

`python -m sitebuild.mermaid` fills the cache once: the npm package ``mermaid`` at
``VERSION`` from the npm registry ($npm_config_registry, else registry.npmjs.org), checked
against the registry's pinned ``INTEGRITY``, its ``dist/mermaid.min.js`` kept under
``~/.cache/gpustack/mermaid/<VERSION>/`` (``$XDG_CACHE_HOME`` if set), and prints its path.
A build with the cache empty fills it first.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import sys
import tarfile
import urllib.request
from pathlib import Path
from typing import Any

VERSION = "12.3.0"
# The registry's dist.integrity of mermaid@VERSION (`npm view mermaid@12.3.0 dist.integrity`).
INTEGRITY = "sha512-4113TdXeLAsMruJ79OpFL5O8+LTFXhQqZ260rF3tgUmiNAtRm4Uume04I+65PRN6yZ69J4f8rVYWW8zRk65UYw=="
MEMBER = "package/dist/mermaid.min.js"
SITE_PATH = "assets/javascripts/mermaid.min.js"  # mkdocs.yml's extra_javascript names it


class Unavailable(Exception):
    """The script is not cached and cannot be fetched as it should be."""


def cache_dir() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "gpustack" / "mermaid" / VERSION


def script() -> Path:
    """``mermaid.min.js``, fetched into the cache unless it is there."""
    path = cache_dir() / "mermaid.min.js"
    if path.is_file():
        return path
    registry = os.environ.get("npm_config_registry", "https://registry.npmjs.org/").rstrip("/")
    url = f"{registry}/mermaid/-/mermaid-{VERSION}.tgz"
    try:
        with urllib.request.urlopen(url, timeout=120) as response:
            tarball = response.read()
    except OSError as exc:
        raise Unavailable(f"Mermaid is not in {cache_dir()} and {url} cannot be read: {exc}") from None
    digest = "sha512-" + base64.b64encode(hashlib.sha512(tarball).digest()).decode()
    if digest != INTEGRITY:
        raise Unavailable(f"{url}: integrity {digest}, expected {INTEGRITY}")
    with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as archive:
        member = archive.extractfile(MEMBER)
        if member is None:
            raise Unavailable(f"{url}: no {MEMBER}")
        text = member.read()
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(f".{os.getpid()}.part")
    partial.write_bytes(text)
    partial.replace(path)  # whole or not at all, whoever fetches beside us
    return path


def on_files(files: Any, config: Any) -> Any:
    """MkDocs hook: the cached script as the site's ``SITE_PATH``."""
    from mkdocs.exceptions import PluginError
    from mkdocs.structure.files import File

    try:
        path = script()
    except Unavailable as exc:
        raise PluginError(str(exc)) from None
    files.append(File.generated(config, SITE_PATH, abs_src_path=str(path)))
    return files


if __name__ == "__main__":
    try:
        print(script())
    except Unavailable as exc:
        sys.exit(f"error: {exc}")
