"""The security baseline: NetworkPolicies and Pod Security labels, on by default, each with its opt-out."""

from __future__ import annotations

from gpustack.render import pod_security

MINIO = {"type": "minio", "name": "store", "namespace": "models", "credentialsSecret": "s3"}
INTERNAL = {"uri": "s3://models/m", "endpoint": "http://store.models.svc.cluster.local:9000", "credentialsSecret": "s3"}
EXTERNAL = {"uri": "s3://models/m", "endpoint": "https://s3.example.com", "credentialsSecret": "s3"}
LOADER = {"type": "modelLoader", "namespace": "models", "huggingFaceModel": "Qwen/Qwen2.5-1.5B-Instruct",
          "destination": INTERNAL}


def objects(rendered, kind):
    return {(obj["metadata"].get("namespace"), obj["metadata"]["name"]): obj
            for _, obj in rendered.objects() if obj["kind"] == kind}


def test_stack_pods_are_denied_everything_but_what_they_need(render_spec):
    rendered, files = render_spec(workloads=[
        MINIO, LOADER,
        {"type": "vllm", "name": "llm", "namespace": "serve", "model": INTERNAL, "replicas": 2},
        {"type": "vllm", "name": "ext", "namespace": "serve", "model": EXTERNAL},
        {"type": "smokeTest"},
    ])
    policies = objects(rendered, "NetworkPolicy")
    for namespace in ("models", "serve"):
        deny = policies[(namespace, "gpustack-default-deny")]["spec"]
        # A namespace the stack creates: every pod in it.
        assert deny == {"podSelector": {}, "policyTypes": ["Ingress", "Egress"], "ingress": [], "egress": []}
        dns = policies[(namespace, "gpustack-dns")]["spec"]["egress"][0]
        assert dns["to"][0]["podSelector"] == {"matchLabels": {"k8s-app": "kube-dns"}}
        assert {p["protocol"] for p in dns["ports"]} == {"UDP", "TCP"}
    # The built-in namespace: only the stack's own pods, never other tenants'.
    assert policies[("default", "gpustack-default-deny")]["spec"]["podSelector"] == {
        "matchLabels": {"app.kubernetes.io/managed-by": "gpustack"}
    }
    # Clients reach vLLM's port from anywhere (no from: every source).
    assert policies[("serve", "llm-clients")]["spec"]["ingress"] == [{"ports": [{"protocol": "TCP", "port": 8000}]}]
    # vLLM reads the spec's MinIO: only its pods, only its API port; and MinIO admits exactly its readers.
    [to_store] = policies[("serve", "llm-s3")]["spec"]["egress"]
    assert to_store["to"][0]["podSelector"]["matchLabels"]["app.kubernetes.io/instance"] == "store"
    assert to_store["ports"] == [{"protocol": "TCP", "port": 9000}]
    readers = policies[("models", "store-clients")]["spec"]["ingress"][0]["from"]
    assert sorted(r["podSelector"]["matchLabels"]["app.kubernetes.io/instance"] for r in readers) == ["llm", "model-loader"]
    # An S3 endpoint outside the stack: its port, any destination.
    assert policies[("serve", "ext-s3")]["spec"]["egress"] == [{"ports": [{"protocol": "TCP", "port": 443}]}]
    # The loader: Hugging Face over HTTPS and the store.
    loader = policies[("models", "model-loader-egress")]["spec"]["egress"]
    assert {"ports": [{"protocol": "TCP", "port": 443}]} in loader and len(loader) == 2
    assert "manifests/network-policies.yaml" in files and "NetworkPolicies" in files["README.md"]
    # Two servers: a drain takes one at a time.
    budget = objects(rendered, "PodDisruptionBudget")[("serve", "llm")]["spec"]
    assert budget["maxUnavailable"] == 1 and budget["selector"]["matchLabels"]["app.kubernetes.io/instance"] == "llm"
    assert ("serve", "ext") not in objects(rendered, "PodDisruptionBudget")


def test_vllm_clients_narrowed_to_cidrs(render_spec):
    rendered, _ = render_spec(workloads=[{"type": "vllm", "name": "llm", "model": EXTERNAL}],
                              security={"vllmIngressFrom": ["10.20.0.0/16"]})
    [rule] = objects(rendered, "NetworkPolicy")[("default", "llm-clients")]["spec"]["ingress"]
    assert rule["from"] == [{"ipBlock": {"cidr": "10.20.0.0/16"}}]


def test_network_policies_opt_out_and_none_without_workloads(render_spec):
    rendered, files = render_spec(workloads=[MINIO], security={"networkPolicies": False})
    assert not objects(rendered, "NetworkPolicy") and "manifests/network-policies.yaml" not in files
    rendered, _ = render_spec()
    assert not objects(rendered, "NetworkPolicy")


def test_workload_namespaces_get_the_level_their_pods_meet(render_spec):
    rendered, _ = render_spec(workloads=[
        {"type": "smokeTest", "namespace": "smoke"}, MINIO,
        {"type": "vllm", "name": "llm", "namespace": "serve", "model": EXTERNAL},
    ])
    namespaces = {name: obj["metadata"].get("labels") for (_, name), obj in objects(rendered, "Namespace").items()}
    warn = {pod_security.WARN: "restricted", pod_security.AUDIT: "restricted"}
    # nvidia-smi and MinIO run unprivileged; vLLM's image runs as root.
    assert namespaces["smoke"] == {pod_security.ENFORCE: "restricted", **warn}
    assert namespaces["models"] == {pod_security.ENFORCE: "restricted", **warn}
    assert namespaces["serve"] == {pod_security.ENFORCE: "baseline", **warn}
    # The charts' namespaces hold GPU node agents and node-exporter: privileged.
    for namespace in rendered.namespaces:
        assert namespace["metadata"]["labels"] == {pod_security.ENFORCE: "privileged"}
    assert "monitoring" in {namespace["metadata"]["name"] for namespace in rendered.namespaces}


def test_pod_security_labels_opt_out(render_spec):
    rendered, _ = render_spec(workloads=[{"type": "smokeTest", "namespace": "smoke"}],
                              security={"podSecurityLabels": False})
    [smoke] = [obj for (_, name), obj in objects(rendered, "Namespace").items() if name == "smoke"]
    assert "labels" not in smoke["metadata"]


def test_restricted_controls():
    pod = {"securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
           "containers": [{"securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}}],
           "volumes": [{"name": "v", "emptyDir": {}}]}
    assert pod_security.meets_restricted(pod)
    assert not pod_security.meets_restricted({**pod, "volumes": [{"name": "h", "hostPath": {"path": "/"}}]})
    assert not pod_security.meets_restricted({**pod, "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}}})
    added = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"], "add": ["SYS_ADMIN"]}}
    assert not pod_security.meets_restricted({**pod, "containers": [{"securityContext": added}]})
