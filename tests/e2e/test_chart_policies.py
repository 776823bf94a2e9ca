"""The charts' NetworkPolicies (gpustack/render/components/chart_policies.py) against the pods the real
charts create with the rendered values: every pod is under a deny of ingress, and every admission
webhook the chart registers reaches a pod that a policy opens, from any source, on the very port the
webhook's Service sends to (the API server calls from the host network)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from real_charts import Helm, objects

pytestmark = pytest.mark.e2e

POD_OWNERS = ("Deployment", "DaemonSet", "StatefulSet", "Job")
WEBHOOKS = ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")
# Labels a pod gets at run time, not from its template: HAMi's scheduler labels its elected leader,
# which its webhook Service selects (HAMi's HAMiRoleLabel; the chart's templates/scheduler/service.yaml).
RUNTIME_LABELS = frozenset({"hami.io/scheduler-role"})


def _selects(policy: dict[str, Any], namespace: str, labels: dict[str, str]) -> bool:
    selector = policy["spec"]["podSelector"].get("matchLabels", {})
    return policy["metadata"]["namespace"] == namespace and selector.items() <= labels.items()


def _pod_port(pod: dict[str, Any], target: int | str) -> int:
    if isinstance(target, int):
        return target
    return next(p["containerPort"] for c in pod["spec"]["containers"] for p in c.get("ports", []) if p.get("name") == target)


def test_every_chart_pod_is_denied_ingress_and_its_webhooks_stay_reachable(example: tuple[Any, Helm], tmp_path: Path):
    (rendered, _), helm = example
    policies = [obj for _, obj in rendered.objects() if obj["kind"] == "NetworkPolicy"]
    denies = [p for p in policies if "Ingress" in p["spec"]["policyTypes"] and p["spec"].get("ingress") == []]
    checked_webhooks = 0
    for release in rendered.releases:
        docs = objects(helm.template(release, release.values, tmp_path))
        pods = [(release.namespace, d["spec"]["template"]) for d in docs if d["kind"] in POD_OWNERS]
        assert pods, f"release {release.name} creates no pod"
        for namespace, pod in pods:
            labels = pod["metadata"].get("labels", {})
            assert any(_selects(p, namespace, labels) for p in denies), f"{release.name}: a pod {labels} is not denied ingress"
        services = {(release.namespace, d["metadata"]["name"]): d for d in docs if d["kind"] == "Service"}
        for config in (d for d in docs if d["kind"] in WEBHOOKS):
            for webhook in config["webhooks"]:
                target = webhook["clientConfig"]["service"]
                service = services[(target["namespace"], target["name"])]
                port = next(p for p in service["spec"]["ports"] if p["port"] == target.get("port", 443))
                selector = {k: v for k, v in service["spec"]["selector"].items() if k not in RUNTIME_LABELS}
                served = [pod for ns, pod in pods if ns == target["namespace"]
                          and selector.items() <= pod["metadata"].get("labels", {}).items()]
                assert served, f"{webhook['name']}: no pod behind {target}"
                for pod in served:
                    wanted = _pod_port(pod, port.get("targetPort", port["port"]))
                    opened = [p for p in policies if _selects(p, target["namespace"], pod["metadata"]["labels"])
                              and any("from" not in rule and {"protocol": "TCP", "port": wanted} in rule.get("ports", [])
                                      for rule in p["spec"].get("ingress", []))]
                    assert opened, f"{webhook['name']}: nothing admits the API server on {target['name']}'s pod port {wanted}"
                checked_webhooks += 1
    if any(r.chart in ("kube-prometheus-stack", "hami") for r in rendered.releases):
        assert checked_webhooks, "the charts' webhooks were not found"
