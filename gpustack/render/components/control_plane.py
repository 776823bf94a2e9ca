"""Control-plane metrics that kube-prometheus-stack can scrape, per distribution.

kube-prometheus-stack scrapes the controller manager, scheduler, kube-proxy and etcd through
Services in kube-system; its alerts ``KubeControllerManagerDown``, ``KubeSchedulerDown``,
``KubeProxyDown`` and the etcd ones fire when those jobs find no target. Both distributions
bind these metrics to 127.0.0.1 by default, so gpustack binds them to every interface
(``cluster_args`` for K3s' config.yaml, ``kubeadm_*`` for kubeadm's configuration) and sets the
chart's values to match (``values``):

- kubeadm: the components are static pods labelled ``component: <name>``; the chart's default
  selectors and ports (10257, 10259 over HTTPS; kube-proxy 10249, etcd 2381 over HTTP) find them.
- K3s: they run inside the k3s process, not as pods, so the chart's selectors find nothing; it
  scrapes ``cluster.serverAddresses`` instead (its ``endpoints`` values). Without addresses those
  jobs are off. K3s keeps its datastore in SQLite unless started with embedded etcd, so its
  etcd job is off.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from gpustack.render.component import Contribution, RenderContext
from gpustack.spec.models import GpuStack

ANY_ADDRESS = "0.0.0.0"
KUBE_PROXY_PORT = 10249
ETCD_METRICS_PORT = 2381
ETCD_METRICS_URL = f"http://{ANY_ADDRESS}:{ETCD_METRICS_PORT}"
# K3s config.yaml keys → the arguments that bind each component's metrics to every interface.
K3S_ARGS = {
    "kube-controller-manager-arg": ["bind-address=0.0.0.0"],
    "kube-scheduler-arg": ["bind-address=0.0.0.0"],
    "kube-proxy-arg": [f"metrics-bind-address={ANY_ADDRESS}"],
}
# kube-prometheus-stack's values section of each control-plane job.
JOBS = ("kubeControllerManager", "kubeScheduler", "kubeProxy", "kubeEtcd")


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
        "controllerManager": [{"name": "bind-address", "value": ANY_ADDRESS}],
        "scheduler": [{"name": "bind-address", "value": ANY_ADDRESS}],
    }


def kubeadm_etcd_args(stack: GpuStack) -> list[dict[str, str]]:
    """Local etcd's extraArgs: metrics on every interface (kubeadm's default is 127.0.0.1:2381)."""
    return [{"name": "listen-metrics-urls", "value": ETCD_METRICS_URL}] if stack.spec.monitoring.enabled else []


def kube_proxy_metrics_address(stack: GpuStack) -> str | None:
    """KubeProxyConfiguration metricsBindAddress (kubeadm)."""
    return f"{ANY_ADDRESS}:{KUBE_PROXY_PORT}" if stack.spec.monitoring.enabled else None


def values(stack: GpuStack) -> dict[str, Any]:
    """kube-prometheus-stack values for the control-plane jobs (nothing where the defaults match)."""
    if stack.spec.cluster.distribution == "kubeadm":
        return {}
    addresses = list(stack.spec.cluster.serverAddresses)
    result: dict[str, Any] = {"kubeEtcd": {"enabled": False}}
    for job in ("kubeControllerManager", "kubeScheduler", "kubeProxy"):
        result[job] = {"endpoints": addresses} if addresses else {"enabled": False}
    return {job: result[job] for job in JOBS}


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
    if stack.spec.cluster.distribution == "kubeadm":
        return [
            "Control-plane metrics: `cluster/kubeadm-config.yaml` binds the controller manager and scheduler "
            f"(`bind-address: {ANY_ADDRESS}`), etcd (`listen-metrics-urls: {ETCD_METRICS_URL}`) and kube-proxy "
            f"(`metricsBindAddress: {ANY_ADDRESS}:{KUBE_PROXY_PORT}`) to every interface, where "
            "kube-prometheus-stack's default Services find them (ports 10257 and 10259 over HTTPS with the "
            "Prometheus service account's token, 10249 and 2381 over HTTP). Let only the cluster's nodes reach "
            "these ports. On an existing cluster edit /etc/kubernetes/manifests/kube-controller-manager.yaml, "
            "kube-scheduler.yaml, etcd.yaml and the kube-proxy ConfigMap the same way."
        ]
    addresses = stack.spec.cluster.serverAddresses
    flags = "; ".join(f"`{key}: [{args[0]}]`" for key, args in K3S_ARGS.items())
    notes = []
    if addresses:
        notes.append(
            "Control-plane metrics: K3s runs the controller manager, scheduler and kube-proxy inside the k3s "
            f"process, not as pods. `cluster/config.yaml` binds their metrics to every interface ({flags}) and "
            f"kube-prometheus-stack scrapes them at the servers' addresses {', '.join(addresses)} "
            "(`endpoints` of its kubeControllerManager, kubeScheduler and kubeProxy values; kube-proxy of agents "
            "is not scraped). Let only the cluster's nodes reach ports 10257, 10259 and 10249."
        )
    else:
        notes.append(
            "Control-plane metrics: K3s runs the controller manager, scheduler and kube-proxy inside the k3s "
            "process, not as pods, so kube-prometheus-stack's Services find nothing to scrape and its `*Down` alerts would fire: gpustack "
            "turns those jobs off. List the servers' IPs in `cluster.serverAddresses` to scrape them instead."
        )
    notes.append(
        "etcd: a single K3s server keeps its data in SQLite, so kube-prometheus-stack's etcd job is off. With "
        "embedded etcd (`cluster-init: true`) add `etcd-expose-metrics: true` to config.yaml and set "
        "`kubeEtcd.enabled: true` with `kubeEtcd.endpoints` (the servers' IPs, port 2381)."
    )
    return notes
