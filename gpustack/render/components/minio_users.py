"""Least-privileged MinIO users for the workloads (``security.minioWorkloadUsers``).

Per MinIO of the spec that workloads read or write, a ConfigMap of IAM policies and a Job that
logs in with MinIO's root user and creates one user per role from the Secrets named in
``secret_names`` (MinIO's access management:
https://min.io/docs/minio/linux/administration/identity-access-management/policy-based-access-control.html,
``mc admin policy create|attach`` and ``mc admin user add``):

- reader (vLLM): list and get on the buckets of the models it serves;
- writer (the model loader): also create those buckets and put objects in them; no delete.

The Job is idempotent (creating a policy or user again updates it), waits for MinIO to be ready,
and is re-run by deleting it. The root credentials stay with MinIO and this Job.
"""

from __future__ import annotations

import json
import shlex
from typing import Any

from gpustack.render import secret_names
from gpustack.render.component import Contribution, RenderContext, add_object
from gpustack.render.components import model_sources, pods
from gpustack.spec.models.workloads import MC_IMAGE, Minio

USERS_APP = "minio-users"
POLICIES_MOUNT = "/policies"
READ = ["s3:GetBucketLocation", "s3:ListBucket"], ["s3:GetObject"]
WRITE = (
    ["s3:CreateBucket", "s3:GetBucketLocation", "s3:ListBucket", "s3:ListBucketMultipartUploads"],
    ["s3:GetObject", "s3:PutObject", "s3:AbortMultipartUpload", "s3:ListMultipartUploadParts"],
)


def build(chart: Any, ctx: RenderContext) -> Contribution:
    notes = []
    for store in (w for w in ctx.stack.spec.workloads if isinstance(w, Minio)):
        needed = secret_names.minio_roles(ctx.stack, store)
        if not needed:
            continue
        add_object(chart, policies_config_map(store, needed))
        add_object(chart, users_job(store, needed))
        notes.append(_note(store, needed))
    return Contribution(notes=notes)


def policy(buckets: list[str], actions: tuple[list[str], list[str]]) -> dict[str, Any]:
    bucket_actions, object_actions = actions
    return {
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Action": bucket_actions, "Resource": [f"arn:aws:s3:::{b}" for b in buckets]},
            {"Effect": "Allow", "Action": object_actions, "Resource": [f"arn:aws:s3:::{b}/*" for b in buckets]},
        ],
    }


def policies_config_map(store: Minio, needed: dict[str, list[str]]) -> dict[str, Any]:
    data = {
        f"{role}.json": json.dumps(policy(buckets, WRITE if role == "writer" else READ), indent=2)
        for role, buckets in needed.items()
    }
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": f"{store.name}-policies", "namespace": store.namespace, "labels": _labels(store)},
        "data": data,
    }


def users_job(store: Minio, needed: dict[str, list[str]]) -> dict[str, Any]:
    alias = "store"
    lines = [
        f'mc alias set {alias} "$MINIO_URL" "$MINIO_ROOT_USER" "$MINIO_ROOT_PASSWORD" --api S3v4',
        f"until mc ready {alias}; do sleep 5; done",
    ]
    env = [
        {"name": "MINIO_URL", "value": store.endpoint()},
        {"name": "MC_CONFIG_DIR", "value": "/tmp/mc"},
        *model_sources.secret_env(store.credentialsSecret, model_sources.S3_KEYS, ("MINIO_ROOT_USER", "MINIO_ROOT_PASSWORD")),
    ]
    for role in needed:
        name = secret_names.minio_user(store.name, role)
        key, secret = f"{role.upper()}_KEY", f"{role.upper()}_SECRET"
        env += model_sources.secret_env(secret_names.minio_role_secret(store.name, role), model_sources.S3_KEYS, (key, secret))
        lines += [
            f"mc admin policy create {alias} {name} {shlex.quote(f'{POLICIES_MOUNT}/{role}.json')}",
            f'mc admin user add {alias} "${key}" "${secret}"',
            # attach refuses a policy the user already has: then it is there.
            f'mc admin policy attach {alias} {name} --user "${key}" || mc admin user info {alias} "${key}" | grep -qw {name}',
        ]
    container = pods.hardened_container("mc", MC_IMAGE, limits={})
    container["securityContext"]["readOnlyRootFilesystem"] = True
    container["command"] = ["sh", "-ec", "\n".join(lines)]
    container["env"] = env
    container["resources"] = {"requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {"memory": "256Mi"}}
    container["volumeMounts"] = [
        {"name": "policies", "mountPath": POLICIES_MOUNT, "readOnly": True},
        {"name": "tmp", "mountPath": "/tmp"},
    ]
    pod_spec = {
        "restartPolicy": "OnFailure",
        "securityContext": pods.unprivileged_pod(),
        "containers": [container],
        "volumes": [
            {"name": "policies", "configMap": {"name": f"{store.name}-policies"}},
            {"name": "tmp", "emptyDir": {}},
        ],
    }
    return pods.job(f"{store.name}-users", store.namespace, _labels(store), pod_spec, backoff_limit=10)


def job_selector(store: Minio) -> dict[str, str]:
    """The users Job's pods (the NetworkPolicies let them reach their MinIO)."""
    return pods.selector(USERS_APP, store.name)


def _labels(store: Minio) -> dict[str, str]:
    return {**job_selector(store), "app.kubernetes.io/component": "object-store-users", **pods.MANAGED_BY}


def _note(store: Minio, needed: dict[str, list[str]]) -> str:
    users = "; ".join(
        f"{role} `{secret_names.minio_role_secret(store.name, role)}` "
        f"({', '.join(buckets)}: {'read-write, no delete' if role == 'writer' else 'read-only'})"
        for role, buckets in needed.items()
    )
    return (
        f"MinIO `{store.namespace}/{store.name}`: the workloads log in as least-privileged users, not as root "
        f"(`security.minioWorkloadUsers`). Job `{store.name}-users` creates them with the root credentials of "
        f"`{store.credentialsSecret}` from the Secrets {users}, each with keys "
        f"{' and '.join(model_sources.S3_KEYS)}, and applies the policies of ConfigMap `{store.name}-policies`."
    )
