"""Control-plane metrics that kube-prometheus-stack can scrape, per distribution.

kube-prometheus-stack scrapes the controller manager, scheduler, kube-proxy and etcd through
Services in kube-system; its alerts ``KubeControllerManagerDown``, ``KubeSchedulerDown``,
``KubeProxyDown`` and the etcd ones fire when those jobs find no target. Both distributions
bind these metrics to 127.0.0.1 by default. What gpustack exposes depends on whether the port
checks who asks:

- The controller manager (10257) and scheduler (10259) serve HTTPS and authenticate and
  authorize every request to ``/metrics`` (TokenReview and SubjectAccessReview; only
  ``/healthz``, ``/readyz`` and ``/livez`` are open):
  https://kubernetes.io/docs/reference/command-line-tools-reference/kube-controller-manager/
  (``--authorization-always-allow-paths``). gpustack binds them to every interface
  (``bind-address`` takes one address and kubeadm shares one ClusterConfiguration between
  control-plane nodes, so a node's own address cannot be written there) and Prometheus scrapes
  them with its service account's token.
- kube-proxy (10249) serves plain HTTP to anyone who connects. It stays on 127.0.0.1, and
  kube-prometheus-stack's ``kubeProxy`` job is off (``values``) so that its ``KubeProxyDown``
  alert does not fire for a target it cannot reach.
- etcd (2381) serves ``/metrics`` and ``/health`` over plain HTTP too, but it is the one store of
  the cluster, so on kubeadm gpustack binds it to every interface (``listen-metrics-urls``,
  kubeadm's default is 127.0.0.1: ``cmd/kubeadm/app/phases/etcd/local.go``) and keeps the chart's
  ``kubeEtcd`` job and its etcd alerts (``defaultRules.rules.etcd``, on by default). kubeadm
  derives the etcd pod's probes from the same flag (``GetEtcdProbeEndpoint`` in
  ``cmd/kubeadm/app/util/staticpod/utils.go``). The other way, scraping the client port 2379 with
  a client certificate, would copy an etcd client key into a Secret of the monitoring namespace:
  etcd without its own auth gives any certificate of its CA the whole keyspace (every Secret of
  the cluster), while the metrics port reveals sizes, latencies and leader changes only; Talos
  documents the same listener for its etcd
  (https://docs.siderolabs.com/kubernetes-guides/monitoring-and-observability/etcd-metrics). On
  Talos and K3s gpustack leaves etcd's metrics on 127.0.0.1 and the job off.

kubeadm runs the controller manager and scheduler as static pods labelled ``component: <name>``,
which the chart's default Services find. K3s runs them inside the k3s process, not as pods, so
the chart scrapes ``cluster.serverAddresses`` instead (its ``endpoints`` values); without
addresses those jobs are off.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from gpustack.render.component import Contribution, RenderContext
from gpustack.spec.models import GpuStack

ANY_ADDRESS = "0.0.0.0"
# The secure ports' bind flag, the same on both components and both distributions.
BIND_ARG = "bind-address"
# K3s config.yaml keys → the arguments that bind the secure metrics ports to every interface.
K3S_ARGS = {
    "kube-controller-manager-arg": [f"{BIND_ARG}={ANY_ADDRESS}"],
    "kube-scheduler-arg": [f"{BIND_ARG}={ANY_ADDRESS}"],
}
# kube-prometheus-stack's values section of each control-plane job.
SECURE_JOBS = ("kubeControllerManager", "kubeScheduler")
PLAIN_HTTP_JOBS = ("kubeProxy", "kubeEtcd")
JOBS = (*SECURE_JOBS, *PLAIN_HTTP_JOBS)
ETCD_JOB = "kubeEtcd"
# etcd's metrics listener on every interface, at the port kube-prometheus-stack's kubeEtcd Service targets.
ETCD_METRICS_URLS = f"http://{ANY_ADDRESS}:2381"


def k3s_args(stack: GpuStack) -> dict[str, list[str]]:
    """config.yaml arguments (merged with the feature gates' by ``cluster``): only where
    kube-prometheus-stack will scrape them (``cluster.serverAddresses``)."""
    if not (stack.spec.monitoring.enabled and stack.spec.cluster.serverAddresses):
        return {}
    return {key: list(args) for key, args in K3S_ARGS.items()}


def kubeadm_bind_args(stack: GpuStack) -> dict[str, list[dict[str, str]]]:
    """ClusterConfiguration section → extraArgs entries (v1beta4 name/value lists)."""
    if not stack.spec.monitoring.enabled:
        return {}
    return {
        "controllerManager": [{"name": BIND_ARG, "value": ANY_ADDRESS}],
        "scheduler": [{"name": BIND_ARG, "value": ANY_ADDRESS}],
    }


def kubeadm_etcd_args(stack: GpuStack) -> list[dict[str, str]]:
    """ClusterConfiguration ``etcd.local.extraArgs``: the metrics listener Prometheus scrapes."""
    if not stack.spec.monitoring.enabled:
        return []
    return [{"name": "listen-metrics-urls", "value": ETCD_METRICS_URLS}]


def values(stack: GpuStack) -> dict[str, Any]:
    """kube-prometheus-stack values for the control-plane jobs: kube-proxy off, etcd off but on
    kubeadm; on K3s the secure ones at the servers' addresses (off without them)."""
    result: dict[str, Any] = {job: {"enabled": False} for job in PLAIN_HTTP_JOBS}
    if stack.spec.cluster.distribution == "kubeadm":
        del result[ETCD_JOB]
    if stack.spec.cluster.distribution == "k3s":
        addresses = list(stack.spec.cluster.serverAddresses)
        for job in SECURE_JOBS:
            result[job] = {"endpoints": addresses} if addresses else {"enabled": False}
    elif stack.spec.cluster.distribution == "talos":
        result.update({job: {"enabled": False} for job in SECURE_JOBS})
    return {job: result[job] for job in JOBS if job in result}


def build(chart: Any, ctx: RenderContext) -> Contribution:
    """Values added to kube-prometheus-stack's release (the pipeline merges releases of one name)."""
    stack = ctx.stack
    if not stack.spec.monitoring.enabled:
        return Contribution()
    from gpustack.render.components import monitoring

    extra = values(stack)
    releases = [replace(monitoring.kube_prometheus_stack_release(stack), values=extra)] if extra else []
    return Contribution(releases=releases, notes=_notes(stack))


def _notes(stack: GpuStack) -> list[str]:
    secure = (
        "their secure ports (10257 and 10259: HTTPS, and every request to `/metrics` is authenticated and "
        "authorized, so Prometheus scrapes them with its service account's token)"
    )
    plain = (
        "kube-proxy (10249) and etcd (2381) serve their metrics over plain HTTP to whoever connects, so they "
        "stay on 127.0.0.1 and kube-prometheus-stack's `kubeProxy` and `kubeEtcd` jobs are off. To watch the "
        "embedded etcd of K3s servers started with `--cluster-init`, start them with `--etcd-expose-metrics` "
        "(https://docs.k3s.io/cli/server) and list them in `kubeEtcd.endpoints`."
    )
    if stack.spec.cluster.distribution == "kubeadm":
        return [
            "Control-plane metrics: `cluster/kubeadm-config.yaml` binds the controller manager and scheduler "
            f"(`{BIND_ARG}: {ANY_ADDRESS}`) to every interface on {secure}. kube-proxy (10249) serves its metrics "
            "over plain HTTP to whoever connects, so it stays on 127.0.0.1 and kube-prometheus-stack's `kubeProxy` "
            f"job is off. etcd's metrics listener is bound to every interface (`listen-metrics-urls: "
            f"{ETCD_METRICS_URLS}`), so the `kubeEtcd` job scrapes each member and the chart's etcd alerts "
            "(`etcdMembersDown`, `etcdNoLeader`, `etcdInsufficientMembers`, …) watch it: the port serves "
            "metrics and `/health` only, over plain HTTP, so keep 2381 to the cluster's network in the nodes' "
            "firewall. gpustack does not scrape etcd's client port 2379 with a client certificate instead: "
            "a copy of an etcd client key in a Secret would give whoever reads it every key of etcd, every "
            "Secret of the cluster included."
        ]
    if stack.spec.cluster.distribution == "talos":
        return [
            "Control-plane metrics: Talos binds the controller manager and scheduler to 127.0.0.1 and labels "
            "their static pods otherwise than kube-prometheus-stack's Services select, so gpustack turns its "
            "kubeControllerManager and kubeScheduler jobs off rather than let their `*Down` alerts fire. "
            "kube-proxy (10249) and etcd (2381) serve their metrics over plain HTTP to whoever connects, so they "
            "stay on 127.0.0.1 and the `kubeProxy` and `kubeEtcd` jobs are off too."
        ]
    addresses = stack.spec.cluster.serverAddresses
    flags = "; ".join(f"`{key}: [{args[0]}]`" for key, args in K3S_ARGS.items())
    if addresses:
        scraped = (
            "Control-plane metrics: K3s runs the controller manager and scheduler inside the k3s process, not as "
            f"pods. `cluster/config.yaml` binds them to every interface ({flags}) on {secure}, and "
            f"kube-prometheus-stack scrapes them at the servers' addresses {', '.join(addresses)} (`endpoints` of "
            "its kubeControllerManager and kubeScheduler values)."
        )
    else:
        scraped = (
            "Control-plane metrics: K3s runs the controller manager and scheduler inside the k3s process, not as "
            "pods, so kube-prometheus-stack's Services find nothing to scrape and its `*Down` alerts would fire: "
            "gpustack turns those jobs off. List the servers' IPs in `cluster.serverAddresses` to scrape them "
            "instead."
        )
    return [
        scraped,
        f"{plain[0].upper()}{plain[1:]} A single K3s server keeps its data in SQLite rather than etcd.",
    ]
