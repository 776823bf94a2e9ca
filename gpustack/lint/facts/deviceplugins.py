"""Device plugins, whichever way they are deployed, and HAMi's plugin node selector.

A plugin container in a pod spec (by image and command), a GPU Operator ``ClusterPolicy``, or
a chart release (``release_plugin``); ``hami_node_selector`` is the nodes HAMi's plugin
DaemonSet selects, as the release's chart version reads its values.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gpustack.lint.facts.clusterpolicy import is_cluster_policy
from gpustack.lint.facts.images import image_repository
from gpustack.lint.facts.registered import Vendor, chart_of_role, plugin_vendors
from gpustack.lint.model import Path, PodSpec, Resource, get_value
from gpustack.lint.releases import dispatch
from gpustack.lint.releases.helmvalues import coalesce
from gpustack.lint.releases.release import HelmChartRelease

if TYPE_CHECKING:
    from gpustack.lint.context import LintContext

# Image repositories of the two plugins that both advertise nvidia.com/gpu.
# The same images also run GFD, the MPS daemon and HAMi's scheduler, so the container's
# command decides.
_PLUGIN_IMAGES: dict[str, Vendor] = {
    "nvcr.io/nvidia/k8s-device-plugin": "nvidia",
    "nvidia/k8s-device-plugin": "nvidia",
    "projecthami/hami": "hami",
}
_PLUGIN_COMMAND = "nvidia-device-plugin"


@dataclass(frozen=True)
class DevicePlugin:
    """A device plugin deployment found in one object."""

    vendor: Vendor
    resource: Resource
    path: Path  # the container's image, the ClusterPolicy's devicePlugin, or the release's chart
    pod: PodSpec | None = None
    release: HelmChartRelease | None = None

    @property
    def operator(self) -> bool:
        """Deployed by the GPU Operator (its ClusterPolicy, or the chart that creates it)."""
        if self.release is None:
            return self.pod is None
        return self.release.chart == chart_of_role("gpu-operator")

    @property
    def deployment(self) -> tuple[str | None, ...]:
        """What a cluster holds once: a chart's release, an object (kind and name), the GPU
        Operator. Two plugins of one deployment are the same plugin written twice (a values
        file beside the HelmChart or Application that delivers it, an overlay, another cluster
        of the repository, upstream's alternative static manifests in two namespaces), never a
        pair."""
        if self.operator:
            return ("gpu-operator",)
        if self.release is not None:
            return ("release", self.release.chart)
        return ("object", self.resource.ref.kind, self.resource.ref.name)

    def __str__(self) -> str:
        if self.vendor == "hami":
            name = "HAMi's device plugin"
        else:
            name = "the GPU Operator's device plugin" if self.operator else "NVIDIA's device plugin"
        if self.release is not None:
            where = self.release.owner
        else:
            where = self.resource.ref if self.resource.kind else f"values file {self.resource.file}"
        return f"{name} ({where})"


def device_plugins(resource: Resource, pods: Iterable[PodSpec]) -> Iterator[DevicePlugin]:
    """Device plugins that ``resource`` deploys as manifests; ``pods`` are its pod specs.
    ``release_plugin`` tells those of chart releases."""
    for pod in pods:
        # The containers' data as it is (a set rule visits every pod: building their
        # Container objects would cost more than the test).
        containers = pod.spec.get("containers")
        for index, data in enumerate(containers if isinstance(containers, list) else ()):
            image = data.get("image") if isinstance(data, Mapping) else None
            vendor = _PLUGIN_IMAGES.get(image_repository(image)) if isinstance(image, str) else None
            if vendor is None:
                continue
            command = data.get("command")
            first = command[0] if isinstance(command, list) and command else None
            program = first.rsplit("/", 1)[-1] if isinstance(first, str) else None
            # NVIDIA's image runs the plugin by default; HAMi's needs the explicit command.
            if program == _PLUGIN_COMMAND or (program is None and vendor == "nvidia"):
                yield DevicePlugin(vendor, resource, (*pod.path, "containers", index, "image"), pod=pod)
    if is_cluster_policy(resource):
        if resource.get(("spec", "devicePlugin", "enabled")) is not False:
            yield DevicePlugin("nvidia", resource, ("spec", "devicePlugin"))


def set_plugins(ctx: LintContext) -> list[DevicePlugin]:
    """Every device plugin the set deploys: manifests, ClusterPolicies and chart releases."""
    pods: dict[int, list[PodSpec]] = {}
    for pod in ctx.pod_specs:
        pods.setdefault(id(pod.resource), []).append(pod)
    plugins = [plugin for resource in ctx.resources for plugin in device_plugins(resource, pods.get(id(resource), ()))]
    return plugins + [plugin for release in dispatch.releases(ctx) if (plugin := release_plugin(release))]


def release_plugin(release: HelmChartRelease) -> DevicePlugin | None:
    """The device plugin a chart release deploys, if any: the charts of the registry that deploy
    one (``plugin_vendors``) do while ``devicePlugin.enabled`` is not false (each chart's
    values.yaml has the switch)."""
    vendor = plugin_vendors().get(release.chart)
    if vendor and get_value(release.values, "devicePlugin", "enabled") is not False:
        return DevicePlugin(vendor, release.resource, release.path, release=release)
    return None


# HAMi's plugin DaemonSet selects ``devicePlugin.nvidiaNodeSelector`` (``nvidianodeSelector`` up
# to chart v2.7), by default ``gpu: "on"``.
HAMI_SELECTOR_KEYS = ("nvidiaNodeSelector", "nvidianodeSelector")
HAMI_DEFAULT_SELECTOR: Mapping[str, Any] = {"gpu": "on"}


def hami_selector_keys(release: HelmChartRelease, ctx: LintContext) -> tuple[str, ...]:
    """The device plugin node selector keys the release's HAMi version reads (renamed in 2.8)."""
    from gpustack.lint.charts import chartversions

    alternatives = tuple(("devicePlugin", key) for key in HAMI_SELECTOR_KEYS)
    return tuple(path[-1] for path in chartversions.read_of(release.chart, release.version, alternatives, ctx.chart_values))


def hami_node_selector(values: Mapping[str, Any], keys: tuple[str, ...] = HAMI_SELECTOR_KEYS) -> Mapping[str, Any]:
    """The node selector of a HAMi release's device plugin: its values over the chart's default
    (Helm merges the maps; a null removes a default key). ``keys``: the names under
    ``devicePlugin`` the chart version reads (``hami_selector_keys``)."""
    selector = HAMI_DEFAULT_SELECTOR
    for key in keys:
        user = get_value(values, "devicePlugin", key)
        selector = coalesce(selector, user if isinstance(user, Mapping) else {})
    return selector
