"""NetworkPolicies for the charts' pods (``security.networkPolicies``): deny all ingress, then allow
what their components need. Built from the merged releases (``app.render``), so every chart the
stack installs is covered, in ``manifests/network-policies.yaml`` with the workloads' policies.

Per namespace of a release (NetworkPolicies add up;
https://kubernetes.io/docs/concepts/services-networking/network-policies/):

- a deny of all ingress: every pod of a namespace the stack creates, or in a built-in one
  (``kube-system`` holds HAMi and the device plugin) only the release's pods
  (``app.kubernetes.io/instance``, which every chart here sets on its pods), so the cluster's own
  pods there are left alone;
- Prometheus to every pod of the release (``app.kubernetes.io/name: prometheus``, the label the
  Prometheus Operator gives its Prometheus pods and kube-prometheus-stack's own policy selects,
  https://github.com/prometheus-community/helm-charts/blob/kube-prometheus-stack-88.5.3/charts/kube-prometheus-stack/templates/prometheus/networkpolicy.yaml):
  it scrapes their metrics ports;
- in the monitoring stack's namespace, its pods to each other: Grafana queries Prometheus,
  Prometheus sends to Alertmanager and scrapes kube-state-metrics, the operator, Grafana and DCGM
  Exporter there, Alertmanager's replicas gossip;
- the admission webhooks, from anywhere on the webhook server's port: the API server calls them
  from the control-plane nodes' host network, whose addresses gpustack does not know (a rule
  without ``from`` admits every source, host and remote nodes included: Cilium,
  https://github.com/cilium/cilium/blob/v1.20.2/pkg/k8s/network_policy.go). kube-prometheus-stack's
  operator serves them on 10250 (``prometheusOperator.tls.internalPort``, the port its own
  policy opens), HAMi's scheduler on 443 (its ``vgpu-scheduler-extender`` container's port).

Not needed: the kubelet's probes (traffic from the pod's own node is always allowed, the page above),
HAMi's scheduler extender (called by the kube-scheduler container of the same pod, over localhost),
NFD 0.19's master and workers (they talk through NodeFeature objects in the API server, not to each
other), and host-network pods such as node-exporter, which policies do not cover. Egress is left
open: the charts' pods reach the API server, whose address gpustack does not know.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from gpustack.charts import registry
from gpustack.render.component import BUILTIN_NAMESPACES, HelmRelease
from gpustack.render.components.network_policies import namespace_peer, policy
from gpustack.render.rendered import Rendered
from gpustack.spec.models import GpuStack

MANIFEST = "network-policies"  # the workloads' policies' file (component network_policies)
INSTANCE = "app.kubernetes.io/instance"
PROMETHEUS = {"app.kubernetes.io/name": "prometheus"}
MONITORING_STACK = "monitoring-stack"  # the registry's role of kube-prometheus-stack
# Chart → (pod labels of its webhook server, the port on the pod the API server calls).
WEBHOOKS: dict[str, tuple[dict[str, str], int]] = {
    # prometheusOperator.tls.internalPort of the chart's values.yaml (88.5.3), the port its own operator
    # policy opens (templates/prometheus-operator/networkpolicy.yaml); its operator pods carry this label.
    "kube-prometheus-stack": ({"app.kubernetes.io/component": "prometheus-operator"}, 10250),
    # The hami chart's (2.10.0, https://github.com/Project-HAMi/HAMi/tree/master/charts/hami)
    # templates/scheduler/deployment.yaml: the extender container's https port serves the webhook.
    "hami": ({"app.kubernetes.io/component": "hami-scheduler"}, 443),
}


def enabled(stack: GpuStack) -> bool:
    return stack.spec.security.networkPolicies


def policies(stack: GpuStack, releases: Sequence[HelmRelease]) -> list[dict[str, Any]]:
    if not enabled(stack):
        return []
    roles = {name: chart.role for name, chart in registry().items()}
    monitoring = next((r for r in releases if roles.get(r.chart) == MONITORING_STACK), None)
    result: list[dict[str, Any]] = []
    for namespace in sorted({r.namespace for r in releases}):
        here = [r for r in releases if r.namespace == namespace]
        if namespace in BUILTIN_NAMESPACES:
            for release in here:
                result += _release_policies(release, {"matchLabels": {INSTANCE: release.name}}, monitoring)
        else:
            result += _namespace_policies(namespace, here, monitoring)
    return result


def _namespace_policies(namespace: str, here: list[HelmRelease], monitoring: HelmRelease | None) -> list[dict[str, Any]]:
    everyone: dict[str, Any] = {}
    result = [policy(namespace, "gpustack-charts-default-deny-ingress", everyone, ingress=[])]
    if monitoring is not None and monitoring.namespace == namespace:
        peers = {"from": [{"podSelector": {}}]}
        result.append(policy(namespace, "gpustack-monitoring-peers", everyone, ingress=[peers]))
    elif monitoring is not None:
        result.append(policy(namespace, "gpustack-prometheus-scrapes", everyone, ingress=[_from_prometheus(monitoring)]))
    result += _webhooks(here)
    return result


def _release_policies(release: HelmRelease, pods: dict[str, Any], monitoring: HelmRelease | None) -> list[dict[str, Any]]:
    """A release in a built-in namespace: the same policies, for its own pods only."""
    namespace = release.namespace
    result = [policy(namespace, f"{release.name}-default-deny-ingress", pods, ingress=[])]
    if monitoring is not None:
        result.append(policy(namespace, f"{release.name}-prometheus-scrapes", pods, ingress=[_from_prometheus(monitoring)]))
    return result + _webhooks([release])


def _webhooks(releases: Iterable[HelmRelease]) -> list[dict[str, Any]]:
    result = []
    for release in releases:
        if release.chart not in WEBHOOKS:
            continue
        labels, port = WEBHOOKS[release.chart]
        pods = {"matchLabels": {INSTANCE: release.name, **labels}}
        api_server = {"ports": [{"protocol": "TCP", "port": port}]}
        result.append(policy(release.namespace, f"{release.name}-webhook-from-api-server", pods, ingress=[api_server]))
    return result


def _from_prometheus(monitoring: HelmRelease) -> dict[str, Any]:
    return {"from": [{**namespace_peer(monitoring.namespace), "podSelector": {"matchLabels": dict(PROMETHEUS)}}]}


NOTE = (
    "The charts' pods (`manifests/network-policies.yaml`) accept no traffic but Prometheus' scrapes, the "
    "monitoring stack's pods among themselves, and the API server's calls to the admission webhooks "
    "(kube-prometheus-stack's operator, HAMi's scheduler), from anywhere on the webhook's port: the API server "
    "calls from the control-plane nodes' host network, whose addresses gpustack does not know. In `kube-system` "
    "only the releases' own pods are covered. Grafana, Prometheus and Alertmanager stay reachable through "
    "`kubectl port-forward`; to serve one through an ingress controller or a load balancer, add a policy that "
    "admits it on that port (Grafana: 3000). They take effect where the CNI enforces NetworkPolicy: Cilium on "
    "kubeadm and Talos (its host step), K3s' embedded network policy controller."
)


def added(rendered: Rendered) -> Rendered:
    """``rendered`` with the charts' policies and their note beside the workloads' (component
    network-policies: ``manifests/network-policies.yaml``, its README notes)."""
    stack = rendered.ctx.stack
    objects = policies(stack, rendered.releases)
    if not objects:
        return rendered
    manifests = dict(rendered.manifests)
    manifests[MANIFEST] = [*manifests.get(MANIFEST, []), *objects]
    notes = dict(rendered.notes)
    notes[MANIFEST] = [*notes.get(MANIFEST, []), NOTE]
    return replace(rendered, manifests=manifests, notes=notes)
