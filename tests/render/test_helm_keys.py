"""Every Helm values key gpustack emits is read by the templates of the chart it is for, at
that version.

Helm silently ignores a typo such as ``gfd.sleepIntervall``, and equally a key the chart's
values.yaml declares but no template reads (the device plugin's ``gfd.sleepInterval``); this
test makes both fail. The keys are the linter's (``gpustack.lint.charts.chartkeys``, derived from the
packaged charts' templates and checked against them in tests/lint/test_chart_keys.py): keys
below a subtree the templates take whole (node selectors, affinity, ``config.map``, …) pass.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from gpustack.lint.charts import chartkeys
from gpustack.lint.charts.chartkeys import ChartKeys
from gpustack.render.component import HelmRelease, chart_release
from gpustack.render.stackfiles import cni

# Releases whose key data is kept under another name or version: NGC publishes NVIDIA's DRA
# driver as nvidia-dra-driver-gpu, whose source is deployments/helm/dra-driver-nvidia-gpu;
# HAMi's DRA driver is installed from its Git branch (render/dra.py).
KEY_DATA = {
    "nvidia-dra-driver-gpu": ("dra-driver-nvidia-gpu", "0.5.0-dev"),
    "hami-dra-driver": ("hami-dra-driver", "0.1.0"),
}

VARIANTS: dict[str, dict[str, Any]] = {
    "time-slicing-and-taints": {
        "devicePlugin": {"sharing": {"strategy": "timeSlicing", "replicas": 4}, "migStrategy": "none"},
        "nodePools": [{"name": "gpu", "gpu": {"model": "L4"}, "taints": [{"key": "gpu", "effect": "NoSchedule"}]}],
    },
    "operator-on-k3s": {
        "gpuOperator": {"enabled": True},
        "devicePlugin": {"sharing": {"strategy": "mps", "replicas": 2}},
        "nodePools": [
            {"name": "a", "gpu": {"model": "A100-80GB"}, "driver": {"source": "operator", "version": "595.91.07"}},
            {"name": "b", "gpu": {"model": "L4"}, "taints": [{"key": "x", "effect": "NoExecute"}],
             "labels": {"nvidia.com/gpu.deploy.driver": "false"}},
        ],
    },
    "nvidia-dra-with-taints": {
        "devicePlugin": {"enabled": False},
        "dra": {"enabled": True, "driver": "nvidia"},
        "nodePools": [{"name": "gpu", "gpu": {"model": "L4"}, "taints": [{"key": "x", "effect": "NoSchedule"}]}],
    },
    "hami-lab": {
        "devicePlugin": {"enabled": False},
        "sharing": {"hami": {"enabled": True, "schedulerImageTag": "v1.36.4"}},
        "monitoring": {"grafana": {"anonymousAdmin": True}, "dcgmExporter": {"podAttribution": False}},
        "nodePools": [{"name": "gpu", "gpu": {"model": "L4"}, "taints": [{"key": "x", "effect": "NoSchedule"}]}],
    },
    "hami-subset": {
        "sharing": {"hami": {"enabled": True, "pools": ["shared"]}},
        "nodePools": [
            {"name": "shared", "gpu": {"model": "L4"}, "labels": {"gpu-sharing": "hami"}},
            {"name": "whole", "gpu": {"model": "L4"}, "labels": {"gpu-sharing": "none"}},
        ],
    },
}


def keys_of(release: HelmRelease) -> ChartKeys:
    chart, version = KEY_DATA.get(release.chart, (release.chart, release.version))
    keys = chartkeys.chart_keys(chart, version)
    assert keys is not None, f"no key data for chart {chart} {version} (release {release.name})"
    return keys


def key_paths(values: Mapping[str, Any], prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    for key, value in values.items():
        yield (*prefix, key)
        if isinstance(value, Mapping):
            yield from key_paths(value, (*prefix, key))


def unknown_keys(values: Mapping[str, Any], keys: ChartKeys) -> list[str]:
    """Each key no template of the chart reads, once (not again for every key below it)."""
    return [
        ".".join(path) for path in key_paths(values)
        if not keys.reads(path) and (len(path) == 1 or keys.reads(path[:-1]))
    ]


def releases(examples, render_spec) -> Iterator[tuple[str, HelmRelease]]:
    """The stacks' releases, and the pod network's values (a host step's chart, not a release)."""
    stacks = [(name, rendered) for name, (rendered, _) in examples.items()]
    stacks += [(name, render_spec(**spec)[0]) for name, spec in VARIANTS.items()]
    for name, rendered in stacks:
        yield from ((name, r) for r in rendered.releases)
        if cni.installs(rendered.ctx.stack):
            values = cni.values(rendered.ctx.stack)
            yield name, chart_release(cni.CHART, name=cni.RELEASE, version=cni.VERSION, namespace=cni.NAMESPACE, values=values)


def test_every_emitted_key_exists_in_the_chart(examples, render_spec):
    seen, unknown = set(), []
    for stack, release in releases(examples, render_spec):
        keys = keys_of(release)
        seen.add(keys.chart)
        unknown += [f"{stack}: {release.chart}: {path}" for path in unknown_keys(release.values, keys)]
    assert seen == set(chartkeys.shipped_charts()), "every chart with key data is rendered by an example or variant"
    assert not unknown, "keys no template of the chart reads:\n" + "\n".join(unknown)


def test_the_walk_finds_typos_but_not_below_free_form_maps():
    keys = chartkeys.chart_keys("nvidia-device-plugin", "0.20.0")
    assert keys is not None
    values = {
        "gfd": {"sleepIntervall": "60s", "noTimestamp": True},  # a typo; a key only values.yaml has
        "config": {"map": {"any": "x"}},
        "affinity": {"b": 2},
        "nfd": {"enabled": False, "wroker": {"x": 1}},  # the NFD subchart's keys, its condition
    }
    assert unknown_keys(values, keys) == ["gfd.sleepIntervall", "gfd.noTimestamp", "nfd.wroker"]
