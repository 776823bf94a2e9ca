"""GS032: selecting GPU nodes by an NFD PCI label that the set's NFD config never makes.

NFD names PCI labels by ``deviceLabelFields``: stock NFD (``[class, vendor]``) labels an NVIDIA
GPU ``pci-0300_10de.present`` or ``pci-0302_10de.present``; only ``deviceLabelFields: [vendor]``
(the NFD that NVIDIA's charts bundle, and gpustack's) makes ``pci-10de.present``.
The device plugin chart's default affinity and many guides select
``pci-10de.present``: with stock NFD in the set, no plugin pod is ever scheduled. The reverse
mismatch (class labels with a vendor-only NFD) strands workloads the same way.

NFD configs are read from node-feature-discovery releases, the NFD that nvidia-device-plugin
and gpu-operator releases deploy, and ``nfd-worker.conf`` ConfigMaps; without one in the set
nothing is reported. Selections are read from pod specs, the values of chart releases
(``nodeSelector``, ``affinity``; HAMi's ``devicePlugin.nvidiaNodeSelector``) and the device
plugin chart's default affinity (from chart 0.15.0 on; before it, ``affinity: {}``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from gpustack.lint.charts import chartversions
from gpustack.lint.charts.chartkeys import version_key
from gpustack.lint.context import LintContext
from gpustack.lint.facts import registered
from gpustack.lint.facts.nfd import STOCK_FIELDS, nfd_releases
from gpustack.lint.facts.podspec import node_label_tests, subject
from gpustack.lint.facts.valuepods import placement_pod_specs
from gpustack.lint.model import Hit, Path, PodSpec, Resource, get_value
from gpustack.lint.registry import Rule
from gpustack.lint.releases import dispatch, helmvalues
from gpustack.lint.releases.release import HelmChartRelease

NFD = "feature.node.kubernetes.io/"
VENDOR_LABEL = f"{NFD}pci-10de.present"
CLASS_LABELS = frozenset({f"{NFD}pci-0300_10de.present", f"{NFD}pci-0302_10de.present"})
PCI = ("worker", "config", "sources", "pci", "deviceLabelFields")
DEFAULT_AFFINITY_SINCE = (0, 15, 0)


@dataclass(frozen=True)
class _Selection:
    subject: str
    label: str
    resource: Resource
    path: Path


def check(ctx: LintContext) -> Iterator[Hit]:
    fields = set(_nfd_fields(ctx))
    if not fields:
        return
    vendor_only = ("vendor",) in fields
    by_class = any(f != ("vendor",) for f in fields)
    for selection in _selections(ctx):
        if selection.label == VENDOR_LABEL and not vendor_only:
            made = "`pci-0300_10de.present` / `pci-0302_10de.present` (deviceLabelFields [class, vendor])"
        elif selection.label in CLASS_LABELS and not by_class:
            made = "`pci-10de.present` (deviceLabelFields [vendor])"
        else:
            continue
        yield Hit(
            selection.resource,
            selection.path,
            f"{selection.subject} selects {selection.label}, a label the NFD in the set never sets: "
            f"it labels NVIDIA GPUs {made}",
            fix="Select the label the set's NFD makes, or set NFD's "
            "`worker.config.sources.pci.deviceLabelFields` to match.",
        )


def _nfd_fields(ctx: LintContext) -> Iterator[tuple[str, ...]]:
    for nfd in nfd_releases(ctx):
        yield _fields(nfd.values(*PCI), nfd.default_fields)
    for resource in ctx.of_kind("ConfigMap"):
        data = resource.get(("data",))
        text = data.get("nfd-worker.conf") if isinstance(data, Mapping) else None
        if isinstance(text, str):
            config = helmvalues.yaml_mapping(text)
            yield _fields(get_value(config, *PCI[2:]), STOCK_FIELDS)


def _device_plugin() -> str:
    """nvidia-device-plugin: its default affinity selects VENDOR_LABEL."""
    return registered.chart_of_role("device-plugin")


def _fields(value: Any, default: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(str(item) for item in value) if isinstance(value, list) and value else default


def _selections(ctx: LintContext) -> Iterator[_Selection]:
    for pod in ctx.pod_specs:
        yield from _tests(pod, subject(pod))
    for release in dispatch.releases(ctx):
        for keys in (("nodeSelector",), ("devicePlugin", "nvidiaNodeSelector")):
            selector = get_value(release.values, *keys)
            for label in selector if isinstance(selector, Mapping) else ():
                if label == VENDOR_LABEL or label in CLASS_LABELS:
                    yield _Selection(str(release), label, *release.where(*keys, label))
        for pod in placement_pod_specs(release, ("affinity",)):
            yield from _tests(pod, str(release))
        if _default_affinity(release) and get_value(release.values, "affinity") is None:
            yield _Selection(f"{release} (the chart's default affinity)", VENDOR_LABEL, release.resource, release.path)


def _default_affinity(release: HelmChartRelease) -> bool:
    """Whether the release's device plugin chart selects VENDOR_LABEL by default: from 0.15.0
    on (before, ``affinity: {}``); a range or no pin: the newest version gpustack knows in it."""
    if release.chart != _device_plugin():
        return False
    version = chartversions.resolve(release.chart, release.version).version or release.version
    return version is None or version_key(version) >= DEFAULT_AFFINITY_SINCE


def _tests(pod: PodSpec, name: str) -> Iterator[_Selection]:
    for test in node_label_tests(pod):
        if test.selects and (test.key == VENDOR_LABEL or test.key in CLASS_LABELS):
            yield _Selection(name, test.key, pod.resource, test.path)


RULE = Rule("GS032", "set", check)
