"""How often NFD and GFD relabel nodes: the spec's interval, or one that suits the fleet.

Each relabel is an etcd write per node. ``gpustack lint`` (GS021) asks for at least 0.6 s per
node; where the spec leaves an interval out, the renderer takes 60 s or that much, whichever
is longer, so that what it renders lints clean; an interval the spec sets shorter is refused.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the linter imports SECONDS_PER_NODE without loading the spec models
    from gpustack.spec.models import GpuStack

SECONDS_PER_NODE = 0.6
DEFAULT_SECONDS = 60
_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}


def nodes(stack: GpuStack) -> int:
    return sum(pool.count for pool in stack.spec.nodePools)


def shortest_seconds(stack: GpuStack) -> float:
    """The shortest interval GS021 accepts for this fleet."""
    return nodes(stack) * SECONDS_PER_NODE


def sleep_interval(stack: GpuStack, configured: str | None) -> str:
    """``configured``, else 60 s or 0.6 s per node, whichever is longer."""
    if configured is not None:
        return configured
    return f"{max(DEFAULT_SECONDS, math.ceil(shortest_seconds(stack)))}s"


def duration_seconds(duration: str) -> float:
    """Seconds of a spec duration (``DURATION`` pattern: ``90s``, ``1m30s``)."""
    return sum(int(n) * _UNITS[unit] for n, unit in re.findall(r"(\d+)(ms|s|m|h)", duration))
