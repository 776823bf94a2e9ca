"""The charts' NetworkPolicies (gpustack/render/components/chart_policies.py): ingress denied per
release namespace, then Prometheus, the monitoring stack's own pods and the API server's webhook
calls allowed. tests/e2e/test_chart_policies.py holds them against the real charts' pods."""

from __future__ import annotations

from gpustack.render.components import chart_policies

PROMETHEUS = [{"from": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}},
                         "podSelector": {"matchLabels": {"app.kubernetes.io/name": "prometheus"}}}]}]


def policies(rendered):
    return {(obj["metadata"]["namespace"], obj["metadata"]["name"]): obj["spec"]
            for path, obj in rendered.objects() if obj["kind"] == "NetworkPolicy"}


def test_every_release_namespace_denies_ingress_but_what_its_charts_need(render_spec):
    rendered, files = render_spec()  # K3s: NFD, the device plugin in kube-system, kube-prometheus-stack, DCGM Exporter
    found = policies(rendered)
    namespaces = {r.namespace for r in rendered.releases}
    # DCGM Exporter and node-exporter run apart, in the privileged agents' namespace.
    assert namespaces == {"monitoring", "monitoring-agents", "node-feature-discovery", "kube-system"}
    for namespace in ("monitoring", "monitoring-agents", "node-feature-discovery"):
        deny = found[(namespace, "gpustack-charts-default-deny-ingress")]
        assert deny == {"podSelector": {}, "policyTypes": ["Ingress"], "ingress": []}
    # Prometheus scrapes NFD; in its own namespace the monitoring pods reach each other.
    assert found[("node-feature-discovery", "gpustack-prometheus-scrapes")]["ingress"] == PROMETHEUS
    assert found[("monitoring-agents", "gpustack-prometheus-scrapes")]["ingress"] == PROMETHEUS
    assert found[("monitoring", "gpustack-monitoring-peers")]["ingress"] == [{"from": [{"podSelector": {}}]}]
    # The API server calls the operator's webhooks from the host network: the port, any source.
    webhook = found[("monitoring", "kube-prometheus-stack-webhook-from-api-server")]
    assert webhook["ingress"] == [{"ports": [{"protocol": "TCP", "port": 10250}]}]
    assert webhook["podSelector"]["matchLabels"]["app.kubernetes.io/component"] == "prometheus-operator"
    # kube-system: only the release's pods (CoreDNS, the CNI and the rest are not the stack's).
    deny = found[("kube-system", "nvidia-device-plugin-default-deny-ingress")]
    assert deny["podSelector"] == {"matchLabels": {"app.kubernetes.io/instance": "nvidia-device-plugin"}}
    assert not [key for key in found if key[0] == "kube-system" and "gpustack" in key[1]]
    assert "Prometheus' scrapes" in files["README.md"]
    # Egress stays open: no chart policy governs it.
    assert all("Egress" not in spec["policyTypes"] for (ns, _), spec in found.items() if ns in namespaces)


def test_hami_in_kube_system_keeps_its_webhook_and_metrics(render_spec):
    rendered, _ = render_spec(sharing={"hami": {"enabled": True}}, devicePlugin={"enabled": False})
    found = policies(rendered)
    webhook = found[("kube-system", "hami-webhook-from-api-server")]
    assert webhook["podSelector"]["matchLabels"] == {"app.kubernetes.io/instance": "hami",
                                                     "app.kubernetes.io/component": "hami-scheduler"}
    assert webhook["ingress"] == [{"ports": [{"protocol": "TCP", "port": 443}]}]
    assert found[("kube-system", "hami-prometheus-scrapes")]["ingress"] == PROMETHEUS


def test_without_monitoring_nothing_is_allowed_to_scrape(render_spec):
    rendered, _ = render_spec(monitoring={"enabled": False})
    found = policies(rendered)
    assert ("node-feature-discovery", "gpustack-charts-default-deny-ingress") in found
    assert not [key for key in found if "prometheus" in key[1] or "monitoring" in key[0]]


def test_the_opt_out_renders_no_chart_policy(render_spec):
    rendered, files = render_spec(security={"networkPolicies": False})
    assert not policies(rendered) and "manifests/network-policies.yaml" not in files
    assert not chart_policies.policies(rendered.ctx.stack, rendered.releases)
