"""GS005: a Deployment on shared GPUs that rolls out with RollingUpdate.

A RollingUpdate whose effective maxUnavailable is 0 starts each new pod before it stops an
old one. The old pods keep their GPU memory; when the GPU is packed, the new pods stay
Pending (HAMi: ``CardInsufficientMemory``), never become Ready, and the rollout deadlocks
(seed 001 §11). The default maxUnavailable of 25% rounds down to 0 for up to 3 replicas.

Without capacity context (issue 5 brings it) this is a warning for shared GPUs only (HAMi
memory/cores, time-sliced ``*.shared``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any

from gpustack.lint.context import LintContext
from gpustack.lint.gpu import gpu_amounts, is_shared_gpu_resource
from gpustack.lint.model import Hit, Path, PodSpec
from gpustack.lint.podspec import subject
from gpustack.lint.registry import Rule

TEMPLATE = ("spec", "template", "spec")
FIX = "Set `strategy.type: Recreate` (and remove `rollingUpdate`): old pods free their GPU share first."


def _scaled(value: Any, replicas: int, *, round_up: bool) -> int | None:
    """An IntOrString of a rolling update, resolved as the Deployment controller does."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    text = str(value).strip()
    if text.endswith("%") and text[:-1].isdigit():
        share = replicas * int(text[:-1]) / 100
        return math.ceil(share) if round_up else math.floor(share)
    return int(text) if text.isdigit() else None


def _shares(pod: PodSpec) -> dict[str, str]:
    shares: dict[str, str] = {}
    for container in pod.containers(include_init=False):
        for name, amount in gpu_amounts(container).items():
            if is_shared_gpu_resource(name):
                shares[name] = str(amount)
    return shares


def check(pod: PodSpec, ctx: LintContext) -> Iterator[Hit]:
    if pod.resource.kind != "Deployment" or pod.path != TEMPLATE:
        return
    shares = _shares(pod)
    strategy = pod.resource.get(("spec", "strategy"))
    strategy = strategy if isinstance(strategy, Mapping) else {}
    if not shares or strategy.get("type", "RollingUpdate") != "RollingUpdate":
        return
    replicas = pod.resource.get(("spec", "replicas"), 1)
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 1:
        return
    rolling = strategy.get("rollingUpdate")
    rolling = rolling if isinstance(rolling, Mapping) else {}
    raw_unavailable = rolling.get("maxUnavailable", "25%")
    unavailable = _scaled(raw_unavailable, replicas, round_up=False)
    surge = _scaled(rolling.get("maxSurge", "25%"), replicas, round_up=True)
    if unavailable != 0 or not surge:
        return  # old pods go first, or the controller forces maxUnavailable to 1
    path: Path = ("spec",)
    if "maxUnavailable" in rolling:
        path = ("spec", "strategy", "rollingUpdate", "maxUnavailable")
    elif "type" in strategy:
        path = ("spec", "strategy", "type")
    elif strategy:
        path = ("spec", "strategy")
    plural = "replica" if replicas == 1 else "replicas"
    share = ", ".join(f"{name} {value}" for name, value in sorted(shares.items()))
    yield Hit(
        pod.resource,
        path,
        f"{subject(pod)} shares a GPU ({share}) and rolls out with RollingUpdate "
        f"(maxUnavailable {raw_unavailable} of {replicas} {plural} = 0): new pods need their share "
        "while the old ones keep theirs, so on a packed GPU they stay Pending and the rollout deadlocks",
        fix=FIX,
    )


RULE = Rule("GS005", "pod", check, frozenset({"Deployment"}))
