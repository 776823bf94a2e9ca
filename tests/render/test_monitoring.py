"""kube-prometheus-stack and DCGM Exporter values, the collectors CSV and gpustack's alert rules."""

from __future__ import annotations

import promql_parser
import pytest
from crd_support import assert_valid
from render_helpers import release

from gpustack.errors import SpecError
from gpustack.lint.facts import promql
from gpustack.render.components import alerts, monitoring, xid
from gpustack.render.components.alert_series import SeriesModel
from gpustack.render.components.alerts import AlertRules
from gpustack.spec.models.monitoring import Alerts

GEFORCE_POOL = [{"name": "desk", "gpu": {"model": "RTX-4090"}}]
MIXED_POOLS = [{"name": "dc", "gpu": {"model": "L4"}}, {"name": "desk", "gpu": {"model": "RTX-4090"}}]
PROFILING_ROWS = (
    "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_PROF_SM_ACTIVE", "DCGM_FI_PROF_SM_OCCUPANCY",
    "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "DCGM_FI_PROF_DRAM_ACTIVE",
)


def rules_of(rendered):
    [rule] = [obj for _, obj in rendered.objects() if obj["kind"] == "PrometheusRule"]
    return rule, {r["alert"]: r for group in rule["spec"]["groups"] for r in group["rules"]}


def csv_rows(csv: str) -> list[str]:
    return [line.split(",")[0] for line in csv.splitlines() if line and not line.startswith("#")]


def joins(expr) -> list[list[str]]:
    """The on(...) label lists of every binary operation in a parsed expression."""
    found = []
    if isinstance(expr, promql_parser.BinaryExpr):
        matching = expr.modifier.matching if expr.modifier else None
        if matching is not None:
            found.append(list(matching.labels))
        found += joins(expr.lhs) + joins(expr.rhs)
    elif isinstance(expr, promql_parser.ParenExpr):
        found += joins(expr.expr)
    return found


# --- rules ---------------------------------------------------------------------------------


def test_every_expression_is_valid_promql(examples, render_spec):
    results = [*examples.values(), render_spec(nodePools=MIXED_POOLS)]
    for rendered, _ in results:
        if rendered.ctx.stack.spec.monitoring.alerts.enabled:
            for rule in rules_of(rendered)[1].values():
                promql_parser.parse(rule["expr"])


def test_joins_match_node_gpu_and_mig_instance_never_gpu_alone(render_spec):
    rendered, _ = render_spec()
    _, rules = rules_of(rendered)
    for name in ("GPUIdleButAllocated", "GPUBusyButUnderfilled"):
        assert ["node", "gpu", "GPU_I_ID"] in joins(promql_parser.parse(rules[name]["expr"]))
    for rule in rules.values():
        assert all(labels != ["gpu"] for labels in joins(promql_parser.parse(rule["expr"])))


def selected(expr: str) -> list[tuple[str, dict[str, str]]]:
    """Every series selector of ``expr``: its metric and its matchers (``name op value``)."""
    found = []

    def visit(node):
        if isinstance(node, promql_parser.VectorSelector):
            found.append((node.name, {m.name: f"{m.op} {m.value}" for m in node.matchers.matchers}))

    promql_parser.walk(promql_parser.parse(expr), visit)
    return found


def test_workload_labels_are_the_exported_ones(examples):
    """With honorLabels false the workload's labels arrive as exported_* (alert_series)."""
    for rendered, _ in examples.values():
        for rule in rules_of(rendered)[1].values():
            for metric, matchers in selected(rule["expr"]):
                if metric and metric.startswith("DCGM_"):
                    assert not {"container", "pod", "namespace"} & set(matchers), (rule["alert"], metric)


def test_thresholds_come_from_the_spec(render_spec):
    custom = {"temperatureCelsius": 80, "memoryUsedRatio": 0.8, "idleUtilPercent": 3, "idleMemoryMiB": 2048,
              "idleFor": "30m", "underfilledUtilPercent": 95, "underfilledSmActive": 0.3}
    rendered, _ = render_spec(monitoring={"alerts": custom})
    _, rules = rules_of(rendered)
    assert ") > 80 unless on(node, gpu)" in rules["GPUHighTemperature"]["expr"]
    assert "+ DCGM_FI_DEV_FB_FREE) > 0.8" in rules["GPUMemoryNearFull"]["expr"]
    assert rules["GPUIdleButAllocated"]["expr"].startswith(
        "(DCGM_FI_DEV_GPU_UTIL or 100 * DCGM_FI_PROF_GR_ENGINE_ACTIVE) < 3 and on(node, gpu, GPU_I_ID) "
        'DCGM_FI_DEV_FB_USED{exported_pod!=""} > 2048'
    )
    assert rules["GPUIdleButAllocated"]["for"] == "30m"
    assert rules["GPUBusyButUnderfilled"]["expr"] == (
        "(DCGM_FI_DEV_GPU_UTIL or 100 * DCGM_FI_PROF_GR_ENGINE_ACTIVE) > 95 "
        "and on(node, gpu, GPU_I_ID) DCGM_FI_PROF_SM_ACTIVE < 0.3"
    )


def alert_rules(alert_settings: Alerts, *, profiling: bool, runbook_base: str = "README.md") -> AlertRules:
    series = SeriesModel(profiling)
    return AlertRules(alert_settings, series, "dcgm-exporter", runbook_base, dra=False, hami=False)


def test_seed_defaults():
    rules = {r["alert"]: r for r in alerts.health_rules(alert_rules(Alerts(), profiling=False))}
    assert "(DCGM_FI_DEV_SLOWDOWN_TEMP > 0) - 5) or " in rules["GPUHighTemperature"]["expr"]
    assert ") > 85 unless on(node, gpu)" in rules["GPUHighTemperature"]["expr"]
    assert rules["GPUHighTemperature"]["for"] == "2m"
    assert rules["GPUMemoryNearFull"]["for"] == "5m"
    assert rules["GPUIdleButAllocated"]["for"] == "15m"
    assert rules["GPUIdleButAllocated"]["expr"].startswith("DCGM_FI_DEV_GPU_UTIL < 5")  # no profiling fields
    assert "GPUBusyButUnderfilled" not in rules


def xid_codes(expr: str) -> set[int]:
    """Codes an XID rule alerts on, as the linter's PromQL facts read the expression."""
    coverage = promql.value_coverage(promql.parse(expr), promql.Source(xid.XID_COUNT_METRIC, label="xid"), range(200))
    assert coverage is not None
    return set(coverage)


def test_xid_alerts_cover_the_critical_list_tiered_by_the_catalogue():
    rules = xid.xid_rules(Alerts(criticalXids=[31, 43, 79, 92, 13, 199, 44]), SeriesModel(False), _make)
    severity = {code: rule["labels"]["severity"] for rule in rules for code in xid_codes(rule["expr"])}
    assert {31, 43, 79, 92, 13, 199} <= set(severity)
    assert severity[79] == severity[48] == severity[74] == severity[119] == "critical"
    assert severity[13] == severity[31] == severity[43] == severity[92] == severity[94] == "warning"
    assert 63 not in severity  # IGNORE bucket, not listed
    assert severity[44] == "warning"  # IGNORE in the catalogue, listed: GPUXidInformational, not "unknown"
    by_alert = {r["alert"]: xid_codes(r["expr"]) for r in rules}
    # The catalogue's RESTART_APP bucket, copy-engine and decoder errors included.
    assert {8, 13, 31, 39, 94, 139} <= by_alert["GPUXidApplicationFault"]
    assert {160} <= by_alert["GPUXidRestartNode"] and {110, 162} <= by_alert["GPUXidResetGpu"]
    assert by_alert["GPUXidListed"] == {199}


def test_informational_xids_only_when_the_spec_lists_them():
    names = {r["alert"] for r in xid.xid_rules(Alerts(criticalXids=[]), SeriesModel(False), _make)}
    assert "GPUXidInformational" not in names and "GPUXidListed" not in names
    [informational] = [
        r for r in xid.xid_rules(Alerts(criticalXids=[43]), SeriesModel(False), _make)
        if r["alert"] == "GPUXidInformational"
    ]
    assert xid_codes(informational["expr"]) == {43}


def test_only_fatal_xid_alerts_keep_firing():
    for rule in xid.xid_rules(Alerts(xidKeepFiringFor="2h"), SeriesModel(False), _make):
        fatal = rule["labels"]["severity"] == "critical"
        assert rule.get("keep_firing_for") == ("2h" if fatal else None)
        assert "for" not in rule


def _make(*args, **kwargs):
    return alert_rules(Alerts(), profiling=False).make(*args, **kwargs)


def test_every_alert_has_a_description_and_a_runbook_in_the_readme(examples):
    for rendered, tree in examples.values():
        if not rendered.ctx.stack.spec.monitoring.alerts.enabled:
            continue
        readme = tree["README.md"]
        for rule in rules_of(rendered)[1].values():
            annotations = rule["annotations"]
            assert annotations["description"] and annotations["summary"]
            path, anchor = annotations["runbook_url"].split("#")
            assert path.endswith("README.md") and f"\n### {rule['alert']}\n" in readme
            assert anchor == rule["alert"].lower()
            assert ("**The runbook links are relative**" in readme) == (path == "README.md")


def test_runbook_base_url_from_the_spec():
    rules = alerts.health_rules(
        alert_rules(Alerts(), profiling=False, runbook_base="https://git.example.org/ops/gpu/README.md")
    )
    assert rules[0]["annotations"]["runbook_url"] == "https://git.example.org/ops/gpu/README.md#gpuhightemperature"


ARGOCD = {"enabled": True, "repoURL": "https://github.com/acme/gpu-stacks.git", "path": "stacks/lab"}


@pytest.mark.parametrize(
    ("argocd", "expected"),
    [
        (ARGOCD, "https://github.com/acme/gpu-stacks/blob/main/stacks/lab/README.md#gpuhightemperature"),
        (ARGOCD | {"repoURL": "https://gitlab.example.org/ops/gpu", "targetRevision": "main"},
         "https://gitlab.example.org/ops/gpu/-/blob/main/stacks/lab/README.md#gpuhightemperature"),
        ({"enabled": False}, "README.md#gpuhightemperature"),
    ],
)
def test_runbook_links_default_to_the_readme_in_the_argocd_repository(render_spec, argocd, expected):
    rendered, tree = render_spec(gitops={"argocd": argocd})
    assert rules_of(rendered)[1]["GPUHighTemperature"]["annotations"]["runbook_url"] == expected
    assert ("**The runbook links are relative**" in tree["README.md"]) == expected.startswith("README.md")


def test_another_git_host_needs_the_runbook_base_url(render_spec):
    """gpustack cannot tell another host's file-view path: it asks rather than render links that 404."""
    other = ARGOCD | {"repoURL": "https://git.example.com/ops/gpu.git"}
    where = r"spec.yaml:\d+:\d+: spec.gitops.argocd.repoURL"
    with pytest.raises(SpecError, match=where + r": .*not in https://git.example.com/ops/gpu.git: set monitoring"):
        render_spec(gitops={"argocd": other})
    explicit = {"alerts": {"runbookBaseUrl": "https://git.example.com/ops/gpu/src/branch/main/stacks/lab/README.md"}}
    rendered, _ = render_spec(gitops={"argocd": other}, monitoring=explicit)
    assert rules_of(rendered)[1]["GPULost"]["annotations"]["runbook_url"].startswith("https://git.example.com/")
    # Alerts off: no links to refuse.
    render_spec(gitops={"argocd": other}, monitoring={"alerts": {"enabled": False}})


def test_an_explicit_runbook_base_url_wins_and_must_be_absolute(render_spec):
    explicit = {"alerts": {"runbookBaseUrl": "https://w.example/r"}}
    rendered, _ = render_spec(gitops={"argocd": ARGOCD}, monitoring=explicit)
    assert rules_of(rendered)[1]["GPULost"]["annotations"]["runbook_url"] == "https://w.example/r#gpulost"
    where = r"spec.yaml:\d+:\d+: spec.monitoring.alerts.runbookBaseUrl"
    with pytest.raises(SpecError, match=where + ": must be an absolute URL"):
        render_spec(monitoring={"alerts": {"runbookBaseUrl": "README.md"}})


def test_no_unallocatable_alert_under_dra(render_spec):
    rendered, _ = render_spec(dra={"enabled": True}, devicePlugin={"enabled": False})
    names = set(rules_of(rendered)[1])
    assert "GPUUnallocatable" not in names  # no extended resource under DRA
    assert {"GPULost", "GPUExporterDown", "GPUExporterAbsent"} <= names


def test_busy_but_underfilled_only_with_profiling(render_spec):
    assert "GPUBusyButUnderfilled" in rules_of(render_spec(nodePools=MIXED_POOLS)[0])[1]
    assert "GPUBusyButUnderfilled" not in rules_of(render_spec(nodePools=GEFORCE_POOL)[0])[1]
    off = render_spec(monitoring={"dcgmExporter": {"profiling": "off"}})[0]
    assert "GPUBusyButUnderfilled" not in rules_of(off)[1]


def test_rule_is_selected_by_the_release_label_and_validates(render_spec):
    rendered, _ = render_spec(monitoring={"release": "prom"})
    rule, _ = rules_of(rendered)
    assert rule["metadata"]["labels"] == {"release": "prom"}
    assert rule["metadata"]["namespace"] == "monitoring"
    assert_valid(rule)
    names = [group["name"] for group in rule["spec"]["groups"]]
    assert len(names) == len(set(names))
    values = release(rendered, "prom")
    assert "ruleSelectorNilUsesHelmValues" not in str(values)
    assert release(rendered, "dcgm-exporter")["serviceMonitor"] == {
        "enabled": True,
        "additionalLabels": {"release": "prom"},
        # The node the alerts join on: the exporter pod's spec.nodeName, as kube-state-metrics names it.
        "relabelings": [
            {"sourceLabels": ["__meta_kubernetes_pod_node_name"], "targetLabel": "node", "action": "replace"}
        ],
    }


def test_alerts_off_renders_no_rule(render_spec):
    rendered, _ = render_spec(monitoring={"alerts": {"enabled": False}})
    assert not [obj for _, obj in rendered.objects() if obj["kind"] == "PrometheusRule"]


def test_monitoring_off_renders_nothing(render_spec):
    rendered, _ = render_spec(monitoring={"enabled": False})
    assert not {"kube-prometheus-stack", "dcgm-exporter"} & {r.name for r in rendered.releases}
    assert "monitoring" not in rendered.manifests


# --- collectors CSV -------------------------------------------------------------------------


def test_datacenter_pool_collects_profiling_fields(render_spec):
    csv = release(render_spec()[0], "dcgm-exporter")["customMetrics"]
    assert set(PROFILING_ROWS) <= set(csv_rows(csv))
    assert "# Collected for pools gpu (L4)." in csv


def test_geforce_pool_leaves_them_out_with_the_reason(render_spec):
    csv = release(render_spec(nodePools=GEFORCE_POOL)[0], "dcgm-exporter")["customMetrics"]
    assert not [row for row in csv_rows(csv) if row.startswith("DCGM_FI_PROF_")]
    assert "GeForce" in csv
    assert "DCGM_FI_DEV_XID_ERRORS" in csv_rows(csv)


def test_mixed_pools_share_one_csv_that_explains_the_skip(render_spec):
    csv = release(render_spec(nodePools=MIXED_POOLS)[0], "dcgm-exporter")["customMetrics"]
    assert set(PROFILING_ROWS) <= set(csv_rows(csv))
    assert "dc (L4)" in csv and "desk (RTX-4090)" in csv and "skips" in csv


def test_profiling_off_leaves_them_out(render_spec):
    csv = release(render_spec(monitoring={"dcgmExporter": {"profiling": "off"}})[0], "dcgm-exporter")["customMetrics"]
    assert not [row for row in csv_rows(csv) if row.startswith("DCGM_FI_PROF_")]
    assert "profiling is off" in csv


def test_every_csv_row_is_field_type_help(render_spec):
    csv = release(render_spec()[0], "dcgm-exporter")["customMetrics"]
    for line in csv.splitlines():
        if line and not line.startswith("#"):
            field, kind, help_text = (part.strip() for part in line.split(",", 2))
            assert field.startswith(("DCGM_FI_", "DCGM_EXP_")) and kind in ("gauge", "counter", "label") and help_text


# --- chart values ---------------------------------------------------------------------------


def test_exporter_values(render_spec):
    values = release(render_spec(nodePools=[{"name": "gpu", "gpu": {"model": "L4"},
                                             "taints": [{"key": "gpu", "effect": "NoSchedule"}]}])[0], "dcgm-exporter")
    assert values["runtimeClassName"] == "nvidia"
    assert values["kubernetes"]["enablePodLabels"] is True
    assert values["kubernetes"]["podLabelAllowlistRegex"]
    assert {"key": "gpu", "operator": "Exists", "effect": "NoSchedule"} in values["tolerations"]
    assert monitoring.EXPORTER_TOLERATIONS[0] in values["tolerations"]
    assert "kubernetesDRA" not in values
    # The chart's own image, pinned: DCGM 4.5.3, exporter 4.8.2 (which still writes Hostname).
    assert values["image"] == {"repository": "nvcr.io/nvidia/k8s/dcgm-exporter", "tag": "4.5.3-4.8.2-distroless"}


DRA = {"enabled": True, "claimTemplates": [{"name": "one-gpu"}]}


@pytest.mark.parametrize(("driver", "attributed"), [("nvidia", True), ("hami", False)])
def test_dra_attribution_only_for_nvidias_driver(render_spec, driver, attributed):
    rendered, _ = render_spec(dra={**DRA, "driver": driver}, devicePlugin={"enabled": False})
    values = release(rendered, "dcgm-exporter")
    assert ("kubernetesDRA" in values) is attributed


def test_one_pod_label_allowlist_on_both_paths(render_spec):
    standalone = release(render_spec()[0], "dcgm-exporter")["kubernetes"]
    operator = release(
        render_spec(
            gpuOperator={"enabled": True},
            nodePools=[{"name": "a", "gpu": {"model": "L4"}, "driver": {"source": "operator"}}],
        )[0],
        "gpu-operator",
    )["dcgmExporter"]
    assert operator["enablePodLabels"] is standalone["enablePodLabels"] is True
    assert operator["podLabelAllowlistRegex"] == standalone["podLabelAllowlistRegex"] == monitoring.POD_LABEL_ALLOWLIST
    # The operator's exporter image is pinned too: DCGM 4.6.0, exporter 4.8.3 (label hostname).
    assert operator["version"] == "4.6.0-4.8.3-distroless"


def test_no_allowlist_without_pod_attribution(render_spec):
    values = release(render_spec(monitoring={"dcgmExporter": {"podAttribution": False}})[0], "dcgm-exporter")
    assert values["kubernetes"] == {"enablePodLabels": False}


def test_dashboards_through_the_grafana_providers(render_spec):
    grafana = release(render_spec()[0], "kube-prometheus-stack")["grafana"]
    [provider] = grafana["dashboardProviders"]["dashboardproviders.yaml"]["providers"]
    dashboards = grafana["dashboards"][provider["name"]]
    assert provider["options"]["path"].endswith(f"/{provider['name']}")
    assert {d["gnetId"] for d in dashboards.values()} == {12239, 23382}
    # The list form substitutes the ${DS_PROMETHEUS} input; kube-prometheus-stack's data source uid.
    assert all(
        d["datasource"] == [{"name": "DS_PROMETHEUS", "value": "prometheus"}] and d["revision"] >= 1
        for d in dashboards.values()
    )
    assert "grafana.ini" not in grafana


def test_anonymous_admin_only_when_asked(render_spec):
    grafana = release(render_spec(monitoring={"grafana": {"anonymousAdmin": True}})[0], "kube-prometheus-stack")["grafana"]
    assert grafana["grafana.ini"] == {"auth.anonymous": {"enabled": True, "org_role": "Admin"}}


@pytest.mark.parametrize("enabled", [True, False])
def test_gpu_operator_runs_the_exporter_with_the_same_csv(render_spec, enabled):
    rendered, _ = render_spec(
        gpuOperator={"enabled": True},
        monitoring={"dcgmExporter": {"enabled": enabled}},
        nodePools=[{"name": "a", "gpu": {"model": "H100"}, "driver": {"source": "operator"}}],
    )
    assert "dcgm-exporter" not in {r.name for r in rendered.releases}
    exporter = release(rendered, "gpu-operator")["dcgmExporter"]
    assert exporter["enabled"] is enabled
    if enabled:
        assert exporter["serviceMonitor"]["additionalLabels"] == {"release": "kube-prometheus-stack"}
        assert exporter["config"]["create"] is True
        assert exporter["config"]["data"] == monitoring.collectors_csv(rendered.ctx.stack)
