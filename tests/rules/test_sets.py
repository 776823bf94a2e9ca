"""gpustack.lint.releases (dispatch and the GitOps formats) and the set-level rules' use of context beyond the fixtures."""

from __future__ import annotations

import pytest
from podspec_support import extract_all

from gpustack.lint.context import LintContext, RuleOptions
from gpustack.lint.facts import labelselectors
from gpustack.lint.input.load import load_text
from gpustack.lint.releases import dispatch, helmvalues
from gpustack.lint.rules import gs014_prometheusrule_not_selected, gs015_xid_alert_coverage


def context(text: str, **kwargs: object) -> LintContext:
    loaded = load_text("set.yaml", text)
    assert not loaded.errors
    return LintContext(loaded.resources, extract_all(loaded.resources), **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("selector", "labels", "matches"),
    [
        ({}, {}, True),
        ({"matchLabels": {"release": "kps"}}, {"release": "kps"}, True),
        ({"matchLabels": {"release": "kps"}}, {"release": "other"}, False),
        ({"matchLabels": {"gpu": "on"}}, {"gpu": True}, False),  # YAML 1.1: `on` read as true
        ({"matchExpressions": [{"key": "team", "operator": "In", "values": ["ml"]}]}, {"team": "ml"}, True),
        ({"matchExpressions": [{"key": "team", "operator": "NotIn", "values": ["ml"]}]}, {"team": "ml"}, False),
        ({"matchExpressions": [{"key": "team", "operator": "Exists"}]}, {}, False),
        ({"matchExpressions": [{"key": "team", "operator": "DoesNotExist"}]}, {}, True),
    ],
)
def test_selector_matches(selector: dict, labels: dict, matches: bool) -> None:
    assert labelselectors.selector_matches(selector, labels) is matches


def test_coalesce_merges_maps_and_null_deletes() -> None:
    defaults = {"nodeSelector": {"gpu": "on"}, "replicas": 1}
    merged = {"nodeSelector": {"gpu": "on", "zone": "a"}, "replicas": 1}
    assert helmvalues.coalesce(defaults, {"nodeSelector": {"zone": "a"}}) == merged
    assert helmvalues.coalesce(defaults, {"nodeSelector": {"gpu": None}, "replicas": 2}) == {"nodeSelector": {}, "replicas": 2}


def test_helm_releases_read_helmchart_set_values_and_chart_names() -> None:
    ctx = context(
        """
apiVersion: helm.cattle.io/v1
kind: HelmChart
metadata: {name: monitoring, namespace: kube-system}
spec:
  chart: https://example.com/charts/kube-prometheus-stack-88.5.3.tgz
  valuesContent: |
    prometheus:
      prometheusSpec: {retention: 7d}
  set:
    prometheus.prometheusSpec.ruleSelectorNilUsesHelmValues: "false"
"""
    )
    [release] = dispatch.releases(ctx)
    assert (release.chart, release.release) == ("kube-prometheus-stack", "monitoring")
    assert release.path == ("spec", "chart")
    assert release.values == {"prometheus": {"prometheusSpec": {"retention": "7d", "ruleSelectorNilUsesHelmValues": False}}}


def test_helm_releases_of_flux_use_the_target_namespace_in_the_release_name() -> None:
    ctx = context(
        """
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: kps, namespace: flux-system}
spec:
  targetNamespace: monitoring
  chart: {spec: {chart: kube-prometheus-stack}}
  values: {grafana: {enabled: false}}
"""
    )
    [release] = dispatch.releases(ctx)
    assert (release.chart, release.release) == ("kube-prometheus-stack", "monitoring-kps")


XID_79_ONLY = """
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata: {name: xid, namespace: monitoring, labels: {release: kube-prometheus-stack}}
spec:
  groups:
    - name: xid
      rules:
        - alert: GPUFallenOffTheBus
          expr: changes(DCGM_FI_DEV_XID_ERRORS[5m]) > 0 and DCGM_FI_DEV_XID_ERRORS == 79
"""


def test_xid_coverage_follows_the_configured_critical_list() -> None:
    assert list(gs015_xid_alert_coverage.check(context(XID_79_ONLY, options=RuleOptions(critical_xids=(79,))))) == []
    [hit] = gs015_xid_alert_coverage.check(context(XID_79_ONLY, options=RuleOptions(critical_xids=(48, 79))))
    assert "48" in hit.message and "79" not in hit.message.split("code(s)")[1]


UNLABELLED_RULE = """
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata: {name: gpu, namespace: monitoring}
spec: {groups: [{name: g, rules: [{alert: Hot, expr: DCGM_FI_DEV_GPU_TEMP > 85}]}]}
"""


def test_a_prometheus_with_a_null_namespace_selector_sees_its_own_namespace_only() -> None:
    prometheus = """
apiVersion: monitoring.coreos.com/v1
kind: Prometheus
metadata: {name: k8s, namespace: monitoring}
spec: {ruleSelector: {}}
---
"""
    assert list(gs014_prometheusrule_not_selected.check(context(prometheus + UNLABELLED_RULE))) == []
    elsewhere = UNLABELLED_RULE.replace("namespace: monitoring", "namespace: gpu-operator")
    assert len(list(gs014_prometheusrule_not_selected.check(context(prometheus + elsewhere)))) == 1
