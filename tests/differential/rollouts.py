"""Rollouts on the control plane: each Deployment of a batch is created, left to complete
(or to give up), then changed, and its second rollout watched the same way.

Complete: the controller has seen the last change (``observedGeneration``) and every
replica is updated and available, no old one left. Stuck: its Progressing condition says
``ProgressDeadlineExceeded``, the Deployment controller's own verdict on a rollout that made
no progress for ``progressDeadlineSeconds``
(https://kubernetes.io/docs/concepts/workloads/controllers/deployment/#failed-deployment).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from tests.cluster.api import Api
from tests.differential.cluster import PROGRESS_DEADLINE
from tests.differential.scenarios import Scenario

SETTLE_SECONDS = PROGRESS_DEADLINE * 6 + 60  # a busy machine slows the controllers


@dataclass(frozen=True)
class Rolled:
    """Whether the first rollout completed, and then whether the update did (None: not tried)."""

    first: bool
    update: bool | None
    state: str
    nodes: frozenset[str] = frozenset()  # where its pods run at the end


def roll(api: Api, scenarios: list[Scenario]) -> dict[str, Rolled]:
    """Scenario name → how its Deployment ``d0`` rolled out (scenarios without one left out)."""
    names = [s.name for s in scenarios if any(w["kind"] == "Deployment" for w in s.workloads)]
    first = _settle(api, names)
    done = [name for name in names if first[name][0]]
    for name in done:
        api.merge_patch(_path(name), {"spec": {"template": {"metadata": {"annotations": {"gpustack.test/revision": "2"}}}}})
    second = _settle(api, done)
    return {name: Rolled(first[name][0], second[name][0] if name in second else None,
                         (second.get(name) or first[name])[1], _nodes(api, name)) for name in names}


def _nodes(api: Api, namespace: str) -> frozenset[str]:
    return frozenset(p["spec"]["nodeName"] for p in api.items(f"/api/v1/namespaces/{namespace}/pods")
                     if p["spec"].get("nodeName"))


def _path(namespace: str) -> str:
    return f"/apis/apps/v1/namespaces/{namespace}/deployments/d0"


def _settle(api: Api, names: list[str]) -> dict[str, tuple[bool, str]]:
    """Name → (complete, the status as text), once each is complete or stuck."""
    found: dict[str, tuple[bool, str]] = {}
    deadline = time.monotonic() + SETTLE_SECONDS
    while len(found) < len(names):
        for name in names:
            if name not in found:
                verdict = _verdict(api.get(_path(name)))
                if verdict is not None:
                    found[name] = verdict
        if time.monotonic() > deadline:
            late = sorted(set(names) - found.keys())
            raise AssertionError(f"rollouts neither complete nor stuck: {late[:10]}")
        time.sleep(1)
    return found


def _verdict(live: dict[str, Any]) -> tuple[bool, str] | None:
    status = live.get("status", {})
    if status.get("observedGeneration") != live["metadata"]["generation"]:
        return None
    want = live["spec"]["replicas"]
    text = (f"replicas {status.get('replicas', 0)}, updated {status.get('updatedReplicas', 0)}, "
            f"available {status.get('availableReplicas', 0)} of {want}")
    if status.get("replicas", 0) == status.get("updatedReplicas", 0) == status.get("availableReplicas", 0) == want:
        return True, text
    progressing = next((c for c in status.get("conditions", []) if c["type"] == "Progressing"), {})
    if progressing.get("reason") == "ProgressDeadlineExceeded":
        return False, f"{text}: ProgressDeadlineExceeded"
    return None
