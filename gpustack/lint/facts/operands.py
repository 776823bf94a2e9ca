"""Chart releases that deploy a component, the GPU Operator's switched-off operands left out.

The GPU Operator's chart bundles operands (DCGM exporter, NFD, …) that its values turn off
with ``<operand>.enabled: false``; other charts deploy the component by being installed. The
rules that look for a component's releases (GS014's exporter, GS032's NFD) read them here.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, TypeVar

from gpustack.lint.facts import registered
from gpustack.lint.model import get_value
from gpustack.lint.releases import dispatch
from gpustack.lint.releases.release import HelmChartRelease

if TYPE_CHECKING:
    from gpustack.lint.context import LintContext

T = TypeVar("T")


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
