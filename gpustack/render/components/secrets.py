"""Secrets the stack needs that no one should write into Git: generated in the cluster.

One mechanism for every credential the stack itself owns (MinIO's root user and its workload
users, Grafana's admin, each vLLM server's API key): a Job per namespace that creates each missing Secret with random
values and leaves an existing one alone (``POST``; ``409 AlreadyExists`` means kept), so that a
Secret the user made first wins and a re-sync never rotates a password. Its Role, in the namespaces
that get Secrets only, grants ``create`` on Secrets and nothing else: the Job reads nothing back.
RBAC cannot restrict ``create`` by name (resourceNames do not apply to it,
https://kubernetes.io/docs/reference/access-authn-authz/rbac/#referring-to-resources), so from
Kubernetes 1.30 a ValidatingAdmissionPolicy (admissionregistration.k8s.io/v1,
https://kubernetes.io/docs/reference/access-authn-authz/validating-admission-policy/) refuses any
Secret the Jobs' service accounts create but the ones they are meant to. Pods that read a
missing Secret wait (CreateContainerConfigError) and start once it exists. Credentials that come
from outside (a Hugging Face token, an external S3 store's keys) stay the user's to create: the
workloads' README notes say so.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from gpustack.render.component import Contribution, RenderContext, add_object
from gpustack.render import secret_names
from gpustack.render.components import model_sources
from gpustack.render.components.pods import MANAGED_BY
from gpustack.spec.models import GpuStack
from gpustack.spec.models.workloads import Minio, Vllm

NAME = "gpustack-secrets"
POD_LABELS = {"app.kubernetes.io/name": NAME}  # the NetworkPolicies let these pods reach the API server
API_SERVER_PORTS = (443, 6443)  # the kubernetes Service's port, and the API server's own (after the Service's DNAT)
# The Docker Official Image's exact patch release on Debian bookworm, by its OCI index digest (all
# platforms), as public Dockerfiles pin it (e.g. PostHog's,
# https://github.com/PostHog/posthog/blob/master/Dockerfile): the tag alone moves with each rebuild.
# The digest was not checked against Docker Hub from here (no registry client could reach it).
IMAGE = (
    "docker.io/library/python:3.13.13-slim-bookworm"
    "@sha256:355bfa66770995d7e9a0da4b3473b44d0cb451f6b56f5615ad9c39e3c4eca03f"
)
# ValidatingAdmissionPolicy is GA (admissionregistration.k8s.io/v1) from Kubernetes 1.30.
POLICY_SINCE_MINOR = 30
NOBODY = 65534
GRAFANA_USER_KEY, GRAFANA_PASSWORD_KEY = "admin-user", "admin-password"  # the grafana chart's admin.userKey/passwordKey
VLLM_API_KEY = "VLLM_API_KEY"
# Secret name → key → fixed value (a user name) or None (random).
Wanted = dict[str, dict[str, str | None]]

# Reads SECRETS (JSON) and creates each Secret through the API with the pod's service account.
SCRIPT = """\
import json, os, secrets, ssl, urllib.error, urllib.request
sa = '/var/run/secrets/kubernetes.io/serviceaccount/'
namespace = open(sa + 'namespace').read()
token = open(sa + 'token').read()
context = ssl.create_default_context(cafile=sa + 'ca.crt')
host = os.environ['KUBERNETES_SERVICE_HOST'] + ':' + os.environ['KUBERNETES_SERVICE_PORT']
url = 'https://' + host + '/api/v1/namespaces/' + namespace + '/secrets'
for name, keys in json.loads(os.environ['SECRETS']).items():
    data = {key: value or secrets.token_urlsafe(24) for key, value in keys.items()}
    body = {'apiVersion': 'v1', 'kind': 'Secret', 'metadata': {'name': name, 'labels': {'app.kubernetes.io/managed-by': 'gpustack'}}, 'stringData': data}
    request = urllib.request.Request(url, json.dumps(body).encode(), {'Authorization': 'Bearer ' + token, 'Content-Type': 'application/json'}, method='POST')
    try:
        urllib.request.urlopen(request, context=context)
        print('created', name)
    except urllib.error.HTTPError as error:
        if error.code != 409:
            raise
        print('kept', name)
"""


def wanted(stack: GpuStack) -> dict[str, Wanted]:
    """Namespace → the Secrets the stack generates there."""
    result: dict[str, Wanted] = {}
    for workload in stack.spec.workloads:
        if isinstance(workload, Minio):
            # MinIO's root user and password; with workload users (minio_users), each role's
            # user and password too, which the users Job creates in MinIO and the workloads read.
            users = result.setdefault(workload.namespace, {})
            users[workload.credentialsSecret] = {model_sources.S3_KEYS[0]: "gpustack", model_sources.S3_KEYS[1]: None}
            for role in secret_names.minio_roles(stack, workload):
                users[secret_names.minio_role_secret(workload.name, role)] = {
                    model_sources.S3_KEYS[0]: secret_names.minio_user(workload.name, role), model_sources.S3_KEYS[1]: None
                }
        elif isinstance(workload, Vllm) and workload.apiKeySecret:
            result.setdefault(workload.namespace, {})[workload.apiKeySecret] = {VLLM_API_KEY: None}
    monitoring = stack.spec.monitoring
    if monitoring.enabled:
        result.setdefault(monitoring.namespace, {})[monitoring.grafana.adminSecret] = {
            GRAFANA_USER_KEY: "admin", GRAFANA_PASSWORD_KEY: None
        }
    return result


def objects(namespace: str, secrets: Mapping[str, Mapping[str, str | None]], *, argocd: bool) -> list[dict[str, Any]]:
    """ServiceAccount, Role (create Secrets), RoleBinding and the Job of one namespace."""
    metadata: dict[str, Any] = {
        "name": NAME, "namespace": namespace, "labels": {**POD_LABELS, **MANAGED_BY}
    }
    job_metadata = dict(metadata)
    if argocd:
        # A Job's template is immutable: when the list of Secrets changes, Argo CD recreates it.
        job_metadata["annotations"] = {"argocd.argoproj.io/sync-options": "Force=true,Replace=true"}
    container = {
        "name": "create",
        "image": IMAGE,
        "command": ["python3", "-c", SCRIPT],
        "env": [{"name": "SECRETS", "value": json.dumps({name: dict(keys) for name, keys in sorted(secrets.items())})}],
        "resources": {"requests": {"cpu": "10m", "memory": "32Mi"}, "limits": {"memory": "64Mi"}},
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
            "readOnlyRootFilesystem": True,
        },
    }
    pod_spec = {
        "serviceAccountName": NAME,
        "restartPolicy": "OnFailure",
        "securityContext": {
            "runAsNonRoot": True,
            "runAsUser": NOBODY,
            "runAsGroup": NOBODY,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "containers": [container],
    }
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": metadata},
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": metadata,
            "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["create"]}],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": metadata,
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": NAME},
            "subjects": [{"kind": "ServiceAccount", "name": NAME, "namespace": namespace}],
        },
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": job_metadata,
            # Retries while the API server or the namespace is not there yet; then stays as the record.
            "spec": {"backoffLimit": 6, "template": {"metadata": {"labels": metadata["labels"]}, "spec": pod_spec}},
        },
    ]


def name_policy(by_namespace: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """A ValidatingAdmissionPolicy and its binding: a Secret that a Job's service account creates
    must be one of its namespace's (``request.userInfo.username`` is
    ``system:serviceaccount:<namespace>:<name>`` for a service account's token)."""
    accounts = [f"system:serviceaccount:{namespace}:{NAME}" for namespace in sorted(by_namespace)]
    names = {namespace: sorted(secrets) for namespace, secrets in sorted(by_namespace.items())}
    metadata = {"name": NAME, "labels": dict(MANAGED_BY)}
    return [
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicy",
            "metadata": metadata,
            "spec": {
                "failurePolicy": "Fail",
                "matchConstraints": {
                    "resourceRules": [
                        {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["secrets"]}
                    ]
                },
                "matchConditions": [
                    {"name": "gpustack-secrets-jobs", "expression": f"request.userInfo.username in {json.dumps(accounts)}"}
                ],
                "validations": [
                    {
                        "expression": f"object.metadata.name in {json.dumps(names)}[request.namespace]",
                        "message": "the gpustack-secrets Job creates only the Secrets the stack names",
                    }
                ],
            },
        },
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": metadata,
            "spec": {"policyName": NAME, "validationActions": ["Deny"]},
        },
    ]


def build(chart: Any, ctx: RenderContext) -> Contribution:
    by_namespace = wanted(ctx.stack)
    notes = []
    if by_namespace and ctx.stack.spec.cluster.minor >= POLICY_SINCE_MINOR:
        for obj in name_policy(by_namespace):
            add_object(chart, obj)
    elif by_namespace:
        notes.append(
            f"Kubernetes {ctx.stack.spec.cluster.kubernetesVersion} has no ValidatingAdmissionPolicy (GA in 1.30): "
            f"the `{NAME}` service accounts may create any Secret in their namespaces, since RBAC cannot restrict "
            "`create` by name."
        )
    for namespace, secrets in sorted(by_namespace.items()):
        for obj in objects(namespace, secrets, argocd=ctx.stack.spec.gitops.argocd.enabled):
            add_object(chart, obj)
        names = ", ".join(f"`{name}`" for name in sorted(secrets))
        notes.append(
            f"Credentials are never rendered: Secrets {names} in `{namespace}` are generated in the cluster by Job "
            f"`{namespace}/{NAME}`, which creates each one that is missing with random values and keeps one that exists "
            "(create yours first to choose the values). Read one with "
            f"`kubectl -n {namespace} get secret NAME -o jsonpath='{{.data.KEY}}' | base64 -d`."
        )
    return Contribution(notes=notes)
