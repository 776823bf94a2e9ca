"""NetworkPolicies for the workloads' pods (``security.networkPolicies``): deny, then allow what the stack needs.

Per namespace that holds workloads, one policy denies all ingress and egress of the stack's pods,
then one policy per need allows it (NetworkPolicies add up;
https://kubernetes.io/docs/concepts/services-networking/network-policies/):

- DNS: every pod to kube-dns in kube-system, UDP and TCP 53 (CoreDNS' pods keep the
  ``k8s-app: kube-dns`` label on kubeadm and K3s);
- clients to vLLM's port: from ``security.vllmIngressFrom`` or, empty, from anywhere (the
  Service's clients and Prometheus, which scrapes the same port);
- vLLM and the model loader to their S3 endpoint: to that MinIO's pods when the endpoint is a
  MinIO of the spec (and MinIO admits them), else to the endpoint's port anywhere;
- vLLM reading from Hugging Face and the model loader to HTTPS (443) anywhere;
- the Secrets Job (``secrets``) to the API server: ports 443 and 6443 anywhere (the API
  server's address is the cluster's, which gpustack does not know).

In a namespace the stack creates the deny covers every pod; in a built-in one (``default``) only
the stack's pods (``app.kubernetes.io/managed-by: gpustack``), so other tenants' traffic is left
alone. The charts' pods get theirs from ``chart_policies``. A policy only takes effect where the
CNI enforces NetworkPolicy: kubeadm and Talos stacks install Cilium for that
(``stackfiles/cni.py``), K3s enforces them with its embedded network policy controller.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from gpustack.render import secret_names
from gpustack.render.component import BUILTIN_NAMESPACES, Contribution, RenderContext, add_object
from gpustack.render.components import minio_users, secrets, workloads
from gpustack.render.components.pods import MANAGED_BY, selector
from gpustack.spec.models import GpuStack
from gpustack.spec.models.workloads import HuggingFaceSource, Minio, ModelLoader, S3Source, Vllm

HTTPS = 443
DNS = [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]
KUBE_DNS = {
    "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
    "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
}
S3_DEFAULT_PORTS = {"http": 80, "https": 443}


def enabled(stack: GpuStack) -> bool:
    return stack.spec.security.networkPolicies and bool(stack.spec.workloads)


def build(chart: Any, ctx: RenderContext) -> Contribution:
    stack = ctx.stack
    if not enabled(stack):
        return Contribution()
    for policy in policies(stack):
        add_object(chart, policy)
    return Contribution(notes=[_note(stack)])


def policies(stack: GpuStack) -> list[dict[str, Any]]:
    namespaces = sorted({w.namespace for w in stack.spec.workloads})
    result = []
    for namespace in namespaces:
        stack_pods = {} if namespace not in BUILTIN_NAMESPACES else {"matchLabels": dict(MANAGED_BY)}
        result.append(policy(namespace, "gpustack-default-deny", stack_pods, ingress=[], egress=[]))
        result.append(policy(namespace, "gpustack-dns", stack_pods, egress=[{"to": [KUBE_DNS], "ports": DNS}]))
    for workload in stack.spec.workloads:
        result += list(_allows(stack, workload))
    for namespace in sorted(set(namespaces) & set(secrets.wanted(stack))):
        api_server = {"ports": [{"protocol": "TCP", "port": port} for port in secrets.API_SERVER_PORTS]}
        pods = {"matchLabels": dict(secrets.POD_LABELS)}
        result.append(policy(namespace, "gpustack-secrets-api-server", pods, egress=[api_server]))
    return result


def _allows(stack: GpuStack, workload: Any) -> Iterator[dict[str, Any]]:
    if isinstance(workload, Vllm):
        pods = {"matchLabels": selector(workloads.VLLM_APP, workload.name)}
        clients: dict[str, Any] = {"ports": [{"protocol": "TCP", "port": workloads.VLLM_PORT}]}
        if stack.spec.security.vllmIngressFrom:
            clients["from"] = [{"ipBlock": {"cidr": cidr}} for cidr in stack.spec.security.vllmIngressFrom]
        yield policy(workload.namespace, f"{workload.name}-clients", pods, ingress=[clients])
        if isinstance(workload.model, S3Source):
            yield policy(workload.namespace, f"{workload.name}-s3", pods, egress=[_s3_egress(stack, workload.model)])
        elif isinstance(workload.model, HuggingFaceSource):
            yield policy(workload.namespace, f"{workload.name}-huggingface", pods, egress=[_https_anywhere()])
    elif isinstance(workload, ModelLoader):
        pods = {"matchLabels": selector(workloads.LOADER_APP, workload.name)}
        egress = [_https_anywhere(), _s3_egress(stack, workload.destination)]
        yield policy(workload.namespace, f"{workload.name}-egress", pods, egress=egress)
    elif isinstance(workload, Minio):
        pods = {"matchLabels": selector(workloads.MINIO_APP, workload.name)}
        clients = [_client(w) for w in stack.spec.workloads if _reads(w, workload)]
        if secret_names.minio_roles(stack, workload):
            users = {"matchLabels": minio_users.job_selector(workload)}
            clients.append({"podSelector": users})
            yield policy(workload.namespace, f"{workload.name}-users-egress", users, egress=[_to_store(workload)])
        if clients:
            port = [{"protocol": "TCP", "port": workloads.MINIO_API_PORT}]
            yield policy(workload.namespace, f"{workload.name}-clients", pods, ingress=[{"from": clients, "ports": port}])


def _s3_egress(stack: GpuStack, source: S3Source) -> dict[str, Any]:
    for store in stack.spec.workloads:
        if isinstance(store, Minio) and store.serves(source.endpoint):
            return _to_store(store)
    url = urlsplit(source.endpoint)
    port = url.port or S3_DEFAULT_PORTS.get(url.scheme, HTTPS)
    return {"ports": [{"protocol": "TCP", "port": port}]}


def namespace_peer(namespace: str) -> dict[str, Any]:
    """A peer in ``namespace`` (the API server labels every namespace with its name)."""
    return {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}}}


def _to_store(store: Minio) -> dict[str, Any]:
    to = {**namespace_peer(store.namespace), "podSelector": {"matchLabels": selector(workloads.MINIO_APP, store.name)}}
    return {"to": [to], "ports": [{"protocol": "TCP", "port": workloads.MINIO_API_PORT}]}


def _reads(workload: Any, store: Minio) -> bool:
    if isinstance(workload, Vllm) and isinstance(workload.model, S3Source):
        return store.serves(workload.model.endpoint)
    if isinstance(workload, ModelLoader):
        return store.serves(workload.destination.endpoint)
    return False


def _client(workload: Vllm | ModelLoader) -> dict[str, Any]:
    app = workloads.VLLM_APP if isinstance(workload, Vllm) else workloads.LOADER_APP
    return {**namespace_peer(workload.namespace), "podSelector": {"matchLabels": selector(app, workload.name)}}


def _https_anywhere() -> dict[str, Any]:
    # A rule without ``to`` admits every destination; ipBlock 0.0.0.0/0 would not reliably cover
    # pod and Service addresses (left to the CNI by the NetworkPolicy API).
    return {"ports": [{"protocol": "TCP", "port": HTTPS}]}


def policy(
    namespace: str,
    name: str,
    pods: dict[str, Any],
    *,
    ingress: list[dict[str, Any]] | None = None,
    egress: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A NetworkPolicy; a direction given (even empty) is one it governs."""
    spec: dict[str, Any] = {"podSelector": pods, "policyTypes": []}
    for direction, rules in (("Ingress", ingress), ("Egress", egress)):
        if rules is not None:
            spec["policyTypes"].append(direction)
            spec[direction.lower()] = rules
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(MANAGED_BY)},
        "spec": spec,
    }


def _note(stack: GpuStack) -> str:
    sources = ", ".join(stack.spec.security.vllmIngressFrom) or "anywhere"
    return (
        "NetworkPolicies (`manifests/network-policies.yaml`, `security.networkPolicies`): the workloads' pods get "
        "no traffic but DNS to kube-dns, clients to vLLM's port (from "
        f"{sources}; `security.vllmIngressFrom` narrows it), vLLM and the model loader to their S3 store and "
        "HTTPS where they download from Hugging Face. They take effect where the CNI enforces NetworkPolicy: "
        "Cilium on kubeadm and Talos (its host step), K3s' embedded network policy controller."
    )
