"""Credentials are generated in the cluster, never rendered: the Job per namespace, its RBAC,
the Secrets each example needs, and the Job's script against a stand-in API server."""

from __future__ import annotations

import io
import json
import urllib.error
from typing import Any

import pytest

from gpustack.render.components import secrets

VLLM = {"type": "vllm", "name": "llm", "namespace": "ai", "model": {"huggingFace": "Qwen/Qwen2.5-1.5B-Instruct"}}
MINIO = {"type": "minio", "namespace": "ai", "credentialsSecret": "store"}


def _objects(rendered, kind: str) -> list[dict[str, Any]]:
    return [obj for obj in rendered.manifests.get("secrets", []) if obj["kind"] == kind]


def _generated(rendered) -> dict[str, dict[str, Any]]:
    """namespace → the Secrets its Job creates."""
    result = {}
    for job in _objects(rendered, "Job"):
        env = job["spec"]["template"]["spec"]["containers"][0]["env"]
        result[job["metadata"]["namespace"]] = json.loads(next(e["value"] for e in env if e["name"] == "SECRETS"))
    return result


def test_minio_grafana_and_the_api_key_are_generated_with_no_value_rendered(render_spec):
    rendered, tree = render_spec(workloads=[MINIO, VLLM])
    generated = _generated(rendered)
    assert generated["ai"] == {
        "store": {"AWS_ACCESS_KEY_ID": "gpustack", "AWS_SECRET_ACCESS_KEY": None},
        "vllm-api-key": {"VLLM_API_KEY": None},
    }
    assert generated["monitoring"] == {"grafana-admin": {"admin-user": "admin", "admin-password": None}}
    assert not [obj for obj in rendered.objects() if obj[1]["kind"] == "Secret"]
    assert "create secret generic store" not in tree["README.md"]


def test_the_role_only_creates_secrets(render_spec):
    rendered, _ = render_spec(workloads=[MINIO])
    for role in _objects(rendered, "Role"):
        assert role["rules"] == [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["create"]}]


def test_grafana_reads_the_generated_secret(render_spec):
    rendered, _ = render_spec()
    values = next(r for r in rendered.releases if r.chart == "kube-prometheus-stack").values
    assert values["grafana"]["admin"] == {
        "existingSecret": "grafana-admin", "userKey": "admin-user", "passwordKey": "admin-password"
    }


def test_vllm_reads_its_api_key_from_the_secret(render_spec):
    rendered, _ = render_spec(workloads=[VLLM])
    deployment = next(o for o in rendered.manifests["workloads"] if o["kind"] == "Deployment")
    env = deployment["spec"]["template"]["spec"]["containers"][0]["env"]
    assert {"name": "VLLM_API_KEY", "valueFrom": {"secretKeyRef": {"name": "vllm-api-key", "key": "VLLM_API_KEY"}}} in env


def test_nothing_is_generated_when_nothing_needs_it(render_spec):
    rendered, _ = render_spec(monitoring={"enabled": False}, workloads=[{**VLLM, "apiKeySecret": None}])
    assert "secrets" not in rendered.manifests
    deployment = next(o for o in rendered.manifests["workloads"] if o["kind"] == "Deployment")
    assert "VLLM_API_KEY" not in json.dumps(deployment)


class _Api:
    """A stand-in for the API server: records the Secrets POSTed, 409 for those that exist."""

    def __init__(self, existing: set[str]) -> None:
        self.existing, self.created = existing, {}

    def urlopen(self, request, context=None):
        body = json.loads(request.data)
        name = body["metadata"]["name"]
        assert request.get_method() == "POST" and request.full_url.endswith("/api/v1/namespaces/ai/secrets")
        if name in self.existing:
            raise urllib.error.HTTPError(request.full_url, 409, "AlreadyExists", {}, io.BytesIO())
        self.created[name] = body["stringData"]


def test_the_script_creates_missing_secrets_and_keeps_existing_ones(monkeypatch, tmp_path):
    api = _Api(existing={"kept"})
    files = {"namespace": "ai", "token": "t", "ca.crt": ""}
    real_open = open
    monkeypatch.setattr("builtins.open", lambda path, *a, **k: io.StringIO(files[path.rsplit("/", 1)[-1]])
                        if str(path).startswith("/var/run/secrets/") else real_open(path, *a, **k))
    monkeypatch.setattr("urllib.request.urlopen", api.urlopen)
    monkeypatch.setattr("ssl.create_default_context", lambda **_: None)
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.43.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    monkeypatch.setenv("SECRETS", json.dumps({"new": {"user": "admin", "password": None}, "kept": {"k": None}}))
    exec(compile(secrets.SCRIPT, "script", "exec"), {})
    assert list(api.created) == ["new"]
    assert api.created["new"]["user"] == "admin"
    assert len(api.created["new"]["password"]) >= 24


@pytest.mark.parametrize("name", ["hami-vllm"])
def test_the_example_needs_no_secret_made_by_hand(examples, name):
    rendered, tree = examples[name]
    # MinIO's root user, its least-privileged users for the loader and vLLM, and the API key.
    assert set(_generated(rendered)["vllm"]) == {"minio-credentials", "minio-reader-s3", "minio-writer-s3", "vllm-api-key"}
    assert "create secret generic" not in tree["README.md"]


def test_argocd_recreates_the_job_when_its_list_changes(examples):
    rendered, _ = examples["kubeadm-mig-fleet"]
    [job] = [o for o in rendered.manifests["secrets"] if o["kind"] == "Job"]
    assert job["metadata"]["annotations"] == {"argocd.argoproj.io/sync-options": "Force=true,Replace=true"}


def test_the_job_runs_a_pinned_image(render_spec):
    [job] = [j for j in _objects(render_spec(workloads=[MINIO])[0], "Job") if j["metadata"]["namespace"] == "ai"]
    image = job["spec"]["template"]["spec"]["containers"][0]["image"]
    name, digest = image.split("@")
    assert name == "docker.io/library/python:3.13.13-slim-bookworm" and digest.startswith("sha256:") and len(digest) == 71


def test_an_admission_policy_limits_the_jobs_creates_to_the_stacks_secrets(render_spec):
    """RBAC cannot name what ``create`` may create: from 1.30 a ValidatingAdmissionPolicy does."""
    import cel

    rendered, _ = render_spec(workloads=[MINIO, VLLM])
    [policy] = _objects(rendered, "ValidatingAdmissionPolicy")
    [binding] = _objects(rendered, "ValidatingAdmissionPolicyBinding")
    assert binding["spec"] == {"policyName": policy["metadata"]["name"], "validationActions": ["Deny"]}
    [condition] = policy["spec"]["matchConditions"]
    [validation] = policy["spec"]["validations"]

    def admitted(user: str, namespace: str, name: str) -> bool:
        context = {"request": {"userInfo": {"username": user}, "namespace": namespace},
                   "object": {"metadata": {"name": name}}}
        if not cel.evaluate(condition["expression"], context):
            return True  # not one of the Jobs' accounts: the policy does not apply
        return bool(cel.evaluate(validation["expression"], context))

    job = "system:serviceaccount:ai:gpustack-secrets"
    assert admitted(job, "ai", "store") and admitted(job, "ai", "vllm-api-key")
    assert not admitted(job, "ai", "anything-else")
    assert not admitted("system:serviceaccount:monitoring:gpustack-secrets", "monitoring", "store")
    assert admitted("kubernetes-admin", "ai", "anything-else")
    old, tree = render_spec(cluster={"kubernetesVersion": "1.29"}, workloads=[MINIO])
    assert not _objects(old, "ValidatingAdmissionPolicy") and "no ValidatingAdmissionPolicy" in tree["README.md"]
