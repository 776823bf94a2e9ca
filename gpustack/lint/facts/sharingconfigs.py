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


def _configs(ctx: LintContext) -> Iterator[Mapping[str, Any]]:
    from gpustack.lint.releases import dispatch, helmvalues

    for resource in ctx.of_kind(None):
        if is_plain_config(resource):
            yield resource.data
    for resource in ctx.of_kind("ConfigMap"):
        data = resource.data.get("data")
        for text in data.values() if isinstance(data, Mapping) else ():
            if isinstance(text, str) and "replicas" in text and "sharing" in text:
                yield helmvalues.yaml_mapping(text)
    for release in dispatch.releases(ctx):
        keys = chart_configs().get(release.chart)
        configs = get_value(release.values, *keys) if keys else None
        for text in configs.values() if isinstance(configs, Mapping) else ():
            if isinstance(text, str) and "replicas" in text and "sharing" in text:
                yield helmvalues.yaml_mapping(text)


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
