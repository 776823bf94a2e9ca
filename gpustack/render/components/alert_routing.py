"""Alertmanager's route tree and receivers: critical alerts page, per node; the rest does not.

kube-prometheus-stack's default route (its values.yaml ``alertmanager.config``) sends everything
to the ``null`` receiver grouped by ``namespace`` only. Helm merges maps, so setting only the
route's receiver would keep that ``group_by``: gpustack's GPU alerts carry no ``namespace`` (they
carry ``node``, alert_series.NODE), and every node's GPU alerts would fall into one group, one
notification and, on PagerDuty, one deduplication key (the group key), so a second node's
XID 79 would not page. gpustack therefore renders the whole route:

- ``InfoInhibitor`` and ``Watchdog`` go to ``null``: InfoInhibitor exists only to inhibit info
  alerts (https://runbooks.prometheus-operator.dev/runbooks/general/infoinhibitor/), Watchdog
  is a heartbeat for a dead man's switch, never a notification
  (https://runbooks.prometheus-operator.dev/runbooks/general/watchdog/).
- ``severity="critical"`` goes to the paging receiver (``monitoring.receiver``), grouped by
  ``alertname``, ``namespace``, ``node`` and ``instance``: the GPU alerts carry ``node``,
  node-exporter's carry the node in ``instance``, so two nodes are two incidents.
- Everything else (warning, info, unlabelled: the user-caused XIDs of the RESTART_APP bucket
  among them, which xid.py renders as warnings) goes to ``monitoring.warningReceiver``, or, when
  the stack has one receiver only, to the same receiver as a digest: one notification per alert
  name across nodes, repeated daily. A PagerDuty receiver gets those with PagerDuty severity
  ``warning`` (Alertmanager's default ``severity`` template is the alerts' common ``severity``
  label: https://prometheus.io/docs/alerting/latest/configuration/#pagerduty_config), which
  PagerDuty turns into a low-urgency, non-paging incident where the service's urgency is
  "based on alert severity" (https://support.pagerduty.com/main/docs/dynamic-notifications).

The chart's ``inhibit_rules``, ``global`` and ``templates`` are kept (gpustack sets neither).
Receivers read their credential from a Secret the user names: ``alertmanagerSpec.secrets``
mounts it at ``/etc/alertmanager/secrets/<name>/`` and the receiver reads it through a ``*_file``
setting (https://prometheus.io/docs/alerting/latest/configuration/#receiver-integration-settings),
so the rendered values (committed to Git) never hold it.
"""

from __future__ import annotations

from typing import Any

from gpustack.render.components.alert_series import NODE
from gpustack.spec.models.monitoring import AlertReceiver, Monitoring

PAGING = "gpustack"
WARNINGS = "gpustack-warnings"
# The chart's own receiver, which its default route sends Watchdog to: kept in the list.
NULL = "null"
SECRETS_DIR = "/etc/alertmanager/secrets"
SILENCED = ("InfoInhibitor", "Watchdog")
# Paging: one group per alert, namespace and node (GPU alerts: node; node-exporter's: instance).
PAGING_GROUP_BY = ["alertname", "namespace", NODE, "instance"]
# The rest: one digest per alert name and namespace, whatever the node.
DIGEST_GROUP_BY = ["alertname", "namespace"]
# The chart's timings (values.yaml), except the repeats: a critical alert still firing resurfaces
# every 4 hours, a warning once a day.
GROUP_WAIT, GROUP_INTERVAL = "30s", "5m"
PAGING_REPEAT, DIGEST_REPEAT = "4h", "24h"


def config(monitoring: Monitoring) -> dict[str, Any] | None:
    """``alertmanager.config``'s route and receivers; None without a receiver (the chart's null route)."""
    paging = monitoring.receiver
    if paging is None:
        return None
    warnings = monitoring.warningReceiver
    receivers = [{"name": NULL}, receiver_config(PAGING, paging)]
    if warnings is not None:
        receivers.append(receiver_config(WARNINGS, warnings))
    return {
        "route": {
            "receiver": WARNINGS if warnings is not None else PAGING,
            "group_by": DIGEST_GROUP_BY,
            "group_wait": GROUP_WAIT,
            "group_interval": GROUP_INTERVAL,
            "repeat_interval": DIGEST_REPEAT,
            "routes": [
                {"receiver": NULL, "matchers": [f'alertname=~"{"|".join(SILENCED)}"']},
                {
                    "receiver": PAGING,
                    "matchers": ['severity="critical"'],
                    "group_by": PAGING_GROUP_BY,
                    "repeat_interval": PAGING_REPEAT,
                },
            ],
        },
        "receivers": receivers,
    }


def secrets(monitoring: Monitoring) -> list[str]:
    """The Secrets Alertmanager mounts: each receiver's, once."""
    named = [r.secretName for r in (monitoring.receiver, monitoring.warningReceiver) if r is not None]
    return list(dict.fromkeys(named))


def receiver_config(name: str, receiver: AlertReceiver) -> dict[str, Any]:
    """Alertmanager's receiver entry, its credential read from the mounted Secret."""
    secret = f"{SECRETS_DIR}/{receiver.secretName}/{receiver.secretKey}"
    if receiver.type == "webhook":
        return {"name": name, "webhook_configs": [{"url_file": secret, "send_resolved": True}]}
    if receiver.type == "slack":
        slack: dict[str, Any] = {"api_url_file": secret, "send_resolved": True}
        if receiver.channel:
            slack["channel"] = receiver.channel
        return {"name": name, "slack_configs": [slack]}
    if receiver.type == "pagerduty":
        return {"name": name, "pagerduty_configs": [{"routing_key_file": secret, "send_resolved": True}]}
    return {
        "name": name,
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


def notes(monitoring: Monitoring) -> list[str]:
    """Where alerts go, in the README."""
    paging, warnings = monitoring.receiver, monitoring.warningReceiver
    if paging is None:
        return [
            "**Alerts are not sent anywhere**: without `monitoring.receiver` Alertmanager keeps "
            "kube-prometheus-stack's default route, whose receiver has no integration and drops every alert, the critical "
            "GPU alerts (GPULost, fatal XIDs, GPUExporterDown) included; they show only in Prometheus's and "
            "Alertmanager's UIs while they fire. Set `monitoring.receiver` (webhook, slack, pagerduty or email, "
            "with the Secret holding its credential) for critical alerts, and `monitoring.warningReceiver` for "
            "the others."
        ]
    lines = [
        f"Critical alerts page the {paging.type} receiver `{PAGING}`, one notification group per alert, "
        f"namespace and node (`group_by: [{', '.join(PAGING_GROUP_BY)}]`), repeated every {PAGING_REPEAT} while firing. "
        "`InfoInhibitor` and `Watchdog` go to the chart's receiver without integrations, which sends nothing."
    ]
    if warnings is not None:
        lines.append(
            f"Warnings and info alerts (user-caused XIDs among them) go to the {warnings.type} receiver "
            f"`{WARNINGS}`, one group per alert name and namespace across nodes, repeated every {DIGEST_REPEAT}."
        )
    else:
        digest = (
            f"**Warnings and info alerts go to the same receiver** (no `monitoring.warningReceiver`), as a digest: "
            f"one group per alert name and namespace across nodes, repeated every {DIGEST_REPEAT}."
        )
        if paging.type == "pagerduty":
            digest += (
                " PagerDuty receives them with severity `warning`/`info`: set the PagerDuty service's urgency to "
                "\"based on alert severity\" so that they open low-urgency incidents and do not page, or set "
                "`monitoring.warningReceiver` (a chat or ticket webhook)."
            )
        lines.append(digest)
    for receiver in [paging] + ([warnings] if warnings not in (None, paging) else []):
        lines.append(
            f"The {receiver.type} receiver's credential is key `{receiver.secretKey}` of Secret "
            f"`{receiver.secretName}` in namespace `{monitoring.namespace}`, which you create (it is not rendered)."
        )
    return lines
