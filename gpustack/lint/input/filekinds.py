"""Which files a run reads, told by their names alone: manifests (YAML, JSON), and nodes' files
read as one document each where they hold what a rule reads: containerd's config
(``containerdfiles``) and host scripts, setup notes and Terraform (``hostscripts``).

Kept apart from those readers: finding the files imports neither, so a run whose report is
cached, or whose input holds no such file, never does.
"""

from __future__ import annotations

import os

from gpustack.lint.model import posix_path

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
# K3s and RKE2 read config.toml.tmpl and config-v3.toml.tmpl
# (https://docs.k3s.io/advanced#configuring-containerd); containerd reads config.toml and the
# *.toml files a folder named containerd holds (etc/containerd/conf.d/).
CONTAINERD_NAMES = frozenset({"config.toml", "config.toml.tmpl", "config-v3.toml.tmpl"})
CONTAINERD_FOLDER = "containerd"
SCRIPT_SUFFIXES = (".sh", ".bash", ".md", ".tf", ".bicep", ".rc")


def node_file_reader(file: str) -> str | None:
    """The name of the module under ``gpustack.lint.input`` that reads ``file`` as a node's
    file, if any."""
    folder, name = os.path.split(file)
    if name in CONTAINERD_NAMES or (name.endswith(".toml") and CONTAINERD_FOLDER in posix_path(folder).split("/")):
        return "containerdfiles"
    if name.endswith(SCRIPT_SUFFIXES):
        return "hostscripts"
    return None
