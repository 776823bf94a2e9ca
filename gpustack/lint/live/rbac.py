"""``gpustack lint --print-rbac``: the ClusterRole (and its binding) that grants exactly the
reads of ``reads.READS``: list on each resource, get on ``/version``."""

from __future__ import annotations

from typing import Any

from gpustack.lint.live.reads import READS, VERSION_PATH

ROLE = "gpustack-lint"


def role_rules() -> list[dict[str, Any]]:
    """The ClusterRole's rules: one per API group, its resources sorted, verbs list only."""
    groups: dict[str, set[str]] = {}
    for read in READS:
        groups.setdefault(read.group, set()).add(read.resource)
    rules: list[dict[str, Any]] = [
        {"apiGroups": [group], "resources": sorted(resources), "verbs": ["list"]}
        for group, resources in sorted(groups.items())
    ]
    rules.append({"nonResourceURLs": [VERSION_PATH], "verbs": ["get"]})
    return rules


def manifests(subject: str = "gpustack-lint", namespace: str = "default") -> str:
    """The ClusterRole and a ClusterRoleBinding to the ServiceAccount ``namespace/subject``,
    as a YAML stream for ``kubectl apply -f -``."""
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": ROLE},
        "rules": role_rules(),
    }
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": ROLE},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": ROLE},
        "subjects": [{"kind": "ServiceAccount", "name": subject, "namespace": namespace}],
    }
    from gpustack.yamlio import dump_all

    return dump_all([role, binding])
