"""GS021: NFD or GFD relabelling nodes too often for the cluster's node count.

Every NFD worker and every GFD pod rewrites its node's labels each ``sleepInterval`` (NFD
through its NodeFeature object, GFD through NFD's features file or the node), each write
an etcd write. On hundreds of nodes frequent label updates swell etcd
(2 GB by default, 8 GB at most) and raise write latency; raise the interval on large
clusters. The rule: an interval shorter than 0.6 s × the number of nodes, i.e. more than
one label write per labeller every 0.6 s across the cluster (the 60 s default is short from
100 nodes on). ``0`` (no periodic relabelling) is fine. Needs the node count (``--spec``).

Where intervals are written: NFD's worker config (``core.sleepInterval`` in the
``nfd-worker.conf`` of a ConfigMap or in the chart values ``worker.config``, also as the
device plugin's ``nfd`` and the GPU Operator's ``node-feature-discovery`` subchart), the device
plugin chart's GFD interval (``gfd.sleepInterval`` up to 0.14, where GFD was a subchart; the
top-level ``sleepInterval`` from 0.15.0 on, whatever values.yaml declares), ``GFD_SLEEP_INTERVAL``
(GFD containers, the GPU Operator's ``gfd.env`` and ClusterPolicy). Of a chart's keys, only
those its templates read at the release's version count (``gpustack.lint.charts.chartkeys``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any

from gpustack.lint.charts import chartversions
from gpustack.lint.context import LintContext
from gpustack.lint.facts import clusterpolicy, registered
from gpustack.lint.facts.consumers import env_vars
from gpustack.lint.input.load import load_text
from gpustack.lint.model import Hit, Path, Resource, get_value
from gpustack.lint.registry import Rule
from gpustack.lint.releases import dispatch
from gpustack.spec.labelling import SECONDS_PER_NODE

GFD_ENV = "GFD_SLEEP_INTERVAL"
NFD_CONFIG_FILE = "nfd-worker.conf"
NFD_INTERVAL = ("worker", "config", "core", "sleepInterval")


@cache
def chart_sources() -> tuple[tuple[str, Path, str], ...]:
    """Chart values that set an interval: (chart, keys, labeller). NFD's at its values in every
    chart that deploys it (the charts' NFD subcharts take NFD's values); a GFD ``env`` list
    holds GFD_SLEEP_INTERVAL. Where a chart read the interval under different keys across
    versions, each is listed: only the keys the release's version reads are judged."""
    nfd = registered.component_values("feature-discovery", "node-feature-discovery")
    plugin, operator = registered.chart_of_role("device-plugin"), registered.chart_of_role("gpu-operator")
    return (
        *((chart, (*prefix, *NFD_INTERVAL), "NFD worker") for chart, prefix in nfd.items()),
        (plugin, (*registered.bundle_values(plugin, "gpu-feature-discovery"), "sleepInterval"), "GFD"),
        (plugin, ("sleepInterval",), "GFD"),
        (operator, (*registered.bundle_values(operator, "gpu-feature-discovery"), "env"), "GFD"),
    )
_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def seconds(value: Any) -> float | None:
    """A Go duration (``90s``, ``1m30s``, ``0``) in seconds, or None when it is not one."""
    text = str(value).strip() if isinstance(value, (str, int)) and not isinstance(value, bool) else ""
    if text == "0":
        return 0.0
    parts = _DURATION.findall(text)
    if not parts or "".join(number + unit for number, unit in parts) != text:
        return None
    return sum(float(number) * _UNITS[unit] for number, unit in parts)


def _judge(resource: Resource, path: Path, what: str, value: Any, ctx: LintContext) -> Iterator[Hit]:
    interval = seconds(value)
    if ctx.cluster is None or interval is None or interval == 0:
        return
    nodes = ctx.cluster.nodes
    wanted = nodes * SECONDS_PER_NODE
    if interval >= wanted:
        return
    yield Hit(
        resource,
        path,
        f"{what} relabels every {value} on {nodes} nodes: about {nodes / interval:.1f} label writes per "
        f"second to etcd; at least {wanted:.0f}s suits this cluster ({SECONDS_PER_NODE} s per node)",
        fix=f"Raise the interval to {wanted:.0f}s or more (GFD: also noTimestamp, so unchanged labels are "
        "not rewritten).",
    )


def _env_interval(env: Any) -> tuple[int, Any] | None:
    for index, item in enumerate(env if isinstance(env, list) else ()):
        if isinstance(item, Mapping) and item.get("name") == GFD_ENV and "value" in item:
            return index, item["value"]
    return None


def check(resource: Resource, ctx: LintContext) -> Iterator[Hit]:
    if ctx.cluster is None:
        return
    if resource.kind == "ConfigMap":
        text = resource.get(("data", NFD_CONFIG_FILE))
        documents = load_text(resource.file, text).resources if isinstance(text, str) else ()
        config = documents[0].data if documents else {}
        value = get_value(config, "core", "sleepInterval")
        if value is not None:
            yield from _judge(resource, ("data", NFD_CONFIG_FILE), f"NFD worker in {resource.ref}", value, ctx)
    if clusterpolicy.is_cluster_policy(resource):
        found = _env_interval(resource.get(("spec", "gfd", "env")))
        if found is not None:
            path = ("spec", "gfd", "env", found[0], "value")
            yield from _judge(resource, path, f"GFD in {resource.ref}", found[1], ctx)
    for pod in ctx.pods_of(resource):
        for container in pod.containers():
            for var in env_vars(container):
                if var.name == GFD_ENV and var.value is not None:
                    yield from _judge(resource, var.value_path, f"GFD in {resource.ref}", var.value, ctx)


def check_values(ctx: LintContext) -> Iterator[Hit]:
    if ctx.cluster is None:
        return
    for release in dispatch.releases(ctx):
        for chart, keys, labeller in chart_sources():
            if release.chart != chart or not chartversions.read_of(chart, release.version, (keys,), ctx.chart_values):
                continue
            value = get_value(release.values, *keys)
            if keys[-1] == "env":
                found = _env_interval(value)
                value = found[1] if found else None
            if value is not None:
                yield from _judge(*release.where(*keys), f"{labeller} in {release}", value, ctx)


RULE = Rule("GS021", "object", check, values=check_values)
