"""``gpustack lint --cluster``: the running workloads as the linter's input, one object a
unit named ``Kind/namespace/name`` (where a finding points instead of file:line).

What the server adds is stripped, so that a finding is about what was applied: status,
``managedFields`` and the other bookkeeping fields of metadata, kubectl's last applied
configuration, a scheduled Pod's ``nodeName`` (the scheduler's, not the author's). A Pod or a
Job that a controller owns is left out: its owner (the Deployment, the CronJob) is linted
and holds the template it came from.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from gpustack.lint.live.client import Snapshot

SERVER_METADATA = ("managedFields", "resourceVersion", "uid", "generation", "creationTimestamp", "selfLink",
                   "ownerReferences", "deletionTimestamp", "deletionGracePeriodSeconds")
SERVER_ANNOTATIONS = ("kubectl.kubernetes.io/last-applied-configuration", "deployment.kubernetes.io/revision")


def workload_inputs(snapshot: Snapshot) -> list[tuple[str, bytes]]:
    """Each running workload's name and its stripped object as JSON (YAML reads it), in the
    order the table lists kinds, by namespace and name within a kind."""
    found = []
    for read, items in snapshot.objects.items():
        if read.purpose != "workloads":
            continue
        for item in items:
            if not _controlled(item):
                found.append((location(item), json.dumps(stripped(item), indent=1).encode()))
    return found


def location(item: Mapping[str, Any]) -> str:
    """``Kind/namespace/name`` (``Kind/name`` for a cluster-scoped object)."""
    metadata = item.get("metadata") or {}
    parts = (item.get("kind"), metadata.get("namespace"), metadata.get("name"))
    return "/".join(str(part) for part in parts if part)


def _controlled(item: Mapping[str, Any]) -> bool:
    return any(ref.get("controller") for ref in (item.get("metadata") or {}).get("ownerReferences") or ())


def stripped(item: Mapping[str, Any]) -> dict[str, Any]:
    """The object without what the server wrote into it."""
    metadata = {k: v for k, v in (item.get("metadata") or {}).items() if k not in SERVER_METADATA}
    annotations = {k: v for k, v in (metadata.get("annotations") or {}).items() if k not in SERVER_ANNOTATIONS}
    if annotations:
        metadata["annotations"] = annotations
    else:
        metadata.pop("annotations", None)
    result = {k: v for k, v in item.items() if k != "status"}
    result["metadata"] = metadata
    if item.get("kind") == "Pod" and isinstance(result.get("spec"), dict) and item.get("status"):
        result["spec"] = {k: v for k, v in result["spec"].items() if k != "nodeName"}
    return result
