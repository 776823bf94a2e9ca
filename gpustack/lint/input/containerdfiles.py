"""containerd's TOML config files in the input, read as one document each.

Found by name only, so the default file set stays the YAML it was plus a few small files: K3s
and RKE2 read ``config.toml.tmpl`` and ``config-v3.toml.tmpl``
(https://docs.k3s.io/advanced#configuring-containerd), containerd ``config.toml`` and the
``*.toml`` files under a folder named ``containerd`` (``etc/containerd/conf.d/``). A file that names no
containerd plugin (``io.containerd.``) is no containerd config and is left out. The loader reads
YAML, so the file becomes a one-line JSON document holding its text under
``containerdconfig.FILE_KEY``: its findings point at the file's first line, and the lint cache
keys it by that document like any file.
"""

from __future__ import annotations

import json
import os

from gpustack.lint.facts.containerdconfig import FILE_KEY
from gpustack.lint.model import posix_path

NAMES = frozenset({"config.toml", "config.toml.tmpl", "config-v3.toml.tmpl"})
FOLDER = "containerd"
_PLUGIN = b"io.containerd."
KEEP_NAMED = True  # a file named on the command line is read as YAML if it is no containerd config


def wanted(file: str) -> bool:
    """Whether a file found in a folder may be containerd's config (by its name and folder)."""
    folder, name = os.path.split(file)
    return name in NAMES or (name.endswith(".toml") and FOLDER in posix_path(folder).split("/"))


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
