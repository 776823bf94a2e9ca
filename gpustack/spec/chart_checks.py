"""Chart versions: each release pins a version whose values the linter can check.

``gpustack lint`` checks a rendered release's values against the keys of the chart version it
pins (``gpustack/lint/data/chart-keys``); for a version it has no key data for, it can only
say that nothing is checked. So validate accepts a chart version only when it is the registry's
pin (``specs/charts.yaml``), one with key data, or one the user vouches for with
``allowUnknownVersion: true`` next to it.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack import charts
from gpustack.charts import dra_driver_chart
from gpustack.lint.charts import chartkeys
from gpustack.spec.models import GpuStack
from gpustack.spec.models.base import ChartVersioned
from gpustack.spec.pool_checks import Finding


def _releases(stack: GpuStack) -> Iterator[tuple[tuple[str, ...], ChartVersioned, str]]:
    spec = stack.spec
    yield ("spec", "devicePlugin"), spec.devicePlugin, "nvidia-device-plugin"
    yield ("spec", "gpuOperator"), spec.gpuOperator, "gpu-operator"
    yield ("spec", "nfd"), spec.nfd, "node-feature-discovery"
    yield ("spec", "monitoring"), spec.monitoring, "kube-prometheus-stack"
    yield ("spec", "monitoring", "dcgmExporter"), spec.monitoring.dcgmExporter, "dcgm-exporter"
    yield ("spec", "sharing", "hami"), spec.sharing.hami, "hami"
    yield ("spec", "dra"), spec.dra, dra_driver_chart(spec.dra.driver).name


def check_chart_versions(stack: GpuStack) -> Iterator[Finding]:
    for path, section, name in _releases(stack):
        chart = charts.chart(name)
        version = section.version
        if version is None or section.allowUnknownVersion or not section.enabled:
            continue
        known = chartkeys.versions(chart.source_name or name)
        wanted = chartkeys.normalise_version(version)
        if wanted == chartkeys.normalise_version(chart.version) or not known:
            continue
        if wanted not in {chartkeys.normalise_version(v) for v in known}:
            accepted = sorted({*known, chart.version}, key=chartkeys.version_key)
            yield (*path, "version"), (
                f"{name} {version} is a version gpustack has no key data for, so `gpustack lint` could not check "
                f"its values: use one of {', '.join(accepted)}, or set `allowUnknownVersion: true` next to the "
                "version to render it unchecked"
            )
