"""kube-prometheus-stack's own pods: receivers and routes from the spec (credentials from Secrets), storage, requests.

How the routes route is tested through the real chart and amtool (tests/e2e/test_alertmanager_routes.py)."""

from __future__ import annotations

import pytest
from render_helpers import release

from gpustack.errors import SpecError
from gpustack.render.components import alert_routing, monitoring_stack
from gpustack.render.requests import REQUESTS

SECRET = {"secretName": "alerting", "secretKey": "key"}
MOUNTED = "/etc/alertmanager/secrets/alerting/key"


def stack_values(render_spec, **monitoring):
    rendered, tree = render_spec(monitoring=monitoring)
    return release(rendered, "kube-prometheus-stack"), tree["README.md"]


def test_no_receiver_keeps_the_null_receiver_and_says_so(render_spec):
    values, readme = stack_values(render_spec)
    assert "config" not in values["alertmanager"]
    assert "**Alerts are not sent anywhere**" in readme
    assert "`monitoring.receiver`" in readme


@pytest.mark.parametrize(
    ("receiver", "entry"),
    [
        ({"type": "webhook"}, {"webhook_configs": [{"url_file": MOUNTED, "send_resolved": True}]}),
        ({"type": "slack", "channel": "#gpu"},
         {"slack_configs": [{"api_url_file": MOUNTED, "send_resolved": True, "channel": "#gpu"}]}),
        ({"type": "pagerduty"}, {"pagerduty_configs": [{"routing_key_file": MOUNTED, "send_resolved": True}]}),
        ({"type": "email", "to": "ops@example.org", "sender": "am@example.org", "smarthost": "smtp.example.org:587"},
         {"email_configs": [{"to": "ops@example.org", "from": "am@example.org", "smarthost": "smtp.example.org:587",
                             "auth_username": "am@example.org", "auth_password_file": MOUNTED,
                             "send_resolved": True}]}),
    ],
)
def test_a_receiver_reads_its_credential_from_the_named_secret(render_spec, receiver, entry):
    values, readme = stack_values(render_spec, receiver=receiver | SECRET)
    alertmanager = values["alertmanager"]
    assert alertmanager["alertmanagerSpec"]["secrets"] == ["alerting"]
    assert alertmanager["config"]["route"]["receiver"] == "gpustack"
    assert alertmanager["config"]["receivers"] == [{"name": "null"}, {"name": "gpustack", **entry}]
    assert "Secret `alerting`" in readme


def test_the_whole_route_is_rendered_so_the_charts_group_by_namespace_goes(render_spec):
    values, _ = stack_values(render_spec, receiver={"type": "webhook"} | SECRET)
    route = values["alertmanager"]["config"]["route"]
    # Helm merges maps: a key left out keeps the chart's value (group_by: [namespace]).
    assert set(route) == {"receiver", "group_by", "group_wait", "group_interval", "repeat_interval", "routes"}
    [paging] = [r for r in route["routes"] if r["receiver"] == "gpustack"]
    assert paging["matchers"] == ['severity="critical"']
    assert "node" in paging["group_by"] and "node" not in route["group_by"]


def test_a_warning_receiver_takes_the_rest_and_each_secret_is_mounted_once(render_spec):
    values, readme = stack_values(
        render_spec, receiver={"type": "pagerduty"} | SECRET, warningReceiver={"type": "slack"} | SECRET
    )
    alertmanager = values["alertmanager"]
    assert alertmanager["alertmanagerSpec"]["secrets"] == ["alerting"]
    assert alertmanager["config"]["route"]["receiver"] == alert_routing.WARNINGS
    assert [r["name"] for r in alertmanager["config"]["receivers"]] == ["null", "gpustack", "gpustack-warnings"]
    assert "**Warnings and info alerts go to the same receiver**" not in readme


def test_one_pagerduty_receiver_says_what_happens_to_warnings(render_spec):
    values, readme = stack_values(render_spec, receiver={"type": "pagerduty"} | SECRET)
    assert values["alertmanager"]["config"]["route"]["receiver"] == alert_routing.PAGING
    assert "**Warnings and info alerts go to the same receiver**" in readme
    assert "based on alert severity" in readme


def test_an_email_receiver_needs_its_addresses(render_spec):
    with pytest.raises(SpecError, match="an email receiver needs to, sender and smarthost"):
        render_spec(monitoring={"receiver": {"type": "email"} | SECRET})


def test_a_storage_class_gives_prometheus_and_alertmanager_claims(render_spec):
    values, readme = stack_values(render_spec, storageClass="ssd", retention="30d", prometheusStorage="100Gi")
    prometheus = values["prometheus"]["prometheusSpec"]
    assert (prometheus["retention"], prometheus["retentionSize"]) == ("30d", "80GB")
    claim = prometheus["storageSpec"]["volumeClaimTemplate"]["spec"]
    assert (claim["storageClassName"], claim["resources"]["requests"]["storage"]) == ("ssd", "100Gi")
    alertmanager_claim = values["alertmanager"]["alertmanagerSpec"]["storage"]["volumeClaimTemplate"]["spec"]
    assert alertmanager_claim["storageClassName"] == "ssd"
    assert "StorageClass `ssd`: 100Gi" in readme


def test_claims_are_the_default_on_the_clusters_default_storage_class(render_spec):
    values, readme = stack_values(render_spec)
    prometheus = values["prometheus"]["prometheusSpec"]
    claim = prometheus["storageSpec"]["volumeClaimTemplate"]["spec"]
    assert "storageClassName" not in claim and claim["resources"]["requests"]["storage"] == "50Gi"
    assert prometheus["retentionSize"] == "40GB"
    assert "volumeClaimTemplate" in values["alertmanager"]["alertmanagerSpec"]["storage"]
    assert "the cluster's default StorageClass" in readme


def test_without_persistence_emptydirs_are_bounded_and_the_readme_says_history_is_lost(render_spec):
    values, readme = stack_values(render_spec, persistence=False, prometheusStorage="2Gi")
    prometheus = values["prometheus"]["prometheusSpec"]
    assert prometheus["storageSpec"] == {"emptyDir": {"sizeLimit": "2Gi"}}
    assert prometheus["retentionSize"] == "1GB"
    assert values["alertmanager"]["alertmanagerSpec"]["storage"] == {"emptyDir": {"sizeLimit": "2Gi"}}
    assert "**Prometheus and Alertmanager keep their data in emptyDir volumes**" in readme


@pytest.mark.parametrize(("volume", "size"), [("50Gi", "40GB"), ("1Ti", "819GB"), ("1Gi", "819MB"), ("512Mi", "409MB")])
def test_retention_size_is_80_percent_of_the_volume_in_prometheus_units(volume, size):
    assert monitoring_stack.retention_size(volume) == size


def test_a_volume_size_must_be_in_binary_units(render_spec):
    with pytest.raises(SpecError, match="prometheusStorage"):
        render_spec(monitoring={"prometheusStorage": "50G"})


def test_every_monitoring_pod_has_requests(render_spec):
    rendered, _ = render_spec()
    values = release(rendered, "kube-prometheus-stack")
    for path in (
        ("prometheus", "prometheusSpec"), ("alertmanager", "alertmanagerSpec"), ("prometheusOperator",),
        ("prometheusOperator", "prometheusConfigReloader"), ("grafana",), ("grafana", "sidecar"),
        ("grafana", "downloadDashboards"), ("kube-state-metrics",),
        ("prometheus-node-exporter",),
    ):
        node = values
        for key in path:
            node = node[key]
        assert set(node["resources"]["requests"]) == {"cpu", "memory"}, path
    assert release(rendered, "dcgm-exporter")["resources"] == {"requests": REQUESTS["dcgm-exporter"]}


def test_the_operators_exporter_has_the_same_requests(render_spec):
    rendered, _ = render_spec(
        gpuOperator={"enabled": True},
        nodePools=[{"name": "h", "gpu": {"model": "H100-80GB-SXM", "count": 8}, "driver": {"source": "operator"}}],
    )
    exporter = release(rendered, "gpu-operator")["dcgmExporter"]
    assert exporter["resources"] == {"requests": REQUESTS["dcgm-exporter"]}


def test_replicated_prometheus_and_alertmanager_get_disruption_budgets(render_spec):
    values, _ = stack_values(render_spec, replicas=2)
    for section, pod_spec in (("prometheus", "prometheusSpec"), ("alertmanager", "alertmanagerSpec")):
        assert values[section][pod_spec]["replicas"] == 2
        assert values[section][pod_spec]["podAntiAffinity"] == "soft"
        # The chart's minAvailable: 1 stays; a drain evicts one of the two at a time.
        assert values[section]["podDisruptionBudget"] == {"enabled": True}
    # One replica: a budget would block every drain, so there is none.
    values, _ = stack_values(render_spec)
    for section, pod_spec in (("prometheus", "prometheusSpec"), ("alertmanager", "alertmanagerSpec")):
        assert "podDisruptionBudget" not in values[section] and "replicas" not in values[section][pod_spec]


def test_dashboards_are_downloaded_with_certificate_checks(render_spec):
    dashboards = {"grafana": {"dashboards": [{"gnetId": 12239, "revision": 2}]}}
    values, readme = stack_values(render_spec, **dashboards)
    assert values["grafana"]["defaultCurlOptions"] == "-sLf"
    assert "curl -k" not in readme
    # A chart that hard-codes curl -skf: said in the README, not silently ignored.
    values, readme = stack_values(render_spec, version="65.8.1", **dashboards)
    assert "defaultCurlOptions" not in values["grafana"]
    assert "**Grafana downloads them with `curl -k`**" in readme


def test_the_dashboard_download_is_said_and_its_init_container_has_requests_only_with_dashboards(render_spec):
    values, readme = stack_values(render_spec)
    assert values["grafana"]["downloadDashboards"]["resources"]["requests"]
    assert "**at every start of its pod**" in readme and "Grafana does not start" in readme
    values, readme = stack_values(render_spec, grafana={"dashboards": []})
    # No dashboards, no init container: a value the chart would not read is not emitted.
    assert "downloadDashboards" not in values["grafana"]
    assert "grafana.com" not in readme


def test_node_exporter_runs_beside_the_dcgm_exporter(render_spec):
    rendered, _ = render_spec()
    values = release(rendered, "kube-prometheus-stack")
    assert values["prometheus-node-exporter"]["namespaceOverride"] == "monitoring-agents"
    assert {r.name: r.namespace for r in rendered.releases}["dcgm-exporter"] == "monitoring-agents"
    rendered, _ = render_spec(
        gpuOperator={"enabled": True},
        nodePools=[{"name": "h", "gpu": {"model": "H100-80GB-SXM", "count": 8}, "driver": {"source": "operator"}}],
    )
    assert release(rendered, "kube-prometheus-stack")["prometheus-node-exporter"]["namespaceOverride"] == "gpu-operator"
