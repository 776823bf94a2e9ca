"""Pod Security admission: the level a namespace of the set enforces, and what in a pod spec the
baseline level forbids.

A Namespace labelled ``pod-security.kubernetes.io/enforce: baseline`` (or ``restricted``, which
holds baseline's rules and more) makes the API server refuse every pod there that breaks one of
baseline's controls (https://kubernetes.io/docs/concepts/security/pod-security-standards/#baseline):
host namespaces, privileged containers, capabilities beyond the default set, hostPath volumes,
host ports, an unconfined seccomp profile. A workload's controller keeps trying and no pod ever
runs. GPU node agents need several of those (the device plugin mounts the kubelet's
device-plugins folder, DCGM Exporter the pod-resources socket and ``SYS_ADMIN``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from gpustack.lint.model import Path, PodSpec, get_value

if TYPE_CHECKING:
    from gpustack.lint.context import LintContext

ENFORCE = "pod-security.kubernetes.io/enforce"
BASELINE_LEVELS = frozenset({"baseline", "restricted"})
# The capabilities baseline allows a container to add.
BASELINE_CAPABILITIES = frozenset({
    "AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD", "NET_BIND_SERVICE", "SETFCAP",
    "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT",
})
Levels = tuple[tuple[str, str, str, int], ...]  # (namespace, level, file, line) per labelled Namespace


def enforced_levels(ctx: LintContext) -> Levels:
    """The Namespaces of the set that enforce baseline or restricted: name, level, and where."""
    found = []
    for namespace in ctx.of_kind("Namespace"):
        level = get_value(namespace.data, "metadata", "labels", ENFORCE)
        name = namespace.ref.name
        if isinstance(level, str) and level in BASELINE_LEVELS and name:
            line, _ = namespace.locate(("metadata", "labels", ENFORCE))
            found.append((name, level, namespace.file, line))
    return tuple(found)


def baseline_violation(pod: PodSpec) -> tuple[Path, str] | None:
    """The first control of the baseline level the pod spec breaks: where, and what."""
    return next(_violations(pod), None)


def _violations(pod: PodSpec) -> Iterator[tuple[Path, str]]:
    for key in ("hostNetwork", "hostPID", "hostIPC"):
        if pod.spec.get(key) is True:
            yield (*pod.path, key), f"uses the host's namespace ({key})"
    volumes = pod.spec.get("volumes")
    for index, volume in enumerate(volumes if isinstance(volumes, list) else ()):
        if isinstance(volume, Mapping) and isinstance(volume.get("hostPath"), Mapping):
            yield (*pod.path, "volumes", index, "hostPath"), f"mounts the host path {volume['hostPath'].get('path')}"
    if get_value(pod.spec, "securityContext", "seccompProfile", "type") == "Unconfined":
        yield (*pod.path, "securityContext", "seccompProfile", "type"), "runs with seccomp Unconfined"
    for container in pod.containers():
        context = container.data.get("securityContext")
        context = context if isinstance(context, Mapping) else {}
        if context.get("privileged") is True:
            yield (*container.path, "securityContext", "privileged"), f"runs container {container.name} privileged"
        added = _added(context)
        if added:
            yield (*container.path, "securityContext", "capabilities", "add"), (
                f"adds the capabilit{'y' if len(added) == 1 else 'ies'} {', '.join(added)} to container {container.name}"
            )
        ports = container.data.get("ports")
        for index, port in enumerate(ports if isinstance(ports, list) else ()):
            if isinstance(port, Mapping) and port.get("hostPort") not in (None, 0):
                yield (*container.path, "ports", index, "hostPort"), f"binds host port {port['hostPort']}"


def _added(context: Mapping[str, Any]) -> list[str]:
    added = get_value(context, "capabilities", "add")
    return [str(name) for name in added if str(name).upper().removeprefix("CAP_") not in BASELINE_CAPABILITIES] \
        if isinstance(added, list) else []
