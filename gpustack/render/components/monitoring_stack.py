"""kube-prometheus-stack's own pods: Alertmanager's receiver, Prometheus's retention and storage, requests.

Keys are those of kube-prometheus-stack's values.yaml (and of its grafana, kube-state-metrics
and prometheus-node-exporter subcharts):
https://github.com/prometheus-community/helm-charts/blob/main/charts/kube-prometheus-stack/values.yaml

The receiver's credential is a Secret the user names: ``alertmanagerSpec.secrets`` mounts it at
``/etc/alertmanager/secrets/<name>/`` and the receiver reads it through a ``*_file`` setting
(https://prometheus.io/docs/alerting/latest/configuration/#receiver-integration-settings), so the
rendered values (committed to Git) never hold it.
"""

from __future__ import annotations

from typing import Any

from gpustack.render.requests import requests
from gpustack.spec.models import GpuStack
from gpustack.spec.models.components import AlertReceiver

RECEIVER = "gpustack"
# The chart's own receiver, which its default route sends Watchdog to: kept in the list.
NULL_RECEIVER = "null"
SECRETS_DIR = "/etc/alertmanager/secrets"


def stack_values(stack: GpuStack) -> dict[str, Any]:
    """Values for Alertmanager, Prometheus, the operator and the subcharts' pods."""
    monitoring = stack.spec.monitoring
    prometheus: dict[str, Any] = {"retention": monitoring.retention, "resources": requests("prometheus")}
    alertmanager_spec: dict[str, Any] = {"resources": requests("alertmanager")}
    if monitoring.storageClass:
        prometheus["storageSpec"] = _claim(monitoring.storageClass, monitoring.prometheusStorage)
        alertmanager_spec["storage"] = _claim(monitoring.storageClass, monitoring.alertmanagerStorage)
    alertmanager: dict[str, Any] = {"alertmanagerSpec": alertmanager_spec}
    prometheus_section: dict[str, Any] = {"prometheusSpec": prometheus}
    if monitoring.replicas > 1:
        for section, pod_spec in ((alertmanager, alertmanager_spec), (prometheus_section, prometheus)):
            pod_spec["replicas"] = monitoring.replicas
            pod_spec["podAntiAffinity"] = "soft"  # the chart's: prefer one replica per node
            # The chart's budget keeps its minAvailable: 1 (setting maxUnavailable as well would
            # render both, which the API refuses): a drain evicts one replica at a time.
            section["podDisruptionBudget"] = {"enabled": True}
    if monitoring.receiver is not None:
        alertmanager_spec["secrets"] = [monitoring.receiver.secretName]
        alertmanager["config"] = {
            "route": {"receiver": RECEIVER},
            "receivers": [{"name": NULL_RECEIVER}, receiver_config(monitoring.receiver)],
        }
    return {
        "alertmanager": alertmanager,
        "prometheus": prometheus_section,
        "prometheusOperator": {
            "resources": requests("operator"),
            "prometheusConfigReloader": {"resources": requests("config-reloader")},
        },
        "grafana": {"resources": requests("grafana")},
        "kube-state-metrics": {"resources": requests("kube-state-metrics")},
        "prometheus-node-exporter": {"resources": requests("node-exporter")},
    }


def receiver_config(receiver: AlertReceiver) -> dict[str, Any]:
    """Alertmanager's receiver entry, its credential read from the mounted Secret."""
    secret = f"{SECRETS_DIR}/{receiver.secretName}/{receiver.secretKey}"
    if receiver.type == "webhook":
        return {"name": RECEIVER, "webhook_configs": [{"url_file": secret, "send_resolved": True}]}
    if receiver.type == "slack":
        slack: dict[str, Any] = {"api_url_file": secret, "send_resolved": True}
        if receiver.channel:
            slack["channel"] = receiver.channel
        return {"name": RECEIVER, "slack_configs": [slack]}
    if receiver.type == "pagerduty":
        return {"name": RECEIVER, "pagerduty_configs": [{"routing_key_file": secret, "send_resolved": True}]}
    return {
        "name": RECEIVER,
        "email_configs": [
            {
                "to": receiver.to,
                "from": receiver.sender,
                "smarthost": receiver.smarthost,
                "auth_username": receiver.username or receiver.sender,
                "auth_password_file": secret,
                "send_resolved": True,
            }
        ],
    }


def exporter_requests() -> dict[str, Any]:
    return requests("dcgm-exporter")


def notes(stack: GpuStack) -> list[str]:
    """What the README says about where alerts go and where the data lives."""
    monitoring = stack.spec.monitoring
    receiver = monitoring.receiver
    if receiver is None:
        sent = (
            "**Alerts are not sent anywhere**: Alertmanager keeps kube-prometheus-stack's default receiver, "
            "which drops every alert. Set "
            "`monitoring.receiver` (webhook, slack, pagerduty or email, with the Secret holding its credential)."
        )
    else:
        sent = (
            f"Alertmanager sends every alert to the {receiver.type} receiver `{RECEIVER}`; its credential is key "
            f"`{receiver.secretKey}` of Secret `{receiver.secretName}` in namespace `{monitoring.namespace}`, which "
            "you create (it is not rendered)."
        )
    if monitoring.storageClass:
        kept = (
            f"Prometheus keeps {monitoring.retention} of samples on a {monitoring.prometheusStorage} volume of "
            f"StorageClass `{monitoring.storageClass}` (Alertmanager: {monitoring.alertmanagerStorage})."
        )
    else:
        kept = (
            f"Prometheus keeps {monitoring.retention} of samples in the pod: **no storageClass is set**, so the "
            "history is lost when the pod moves. Set `monitoring.storageClass` for PersistentVolumeClaims."
        )
    return [sent, kept]


def _claim(storage_class: str, size: str) -> dict[str, Any]:
    return {
        "volumeClaimTemplate": {
            "spec": {
                "storageClassName": storage_class,
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": size}},
            }
        }
    }
