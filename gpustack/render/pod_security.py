"""Pod Security admission labels of the namespaces the stack creates.

https://kubernetes.io/docs/concepts/security/pod-security-admission/ and the levels' controls:
https://kubernetes.io/docs/concepts/security/pod-security-standards/

- The charts' namespaces are ``privileged`` where they hold a GPU node agent that Pod Security
  "baseline" refuses (host paths, host network or PID, privileged containers): the device plugin,
  GPU feature discovery and the GPU Operator's operands, dcgm-exporter (privileged for DCGM's
  profiling), HAMi's device plugin, NFD's worker (host paths), and kube-prometheus-stack's
  node-exporter (host network, PID and root filesystem), which monitoring.py moves next to the
  DCGM exporter so that the monitoring namespace (Prometheus, Alertmanager, Grafana) is
  ``baseline`` (a release's ``pod_security``). A cluster whose default level is stricter would
  otherwise refuse them, so these labels stay whatever ``security.podSecurityLabels`` says.
- The workloads' namespaces get the strictest level every pod of theirs meets (``level``):
  ``restricted`` or ``baseline`` (gpustack's workloads never need host access or privilege; a
  namespace meant for users' pods, such as one of DRA claim templates, is ``baseline``), and
  ``warn``/``audit`` at ``restricted`` so that a pod that falls short of it is reported.
  ``security.podSecurityLabels: false`` leaves them unlabelled.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

ENFORCE, WARN, AUDIT = (f"pod-security.kubernetes.io/{mode}" for mode in ("enforce", "warn", "audit"))
PRIVILEGED, BASELINE, RESTRICTED = "privileged", "baseline", "restricted"
# Volume types "restricted" allows.
RESTRICTED_VOLUMES = frozenset(
    {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret"}
)
SECCOMP_ALLOWED = frozenset({"RuntimeDefault", "Localhost"})


def privileged_labels() -> dict[str, str]:
    return {ENFORCE: PRIVILEGED}


def namespace_labels(level_needed: str) -> dict[str, str]:
    """A chart namespace's labels: ``privileged`` alone, or a stricter level enforced with warn and
    audit at ``restricted``."""
    if level_needed == PRIVILEGED:
        return privileged_labels()
    return {ENFORCE: level_needed, WARN: RESTRICTED, AUDIT: RESTRICTED}


def least_strict(levels: Iterable[str]) -> str:
    """The level that admits every one of ``levels``' pods."""
    order = (PRIVILEGED, BASELINE, RESTRICTED)
    return min(levels, key=order.index)


def workload_labels(objects: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Labels of a namespace holding ``objects``: enforce the level they meet, warn and audit restricted."""
    return {ENFORCE: level(objects), WARN: RESTRICTED, AUDIT: RESTRICTED}


# Objects that users' own pods come to a namespace for: its level must admit ordinary pods.
FOR_USERS_PODS = frozenset({"ResourceClaimTemplate"})


def level(objects: Iterable[Mapping[str, Any]]) -> str:
    """``restricted`` where the stack's own pods are the namespace's tenants and all meet it;
    ``baseline`` where one does not, or where users' pods come (a namespace of DRA claim
    templates, or one with no pod of the stack's), which commonly run as root."""
    objects = list(objects)
    pods = [pod for obj in objects if (pod := pod_spec(obj)) is not None]
    for_users = not pods or any(obj.get("kind") in FOR_USERS_PODS for obj in objects)
    return RESTRICTED if not for_users and all(meets_restricted(pod) for pod in pods) else BASELINE


def pod_spec(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The pod spec of a Pod, or of the template of a workload controller (Job, Deployment, …)."""
    if obj.get("kind") == "Pod":
        return obj.get("spec", {})
    template = obj.get("spec", {}).get("template", {})
    if obj.get("kind") == "CronJob":
        template = obj.get("spec", {}).get("jobTemplate", {}).get("spec", {}).get("template", {})
    return template.get("spec") if template else None


def meets_restricted(pod: Mapping[str, Any]) -> bool:
    """The "restricted" controls gpustack's pods can miss (it never renders host access or
    privilege, which "baseline" already refuses)."""
    pod_context = pod.get("securityContext", {})
    containers = [*pod.get("initContainers", []), *pod.get("containers", [])]
    if any(not set(volume) - {"name"} <= RESTRICTED_VOLUMES for volume in pod.get("volumes", [])):
        return False
    for container in containers:
        context = container.get("securityContext", {})
        merged = {**pod_context, **context}
        if not merged.get("runAsNonRoot") or merged.get("runAsUser") == 0:
            return False
        if merged.get("seccompProfile", {}).get("type") not in SECCOMP_ALLOWED:
            return False
        if context.get("allowPrivilegeEscalation") is not False:
            return False
        capabilities = context.get("capabilities", {})
        if "ALL" not in capabilities.get("drop", []) or set(capabilities.get("add", [])) - {"NET_BIND_SERVICE"}:
            return False
    return True
