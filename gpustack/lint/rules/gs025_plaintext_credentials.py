"""GS025: object-store and model-hub credentials written into a manifest.

A model server that streams from MinIO/S3 or pulls from Hugging Face needs keys;
as literal env values they land in Git, in ``kubectl get -o yaml`` and in every rendered Helm
release. Secrets keep them out. Values that reference
other variables (``$(VAR)``) hold no secret and are skipped; placeholders filled in before
``kubectl apply`` (``${HF_TOKEN}``) still put the secret into the pod spec. Messages never
repeat a value.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import cache

from gpustack.lint.context import LintContext
from gpustack.lint.facts import registered
from gpustack.lint.facts.consumers import env_vars
from gpustack.lint.facts.podspec import subject
from gpustack.lint.facts.quantities import is_template_placeholder
from gpustack.lint.model import Hit, Path, PodSpec, get_value
from gpustack.lint.registry import Rule
from gpustack.lint.releases import dispatch

CREDENTIAL_NAMES = frozenset(
    {
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "MINIO_ACCESS_KEY",
        "MINIO_SECRET_KEY",
        "MINIO_ROOT_USER",
        "MINIO_ROOT_PASSWORD",
        "S3_ACCESS_KEY",
        "S3_ACCESS_KEY_ID",
        "S3_SECRET_KEY",
        "S3_SECRET_ACCESS_KEY",
        "HF_TOKEN",
        "HUGGING_FACE_HUB_TOKEN",
        "HUGGINGFACE_HUB_TOKEN",
        "HUGGINGFACEHUB_API_TOKEN",
        "HUGGINGFACE_TOKEN",
        "NGC_API_KEY",
    }
)
_REFERENCE = re.compile(r"^\$\([A-Za-z_][A-Za-z0-9_]*\)$")
FIX = "Move the value into a Secret and use `valueFrom.secretKeyRef` (or `envFrom.secretRef`)."


def check(pod: PodSpec, ctx: LintContext) -> Iterator[Hit]:
    for container in pod.containers():
        for var in env_vars(container):
            value = (var.value or "").strip()
            if var.name.upper() not in CREDENTIAL_NAMES or not value or _REFERENCE.match(value):
                continue
            if is_template_placeholder(value):
                how = "from a placeholder filled in before apply (it lands in the pod spec in plain text)"
            else:
                how = "as a literal value"
            yield Hit(
                pod.resource,
                var.value_path,
                f"{subject(pod, container)} sets {var.name} {how} instead of from a Secret",
                fix=FIX,
            )


GRAFANA_INI = "grafana.ini"
ANONYMOUS = "auth.anonymous"


@cache
def grafana_ini() -> dict[str, Path]:
    """Chart → where its values hold Grafana's ini: the grafana chart's own, or the Grafana that
    the monitoring stack (kube-prometheus-stack) bundles."""
    stack = registered.chart_of_role("monitoring-stack")
    return {"grafana": (GRAFANA_INI,), stack: (*registered.bundle_values(stack, "grafana"), GRAFANA_INI)}


def check_values(ctx: LintContext) -> Iterator[Hit]:
    """Grafana anonymous access with the Admin role: anyone
    who reaches Grafana may read every datasource and change dashboards, users and alerting."""
    for release in dispatch.releases(ctx):
        prefix = grafana_ini().get(release.chart)
        anonymous = get_value(release.values, *prefix, ANONYMOUS) if prefix else None
        if not isinstance(anonymous, Mapping) or anonymous.get("enabled") is not True:
            continue
        if str(anonymous.get("org_role", "Viewer")).lower() != "admin":
            continue
        resource, path = release.where(*prefix, ANONYMOUS, "org_role")
        yield Hit(
            resource,
            path,
            f"{release} lets anonymous users into Grafana as Admin: no credential stands between "
            "anyone who reaches it and every datasource, dashboard and user",
            fix="Drop `auth.anonymous` or set its `org_role: Viewer`; sign in with the admin Secret "
            "(`grafana.admin.existingSecret`).",
        )


RULE = Rule("GS025", "pod", check, values=check_values)
