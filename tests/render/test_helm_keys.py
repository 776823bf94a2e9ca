"""Every Helm values key gpustack emits exists in the upstream chart's default values.

A typo such as ``gfd.sleepIntervall`` is silently ignored by Helm; this test makes it fail.
Free-form maps (defaults ``{}`` or ``null``, node selectors, the keys in FREE_FORM) may hold
any keys below them. Keys that a chart's ``Chart.yaml`` uses as dependency conditions exist;
a subchart's section also takes that chart's defaults when they are at hand (the device
plugin's ``nfd``); DOCUMENTED lists the keys documented elsewhere.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from render_helpers import REPO
from ruamel.yaml import YAML

CHART_VALUES = REPO.parent / "shared" / "reference" / "chart-values"
# chart name → name pattern of its values.yaml and Chart.yaml in shared/reference/chart-values
CHARTS = {
    "nvidia-device-plugin": "NVIDIA__k8s-device-plugin__deployments__helm__nvidia-device-plugin__{}.yaml",
    "gpu-operator": "NVIDIA__gpu-operator__deployments__gpu-operator__{}@v26.7.0.yaml",
    "node-feature-discovery": "kubernetes-sigs__node-feature-discovery__deployment__helm__node-feature-discovery__{}@v0.19.0.yaml",
    "dcgm-exporter": "NVIDIA__dcgm-exporter__deployment__{}.yaml",
    "kube-prometheus-stack": "prometheus-community__helm-charts__charts__kube-prometheus-stack__{}.yaml",
    "hami": "Project-HAMi__HAMi__charts__hami__{}.yaml",
    # NGC publishes the chart as nvidia-dra-driver-gpu; the reference is its source at HEAD.
    "nvidia-dra-driver-gpu": "NVIDIA__k8s-dra-driver-gpu__deployments__helm__dra-driver-nvidia-gpu__{}.yaml",
}
FREE_FORM = frozenset(
    {"affinity", "nodeSelector", "nvidiaNodeSelector", "tolerations", "annotations", "labels", "podAnnotations"}
)
# Keys the charts document although their values.yaml does not set them: commented-out
# examples, and the Grafana subchart's values (upstream-facts §3, §2, §8).
DOCUMENTED = {
    "dcgm-exporter": {"customMetrics"},
    "gpu-operator": {"dcgmExporter.config"},
    "kube-prometheus-stack": {"grafana.dashboardProviders", "grafana.dashboards", "grafana.grafana.ini"},
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
            {"name": "b", "gpu": {"model": "L4"}, "taints": [{"key": "x", "effect": "NoExecute"}]},
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
}


def chart_file(chart: str, kind: str) -> Path:
    if not CHART_VALUES.is_dir():
        pytest.skip(f"{CHART_VALUES} not present")
    return CHART_VALUES / CHARTS[chart].format(kind)


def load(path: Path) -> Any:
    return YAML(typ="safe").load(path.read_text(encoding="utf-8"))


@cache
def chart_defaults(chart: str) -> tuple[dict[str, Any], frozenset[str]]:
    """The chart's default values, with its subcharts' sections, and the always-valid key paths."""
    defaults = dict(load(chart_file(chart, "values")))
    allowed = set(DOCUMENTED.get(chart, ()))
    meta_path = chart_file(chart, "Chart")
    meta = load(meta_path) if meta_path.exists() else {}
    for dependency in meta.get("dependencies") or []:
        allowed |= {c.strip() for c in dependency.get("condition", "").split(",") if c.strip()}
        section = dependency.get("alias", dependency["name"])
        if dependency["name"] in CHARTS:
            defaults[section] = overlay(load(chart_file(dependency["name"], "values")), defaults.get(section))
    return defaults, frozenset(allowed)


def overlay(subchart: Any, parent: Any) -> Any:
    """The parent's overrides over a subchart's defaults; free-form (``None``) stays free-form."""
    if isinstance(subchart, Mapping) and isinstance(parent, Mapping):
        return {k: overlay(subchart[k], v) if k in subchart else v for k, v in parent.items()} | {
            k: v for k, v in subchart.items() if k not in parent
        }
    return subchart if subchart is None or parent is None else parent


def unknown_keys(values: Mapping[str, Any], defaults: Any, allowed: frozenset[str] | set[str], prefix: str = "") -> Iterator[str]:
    for key, value in values.items():
        path = f"{prefix}{key}"
        if path in allowed:
            continue
        if not isinstance(defaults, Mapping) or key not in defaults:
            yield path
            continue
        default = defaults[key]
        free = key in FREE_FORM or key.lower().endswith("nodeselector") or default is None or default == {}
        if isinstance(value, Mapping) and not free:
            yield from unknown_keys(value, default, allowed, f"{path}.")


def releases(examples, render_spec) -> Iterator[tuple[str, Any]]:
    for name, (rendered, _) in examples.items():
        yield from ((name, r) for r in rendered.releases)
    for name, spec in VARIANTS.items():
        rendered, _ = render_spec(**spec)
        yield from ((name, r) for r in rendered.releases)


def test_every_emitted_key_exists_in_the_chart_defaults(examples, render_spec):
    seen, unknown = set(), []
    for stack, release in releases(examples, render_spec):
        if release.chart not in CHARTS:
            continue  # no upstream defaults at hand for this chart
        seen.add(release.chart)
        defaults, allowed = chart_defaults(release.chart)
        unknown += [f"{stack}: {release.chart}: {path}" for path in unknown_keys(release.values, defaults, allowed)]
    assert set(CHARTS) <= seen
    assert not unknown, "keys missing from the upstream chart defaults:\n" + "\n".join(unknown)


def test_subchart_sections():
    defaults, allowed = chart_defaults("nvidia-device-plugin")
    assert "nfd.enabled" in allowed
    assert list(unknown_keys({"nfd": {"worker": {"config": {"x": 1}}, "wroker": {}}}, defaults, allowed)) == [
        "nfd.wroker"
    ]


def test_the_walk_finds_typos():
    defaults = {"gfd": {"enabled": False, "sleepInterval": None}, "config": {"map": {}}, "affinity": {"a": 1}}
    values = {"gfd": {"sleepIntervall": "60s"}, "config": {"map": {"any": "x"}}, "affinity": {"b": 2}, "nfd": {}}
    assert list(unknown_keys(values, defaults, {"nfd.enabled"})) == ["gfd.sleepIntervall", "nfd"]
