"""Where a chart's values hold its containers and pod options: the shapes of ``data/value-pods.yaml``.

A ``Shape`` is one family of charts (bjw-s app-template's controllers, the k8s-at-home common
library's top-level keys): the key paths of its controllers, containers, pod options, probes
and persistence. ``chart_shapes`` maps each chart to the shapes its values may take.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from gpustack.shipped import lint_data


@dataclass(frozen=True)
class Shape:
    """Where one family of charts keeps containers and pod options (``data/value-pods.yaml``)."""

    name: str
    type: tuple[str, ...]
    strategy: tuple[str, ...]
    default_strategy: str | None  # a Deployment's strategy type when the values leave it unset
    replicas: tuple[str, ...]
    rolling_update: tuple[str, ...]  # {unavailable, surge}, relative to the controller
    persistence: tuple[str, ...]
    controllers: tuple[str, ...] = ()  # controllers shape
    pod: tuple[str, ...] = ()
    default_pod: tuple[str, ...] = ()
    containers: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    container_fields: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # single shape
    pod_fields: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    probes: tuple[str, ...] = ()  # a container's probe settings, relative to the container
    probes_on: Mapping[str, Any] | None = None  # where the chart enables probes by default; None: nowhere


@cache
def chart_shapes() -> Mapping[str, tuple[Shape, ...]]:
    """Chart name -> the shapes its values may take, first match wins."""
    data = lint_data("value-pods.yaml")
    shapes = {name: _shape(name, item) for name, item in data["shapes"].items()}
    return {chart: tuple(shapes[name] for name in names) for chart, names in data["charts"].items()}


def _keys(value: Any) -> tuple[str, ...]:
    return tuple(value) if isinstance(value, list) else (value,) if value else ()


def _shape(name: str, item: Mapping[str, Any]) -> Shape:
    return Shape(
        name=name,
        type=_keys(item.get("type")),
        strategy=_keys(item.get("strategy")),
        default_strategy=item.get("defaultStrategy"),
        replicas=_keys(item.get("replicas")),
        rolling_update=_keys(item.get("rollingUpdate")),
        persistence=_keys(item.get("persistence")),
        controllers=_keys(item.get("controllers")),
        pod=_keys(item.get("pod")),
        default_pod=_keys(item.get("defaultPod")),
        containers={group: _keys(key) for group, key in (item.get("containers") or {}).items()},
        container_fields={key: _keys(where) for key, where in (item.get("container") or {}).items()},
        pod_fields={key: _keys(where) for key, where in (item.get("pod") or {}).items()} if "container" in item else {},
        probes=_keys(item.get("probes")),
        probes_on=item.get("probesOn"),
    )
