"""The security baseline: NetworkPolicies and Pod Security labels, on by default, each with its opt-out."""

from __future__ import annotations

import json

import pytest
from render_helpers import release

from gpustack.render import pod_security, secret_names

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
    assert sorted(r["podSelector"]["matchLabels"]["app.kubernetes.io/name"] for r in readers) == [
        "minio-users", "model-loader", "vllm"
    ]
    assert policies[("models", "store-users-egress")]["spec"]["egress"] == [to_store]
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


def test_network_policies_opt_out_and_no_workload_policy_without_workloads(render_spec):
    rendered, files = render_spec(workloads=[MINIO], security={"networkPolicies": False})
    assert not objects(rendered, "NetworkPolicy") and "manifests/network-policies.yaml" not in files
    rendered, _ = render_spec()
    # Only the charts' (tests/render/test_chart_policies.py).
    assert not [p for p in objects(rendered, "NetworkPolicy").values() if p["metadata"]["namespace"] == "default"]
    assert not [p for p in objects(rendered, "NetworkPolicy").values() if p["metadata"]["name"] == "gpustack-dns"]


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
    # The charts' namespaces hold GPU node agents and node-exporter: privileged; the monitoring
    # namespace, whose node-exporter runs beside the DCGM exporter, baseline.
    charts = {namespace["metadata"]["name"]: namespace["metadata"]["labels"] for namespace in rendered.namespaces}
    assert charts.pop("monitoring") == {pod_security.ENFORCE: "baseline", **warn}
    assert charts and all(labels == {pod_security.ENFORCE: "privileged"} for labels in charts.values())


@pytest.mark.parametrize(
    "monitoring", [{"dcgmExporter": {"enabled": False}}, {"agentsNamespace": "monitoring"}], ids=["no-exporter", "shared"]
)
def test_without_a_namespace_of_its_own_node_exporter_keeps_the_monitoring_namespace_privileged(render_spec, monitoring):
    rendered, tree = render_spec(monitoring=monitoring)
    charts = {namespace["metadata"]["name"]: namespace["metadata"]["labels"] for namespace in rendered.namespaces}
    assert charts["monitoring"] == {pod_security.ENFORCE: "privileged"}
    assert "**`monitoring` is `privileged` for Pod Security**" in tree["README.md"]
    assert "namespaceOverride" not in release(rendered, "kube-prometheus-stack")["prometheus-node-exporter"]


def test_namespaces_for_users_pods_admit_ordinary_pods():
    restricted = {"kind": "Pod", "spec": {
        "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [{"securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}}]}}
    assert pod_security.level([restricted]) == "restricted"
    # DRA claim templates are there for users' pods, which commonly run as root.
    assert pod_security.level([restricted, {"kind": "ResourceClaimTemplate", "spec": {}}]) == "baseline"
    assert pod_security.level([{"kind": "ResourceClaimTemplate", "spec": {}}]) == "baseline"


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


def secret_of(container, variable):
    return next(e["valueFrom"]["secretKeyRef"]["name"] for e in container["env"] if e["name"] == variable)


def test_workloads_use_least_privileged_minio_users(render_spec):
    rendered, files = render_spec(workloads=[
        MINIO, LOADER, {"type": "vllm", "name": "llm", "namespace": "serve", "model": INTERNAL},
        {"type": "vllm", "name": "ext", "namespace": "serve", "model": EXTERNAL},
    ])
    deployments, jobs = objects(rendered, "Deployment"), objects(rendered, "Job")
    vllm = deployments[("serve", "llm")]["spec"]["template"]["spec"]["containers"][0]
    assert secret_of(vllm, "AWS_ACCESS_KEY_ID") == secret_names.minio_reader("store") == "store-reader-s3"
    # A store outside the stack: the Secret the spec names.
    ext = deployments[("serve", "ext")]["spec"]["template"]["spec"]["containers"][0]
    assert secret_of(ext, "AWS_ACCESS_KEY_ID") == "s3"
    upload = jobs[("models", "model-loader")]["spec"]["template"]["spec"]["containers"][0]
    assert secret_of(upload, "AWS_ACCESS_KEY_ID") == secret_names.minio_writer("store")
    # The root user stays with MinIO and the Job that creates the users.
    users = jobs[("models", "store-users")]["spec"]["template"]["spec"]["containers"][0]
    assert secret_of(users, "MINIO_ROOT_USER") == "s3"
    assert {secret_of(users, "READER_KEY"), secret_of(users, "WRITER_KEY")} == {"store-reader-s3", "store-writer-s3"}
    script = users["command"][2]
    assert "mc admin policy attach store gpustack-store-reader --user \"$READER_KEY\"" in script
    policies = objects(rendered, "ConfigMap")[("models", "store-policies")]["data"]
    reader, writer = json.loads(policies["reader.json"]), json.loads(policies["writer.json"])
    assert reader["Statement"][1] == {"Effect": "Allow", "Action": ["s3:GetObject"], "Resource": ["arn:aws:s3:::models/*"]}
    assert "s3:PutObject" in writer["Statement"][1]["Action"]
    assert not any("Delete" in action for statement in writer["Statement"] for action in statement["Action"])
    assert "Secret `serve/store-reader-s3`" in files["README.md"]


def test_minio_users_opt_out_keeps_the_specs_secret(render_spec):
    rendered, _ = render_spec(workloads=[MINIO, LOADER], security={"minioWorkloadUsers": False})
    jobs = objects(rendered, "Job")
    assert ("models", "store-users") not in jobs and not objects(rendered, "ConfigMap")
    upload = jobs[("models", "model-loader")]["spec"]["template"]["spec"]["containers"][0]
    assert secret_of(upload, "AWS_ACCESS_KEY_ID") == "s3"
