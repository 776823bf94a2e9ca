"""What the linter reads of the chart registry (``specs/charts.yaml`` through ``gpustack.charts``).

Chart names by role, where each chart that deploys a component keeps that component's values,
which device plugin a chart deploys, and the GPU DRA drivers with their DeviceClasses. The
rules keep only what is theirs: keys inside a chart's values, versions a default changed at.
Each answer is computed once, on first use, so that a lint run that needs none reads no
registry.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Literal

from gpustack import charts

Vendor = Literal["hami", "nvidia"]
ValuesPath = tuple[str, ...]


@cache
def chart_of_role(role: str) -> str:
    """The published name of the one chart of ``role`` (``gpu-operator``, ``gpu-sharing``, …)."""
    (name,) = (chart.name for chart in charts.registry().values() if chart.role == role)
    return name


@cache
def names_of_roles(*roles: str) -> frozenset[str]:
    """The names releases of the charts of ``roles`` go by: published, and in their source
    repository (a release installed from Git names the chart as its folder does)."""
    return frozenset(
        name
        for chart in charts.registry().values()
        if chart.role in roles
        for name in (chart.name, chart.source_name)
        if name
    )


def bundle_values(chart: str, component: str) -> ValuesPath:
    """Where ``chart``'s values configure the ``component`` it bundles, e.g. ``("gfd",)``."""
    return _bundles(chart)[component]


@cache
def component_values(role: str, component: str) -> Mapping[str, ValuesPath]:
    """Chart → where its values configure ``component``: at the top for the charts of ``role``
    (the component is their main job), under the bundle's key for the charts that bundle it."""
    return {
        chart.name: () if chart.role == role else _bundles(chart.name)[component]
        for chart in charts.registry().values()
        if chart.role == role or component in _bundles(chart.name)
    }


@cache
def plugin_vendors() -> Mapping[str, Vendor]:
    """Chart → whose device plugin it deploys: the device plugin chart and the charts that
    bundle a device plugin deploy NVIDIA's, but the GPU sharing chart (HAMi), its own."""
    return {
        name: "hami" if charts.chart(name).role == "gpu-sharing" else "nvidia"
        for name in component_values("device-plugin", "device-plugin")
    }


@cache
def gpu_dra_drivers() -> tuple[str, ...]:
    """The driver names of the GPU DRA driver charts."""
    return tuple(chart.dra_driver for chart in charts.registry().values() if chart.dra_driver)


@cache
def gpu_device_classes() -> frozenset[str]:
    """The DeviceClasses the DRA driver charts create whose devices are GPUs (the charts create
    them, so a set rarely holds them: claims of them count without their objects)."""
    return frozenset(
        name
        for chart in charts.registry().values()
        for name in chart.device_classes
        if name not in chart.non_gpu_device_classes
    )


@cache
def non_gpu_device_classes() -> frozenset[str]:
    """The DeviceClasses the DRA driver charts create whose devices are no GPUs."""
    return frozenset(name for chart in charts.registry().values() for name in chart.non_gpu_device_classes)


@cache
def _bundles(chart: str) -> Mapping[str, ValuesPath]:
    """Component → values key of what ``chart`` bundles (those with values of their own)."""
    return {bundled.component: (bundled.values,) for bundled in charts.chart(chart).bundles if bundled.values}
