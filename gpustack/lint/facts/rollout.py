"""A Deployment's rollout: whether its RollingUpdate starts a new pod before it stops an old one.

maxUnavailable rounds down and maxSurge up, as the Deployment controller resolves them
(https://kubernetes.io/docs/concepts/workloads/controllers/deployment/#strategy): the default
25 % is 0 unavailable and 1 surge for up to three replicas, so each new pod must start while
every old pod still holds what it has (GPUs, a ReadWriteOnce volume). An OpenShift
DeploymentConfig's `Rolling` strategy resolves `rollingParams` the same way, with the same
defaults (https://docs.redhat.com/en/documentation/openshift_container_platform/4.14/html/building_applications/deployments#deployments-rolling-strategy_rolling-strategy).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpustack.lint.model import DeleteKey, Path, PodSpec, SetValue

DEPLOYMENT_CONFIG = "DeploymentConfig"
# Per kind: the rolling strategy's type and the key of its parameters.
_ROLLING = {"Deployment": ("RollingUpdate", "rollingUpdate"), DEPLOYMENT_CONFIG: ("Rolling", "rollingParams")}
ROLLED_OUT_KINDS = frozenset(_ROLLING)


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
    params: str = "rollingUpdate"  # the key of the strategy's parameters
    strategy: str = "RollingUpdate"  # the strategy's type, as the kind names it

    @property
    def recreate(self) -> tuple[SetValue, DeleteKey]:
        """The fix: Recreate, without the rolling parameters (the API server rejects rollingUpdate
        beside it)."""
        return SetValue(("spec", "strategy", "type"), "Recreate"), DeleteKey(("spec", "strategy", self.params))

    def describe(self) -> str:
        plural = "replica" if self.replicas == 1 else "replicas"
        return f"maxUnavailable {self.max_unavailable} of {self.replicas} {plural} = 0"


def surge_first(pod: PodSpec) -> Rollout | None:
    """The workload's rollout when it starts new pods before stopping old ones, else None
    (a Deployment's or a DeploymentConfig's; None for other kinds)."""
    kind_rolling = _ROLLING.get(str(pod.resource.kind))
    if kind_rolling is None:
        return None
    rolling_type, params = kind_rolling
    strategy = pod.resource.get(("spec", "strategy"))
    strategy = strategy if isinstance(strategy, Mapping) else {}
    if strategy.get("type", rolling_type) != rolling_type:
        return None
    replicas = replica_count(pod)
    if replicas is None or replicas < 1:
        return None
    rolling = strategy.get(params)
    rolling = rolling if isinstance(rolling, Mapping) else {}
    raw_unavailable = rolling.get("maxUnavailable", "25%")
    unavailable = _scaled(raw_unavailable, replicas, round_up=False)
    surge = _scaled(rolling.get("maxSurge", "25%"), replicas, round_up=True)
    if unavailable != 0 or not surge:
        return None  # old pods go first, or the controller forces maxUnavailable to 1
    path: Path = ("spec",)
    if "maxUnavailable" in rolling:
        path = ("spec", "strategy", params, "maxUnavailable")
    elif "type" in strategy:
        path = ("spec", "strategy", "type")
    elif strategy:
        path = ("spec", "strategy")
    return Rollout(replicas, raw_unavailable, path, params, rolling_type)


def replica_count(pod: PodSpec) -> int | None:
    """How many pods the workload runs (1 for a Pod), None when it is not a plain number."""
    if pod.resource.kind == "Pod":
        return 1
    replicas = pod.resource.get(("spec", "replicas"), 1)
    return replicas if isinstance(replicas, int) and not isinstance(replicas, bool) else None
