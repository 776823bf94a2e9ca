"""containerd's TOML config files in the input, read as one document each.

Found by name only (``filekinds``), so the default file set stays the YAML it was plus a few
small files. A file that names no
containerd plugin (``io.containerd.``) is no containerd config and is left out. The loader reads
YAML, so the file becomes a one-line JSON document holding its text under
``containerdconfig.FILE_KEY``: its findings point at the file's first line, and the lint cache
keys it by that document like any file.
"""

from __future__ import annotations

import json

from gpustack.lint.facts.containerdconfig import FILE_KEY

_PLUGIN = b"io.containerd."
KEEP_NAMED = True  # a file named on the command line is read as YAML if it is no containerd config


def as_document(data: bytes) -> bytes | None:
    """The file as the document the loader reads; None when it is no containerd config (or not
    text)."""
    if _PLUGIN not in data:
        return None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None
    return (json.dumps({FILE_KEY: text}) + "\n").encode()
