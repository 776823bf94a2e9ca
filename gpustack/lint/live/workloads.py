"""``gpustack lint --cluster``: the running workloads as the linter's input, one stream named
``<cluster>`` (as standard input is ``<stdin>``); a finding points at its object's
``Kind/namespace/name`` instead of file:line (``ReportOptions.live``).

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


LIVE_INPUT = "<cluster>"


def workload_input(snapshot: Snapshot) -> tuple[str, bytes]:
    """The running workloads, stripped, as one stream of JSON documents (YAML reads them), in
    the order the table lists kinds, and as the server lists them within a kind."""
    documents = [
        json.dumps(stripped(item), indent=1)
        for read, items in snapshot.objects.items()
        if read.purpose == "workloads"
        for item in items
        if not _controlled(item)
    ]
    return LIVE_INPUT, "".join(f"---\n{document}\n" for document in documents).encode()


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
