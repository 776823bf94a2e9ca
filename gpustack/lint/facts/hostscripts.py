"""A host script that makes nvidia the default runtime, as ``input/hostscripts`` reads it."""

from __future__ import annotations

from collections.abc import Mapping

from gpustack.lint.model import Resource

KEY = "hostScriptSetsNvidiaDefault"  # the document's one key: {line, says}


def is_host_script(resource: Resource) -> bool:
    return resource.kind is None and isinstance(resource.data.get(KEY), Mapping)


def described(resource: Resource) -> str:
    """How a message names it: ``scripts/gpu-node.sh line 12 (`nvidia-ctk runtime configure ...`)``."""
    found = resource.data[KEY]
    return f"{resource.file} line {found.get('line')} (`{found.get('says')}`)"
