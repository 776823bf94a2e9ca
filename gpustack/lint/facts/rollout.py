"""A Deployment's rollout: whether its RollingUpdate starts a new pod before it stops an old one.

maxUnavailable rounds down and maxSurge up, as the Deployment controller resolves them
(https://kubernetes.io/docs/concepts/workloads/controllers/deployment/#strategy): the default
25 % is 0 unavailable and 1 surge for up to three replicas, so each new pod must start while
every old pod still holds what it has (GPUs, a ReadWriteOnce volume).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpustack.lint.model import DeleteKey, Path, PodSpec, SetValue

# The API server rejects rollingUpdate beside Recreate, so the fix removes it.
RECREATE = (SetValue(("spec", "strategy", "type"), "Recreate"), DeleteKey(("spec", "strategy", "rollingUpdate")))


def _scaled(value: Any, replicas: int, *, round_up: bool) -> int | None:
    """An IntOrString of a rolling update, resolved as the Deployment controller does."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    text = str(value).strip()
    if text.endswith("%") and text[:-1].isdigit():
        share = replicas * int(text[:-1]) / 100
        return math.ceil(share) if round_up else math.floor(share)
    return int(text) if text.isdigit() else None


@dataclass(frozen=True)
class Rollout:
    """A RollingUpdate that starts new pods before it stops old ones."""

    replicas: int
    max_unavailable: Any  # as written
    path: Path  # where the strategy is (or would be) written

    def describe(self) -> str:
        plural = "replica" if self.replicas == 1 else "replicas"
        return f"maxUnavailable {self.max_unavailable} of {self.replicas} {plural} = 0"


def surge_first(pod: PodSpec) -> Rollout | None:
    """The workload's rollout when it starts new pods before stopping old ones, else None."""
    strategy = pod.resource.get(("spec", "strategy"))
    strategy = strategy if isinstance(strategy, Mapping) else {}
    if strategy.get("type", "RollingUpdate") != "RollingUpdate":
        return None
    replicas = replica_count(pod)
    if replicas is None or replicas < 1:
        return None
    rolling = strategy.get("rollingUpdate")
    rolling = rolling if isinstance(rolling, Mapping) else {}
    raw_unavailable = rolling.get("maxUnavailable", "25%")
    unavailable = _scaled(raw_unavailable, replicas, round_up=False)
    surge = _scaled(rolling.get("maxSurge", "25%"), replicas, round_up=True)
    if unavailable != 0 or not surge:
        return None  # old pods go first, or the controller forces maxUnavailable to 1
    path: Path = ("spec",)
    if "maxUnavailable" in rolling:
        path = ("spec", "strategy", "rollingUpdate", "maxUnavailable")
    elif "type" in strategy:
        path = ("spec", "strategy", "type")
    elif strategy:
        path = ("spec", "strategy")
    return Rollout(replicas, raw_unavailable, path)


def replica_count(pod: PodSpec) -> int | None:
    """How many pods the workload runs (1 for a Pod), None when it is not a plain number."""
    if pod.resource.kind == "Pod":
        return 1
    replicas = pod.resource.get(("spec", "replicas"), 1)
    return replicas if isinstance(replicas, int) and not isinstance(replicas, bool) else None
