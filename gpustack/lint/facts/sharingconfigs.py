"""The NVIDIA device plugin's sharing configs the set holds, wherever they live, and the shares
per GPU their time-slicing and MPS sections advertise.

A config is found as GS036 finds it: a plain config file (``version`` and ``sharing``, a
kustomize ``configMapGenerator`` input), a ConfigMap's value, or the named configs in the
device plugin chart's ``config.map`` and the GPU Operator chart's ``devicePlugin.config.data``
values. A shared resource is advertised under its own name, ``<name>.shared`` with
``renameByDefault: true``, or the entry's ``rename``
(https://github.com/NVIDIA/k8s-device-plugin#shared-access-to-gpus), ``replicas`` times per GPU.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import cache
from typing import TYPE_CHECKING, Any

from gpustack.lint.facts import registered
from gpustack.lint.model import Path, Resource, get_value

if TYPE_CHECKING:
    from gpustack.lint.context import LintContext
    from gpustack.lint.releases.release import HelmChartRelease

STRATEGIES = ("timeSlicing", "mps")


@cache
def chart_configs() -> Mapping[str, Path]:
    """Where chart values hold named device plugin config files (name -> YAML string): the
    device plugin chart's ``config.map``, the GPU Operator's under its device plugin's values."""
    operator = registered.chart_of_role("gpu-operator")
    return {
        registered.chart_of_role("device-plugin"): ("config", "map"),
        operator: (*registered.bundle_values(operator, "device-plugin"), "config", "data"),
    }


def is_plain_config(resource: Resource) -> bool:
    """A device plugin config file read as it is (no kind): ``version`` and ``sharing``."""
    return resource.kind is None and "version" in resource.data and "sharing" in resource.data


def shares_per_gpu(ctx: LintContext) -> Mapping[str, int]:
    """Each shared resource the set's configs advertise → the fewest shares per GPU any of them
    gives it."""
    return ctx.memo(("sharingconfigs", "shares"), lambda: _shares(_configs(ctx)))


def configmap_configs(resource: Resource) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Each value of a ConfigMap that holds a sharing config, by its key, read as YAML."""
    from gpustack.lint.releases import helmvalues

    data = resource.data.get("data")
    for key, text in data.items() if isinstance(data, Mapping) else ():
        if _may_share(text):
            yield str(key), helmvalues.yaml_mapping(text)


def release_configs(release: HelmChartRelease) -> Iterator[tuple[Path, Mapping[str, Any]]]:
    """Each named config of a device plugin or GPU Operator release's values that holds a
    sharing config, by its path in the values, read as YAML."""
    from gpustack.lint.releases import helmvalues

    keys = chart_configs().get(release.chart)
    configs = get_value(release.values, *keys) if keys else None
    for name, text in configs.items() if isinstance(configs, Mapping) else ():
        if _may_share(text):
            yield (*keys, str(name)), helmvalues.yaml_mapping(text)


def _may_share(text: Any) -> bool:
    """Whether a string may hold a sharing section that shares a resource (a cheap test before
    the YAML is read)."""
    return isinstance(text, str) and "sharing" in text and "replicas" in text


def _configs(ctx: LintContext) -> Iterator[Mapping[str, Any]]:
    from gpustack.lint.releases import dispatch

    for resource in ctx.of_kind(None):
        if is_plain_config(resource):
            yield resource.data
    for resource in ctx.of_kind("ConfigMap"):
        yield from (config for _, config in configmap_configs(resource))
    for release in dispatch.releases(ctx):
        yield from (config for _, config in release_configs(release))


def _shares(configs: Iterator[Mapping[str, Any]]) -> dict[str, int]:
    shares: dict[str, int] = {}
    for config in configs:
        sharing = config.get("sharing")
        for strategy in STRATEGIES:
            section = sharing.get(strategy) if isinstance(sharing, Mapping) else None
            if not isinstance(section, Mapping):
                continue
            resources = section.get("resources")
            for item in resources if isinstance(resources, list) else ():
                replicas = item.get("replicas") if isinstance(item, Mapping) else None
                if type(replicas) is not int or replicas < 2 or not isinstance(item.get("name"), str):
                    continue
                name = item.get("rename") or (f"{item['name']}.shared" if section.get("renameByDefault") is True else item["name"])
                shares[str(name)] = min(shares.get(str(name), replicas), replicas)
    return shares
