"""The values-level rules judge keys the charts' templates really read, at every version
gpustack has key data for (a rule reading a key no template reads would judge a setting that
changes nothing)."""

from __future__ import annotations

import pytest

from gpustack.lint.charts import chartkeys
from gpustack.lint.facts import nfd, node_agents, sharingconfigs
from gpustack.lint.facts.deviceplugins import HAMI_SELECTOR_KEYS
from gpustack.lint.facts.operands import exporter_charts
from gpustack.lint.rules import (
    gs004_missing_runtime_class,
    gs021_label_churn,
    gs025_plaintext_credentials,
    gs032_nfd_label_mismatch,
)


def _read_keys() -> list[tuple[str, str, tuple[tuple[str, ...], ...]]]:
    """(rule, chart, alternatives): at every version, one of the alternatives must be read."""
    keys: list[tuple[str, str, tuple[tuple[str, ...], ...]]] = []
    for chart, path in gs004_missing_runtime_class.chart_runtime_class().items():
        keys.append(("GS004", chart, (path,)))
    for chart, (path, _) in exporter_charts().items():
        keys += [("GS014", chart, ((*path, "enabled"),)), ("GS014", chart, ((*path, "additionalLabels"),))]
    for suffix in ("ruleSelector", "serviceMonitorSelector", "podMonitorSelector", "ruleSelectorNilUsesHelmValues"):
        keys.append(("GS014", "kube-prometheus-stack", (("prometheus", "prometheusSpec", suffix),)))
    by_labeller: dict[tuple[str, str], list[tuple[str, ...]]] = {}
    for chart, path, labeller in gs021_label_churn.chart_sources():
        by_labeller.setdefault((chart, labeller), []).append(path)
    keys += [("GS021", chart, tuple(paths)) for (chart, _), paths in by_labeller.items()]
    for chart, path in gs025_plaintext_credentials.grafana_ini().items():
        if chart in chartkeys.shipped_charts():  # the grafana chart itself has no key data
            keys.append(("GS025", chart, ((*path, gs025_plaintext_credentials.ANONYMOUS),)))
    for chart, path in sharingconfigs.chart_configs().items():
        keys.append(("GS036", chart, (path,)))
    for chart, (prefix, _, _) in nfd.nfd_charts().items():
        keys.append(("GS032", chart, ((*prefix, *gs032_nfd_label_mismatch.PCI),)))
        keys.append(("GS048", chart, ((*prefix, *nfd.WORKER_TOLERATIONS),)))
    for chart, path in node_agents.chart_tolerations_keys().items():
        if chart in chartkeys.shipped_charts():
            keys.append(("GS048", chart, (path,)))
    keys.append(("GS010", "hami", tuple(("devicePlugin", key) for key in HAMI_SELECTOR_KEYS)))
    keys += [("GS035", "gpu-operator", (("driver", "enabled"),)), ("GS032", "gpu-operator", (("nfd", "enabled"),))]
    return keys


@pytest.mark.parametrize(("rule", "chart", "alternatives"), _read_keys())
def test_every_key_a_values_rule_reads_is_read_by_the_chart(
    rule: str, chart: str, alternatives: tuple[tuple[str, ...], ...]
) -> None:
    unread = []
    for version in chartkeys.versions(chart):
        keys = chartkeys.chart_keys(chart, version)
        assert keys is not None
        if not any(keys.reads(path) for path in alternatives):
            unread.append(version)
    assert not unread, f"{rule}: {chart} {unread} read none of {['.'.join(p) for p in alternatives]}"
