"""Shell scripts and setup notes that make nvidia the nodes' default runtime, read as one
document each.

Clusters are often set up by a script kept beside the manifests (``scripts/setup-gpu-node.sh``)
or by commands a README gives. Where one of them makes nvidia the container runtime's default,
GPU pods start with their GPUs without ``runtimeClassName`` (GS004's evidence,
``facts/runtimeevidence``). Read, by name (``*.sh``, ``*.bash``, ``*.md``), only when a line
that is not a comment says so:

- ``nvidia-ctk runtime configure ... --set-as-default``
  (https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html#configuring-containerd-for-kubernetes);
- containerd's ``default_runtime_name = "nvidia"`` (written by a heredoc or a ``sed``);
- Docker's ``"default-runtime": "nvidia"`` (``daemon.json``, for cri-dockerd) and K3s's or
  RKE2's ``default-runtime: nvidia``.

Any other such file is no input. The document holds what the line says and its number
(``facts.hostscripts.KEY``); findings on it point at the file's first line.
"""

from __future__ import annotations

import json
import re

from gpustack.lint.facts.hostscripts import KEY

SUFFIXES = (".sh", ".bash", ".md")
KEEP_NAMED = False  # a script named on the command line that sets nothing is no input either
_SETS_NVIDIA_DEFAULT = re.compile(
    r"nvidia-ctk\s+runtime\s+configure\b[^\n]*--set-as-default"
    r"|default_runtime_name\s*=\s*\\?[\"']nvidia\\?[\"']"
    r"|[\"']default-runtime[\"']\s*:\s*[\"']nvidia[\"']"
    r"|^\s*default-runtime:\s*[\"']?nvidia\b",
)


def wanted(file: str) -> bool:
    return file.endswith(SUFFIXES)


def as_document(data: bytes) -> bytes | None:
    """The first line that makes nvidia the default runtime, as the document the loader reads;
    None when no line does (or the file is not text)."""
    if b"nvidia" not in data:
        return None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None
    for number, line in enumerate(text.splitlines(), 1):
        if not line.lstrip().startswith(("#", "//")) and _SETS_NVIDIA_DEFAULT.search(line):
            return (json.dumps({KEY: {"line": number, "says": line.strip()[:200]}}) + "\n").encode()
    return None
