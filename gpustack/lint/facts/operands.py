"""Chart releases that deploy a component, the GPU Operator's switched-off operands left out.

The GPU Operator's chart bundles operands (DCGM exporter, NFD, …) that its values turn off
with ``<operand>.enabled: false``; other charts deploy the component by being installed. The
rules that look for a component's releases (GS014's and GS043's exporter, GS032's NFD) read
them here, and where the exporter's ServiceMonitor sits in each chart's values and whether the
chart renders it. Where the operator deploys its driver or toolkit, in a ``ClusterPolicy`` or a
chart release (both on unless ``enabled: false``), is ``operator_deploys`` (GS035, GS044's
NVSwitch facts, GS055).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, TypeVar

from gpustack.lint.facts import clusterpolicy, registered
from gpustack.lint.model import Hit, Path, Resource, Severity, get_value
from gpustack.lint.releases import dispatch
from gpustack.lint.releases.release import HelmChartRelease

if TYPE_CHECKING:
    from gpustack.lint.context import LintContext

T = TypeVar("T")

# Where the DCGM exporter's ServiceMonitor sits in the values of a chart that deploys the
# exporter (the charts' values.yaml), and the chart versions from which it is on by default
# where it was off before: the GPU Operator's from 26.7.0, the exporter chart's always.
SERVICE_MONITOR = ("serviceMonitor",)
SERVICE_MONITOR_ON_SINCE = {"gpu-operator": "26.7.0"}


@cache
def exporter_charts() -> dict[str, tuple[tuple[str, ...], str]]:
    """Chart → (where its exporter's ServiceMonitor values sit, the version it is on from)."""
    return {
        chart: ((*prefix, *SERVICE_MONITOR), SERVICE_MONITOR_ON_SINCE.get(chart, "0"))
        for chart, prefix in registered.component_values("metrics-exporter", "dcgm-exporter").items()
    }


def component_releases(
    ctx: LintContext, charts: Mapping[str, T], operand: str
) -> Iterator[tuple[HelmChartRelease, T]]:
    """The set's releases of ``charts`` with each chart's entry, but a GPU Operator release
    that turns ``operand`` off (``<operand>.enabled: false``)."""
    operator = registered.chart_of_role("gpu-operator")
    for release in dispatch.releases(ctx):
        if release.chart not in charts:
            continue
        if release.chart == operator and get_value(release.values, operand, "enabled") is False:
            continue
        yield release, charts[release.chart]


def exporter_service_monitors(ctx: LintContext) -> Iterator[tuple[HelmChartRelease, tuple[str, ...]]]:
    """The set's DCGM exporter releases whose chart renders the exporter's ServiceMonitor (its
    ``enabled``, else on where the chart version turns it on by default), with where its values
    sit."""
    from gpustack.lint.charts.chartkeys import version_key

    for release, (keys, default_on) in component_releases(ctx, exporter_charts(), "dcgmExporter"):
        on_by_default = release.version is None or version_key(release.version) >= version_key(default_on)
        if get_value(release.values, *keys, "enabled", default=on_by_default) is True:
            yield release, keys


# The operator chart's bundled component → its section of a ClusterPolicy's spec.
POLICY_SECTIONS = {"driver": "driver", "container-toolkit": "toolkit"}


@dataclass(frozen=True)
class Deployed:
    """One place that deploys an operator operand: where to report, and what deploys it."""

    resource: Resource
    path: Path
    owner: str
    operand: str  # its values key: driver, toolkit

    def hit(self, but: str, fix: str, severity: Severity | None = None) -> Hit:
        """A finding here: ``<owner> deploys the operand (on by default), but <but>``."""
        return Hit(
            self.resource,
            self.path,
            f"{self.owner} deploys the GPU Operator's {self.operand} container ({self.operand}.enabled is true, "
            f"the chart's default), but {but}",
            severity=severity,
            fix=fix,
        )


def operator_deploys(ctx: LintContext, component: str) -> Iterator[Deployed]:
    """Each ClusterPolicy and GPU Operator release of the set that deploys ``component`` (driver,
    container-toolkit), in input order."""
    section = POLICY_SECTIONS[component]
    for resource in clusterpolicy.cluster_policies(ctx):
        if resource.get(("spec", section, "enabled")) is not False:
            yield Deployed(resource, ("spec", section), str(resource.ref), section)
    operator = registered.chart_of_role("gpu-operator")
    values = registered.bundle_values(operator, component)
    for release in dispatch.releases(ctx):
        if release.chart == operator and get_value(release.values, *values, "enabled") is not False:
            resource, path = release.where(*values, "enabled")
            yield Deployed(resource, path, release.owner, section)
