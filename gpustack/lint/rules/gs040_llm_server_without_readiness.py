"""GS040: an LLM inference server without a readiness or startup probe.

A pod without either is Ready as soon as its containers start, so its Service sends requests
to a server that is still loading gigabytes of weights (vLLM, SGLang and TGI listen only once
the model is loaded; NIM and llama.cpp answer 503 until then): requests fail or hang, and a
rolling update retires ready pods for unready ones. Servers are recognised by image and
command (``facts/llmservers``); pods built from app-template values carry the probes the
chart renders (``valuepods``: enabled ones, and common 2.x's defaults). The fix adds an HTTP
readinessProbe on the server's health path, only where the port it listens on is plain: the
container declares it as a containerPort.

Evidence before severity: a warning where a Service of the set selects the pod. Where none does
(the Service may live outside the files linted, or there is none), or where the Service that
does is a GKE NEG backend (``cloud.google.com/neg``: GKE's pod readiness gate then holds the pod
un-Ready until the load balancer's health check passes), info that says so. Pods built from
chart values keep the warning: the chart renders their Service.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from gpustack.lint.context import LintContext
from gpustack.lint.facts.llmservers import listening_port, server_of
from gpustack.lint.facts.podspec import subject
from gpustack.lint.model import Container, Hit, PodSpec, SetValue, Severity
from gpustack.lint.registry import Rule

# Workloads whose pods take traffic through Services; a Job's or a bare Pod's rarely do.
SERVING_KINDS = frozenset({"Deployment", "StatefulSet", "ReplicaSet", "DaemonSet", "LeaderWorkerSet"})
GATING_PROBES = ("readinessProbe", "startupProbe")


def _declared_port(container: Container, port: int | None) -> int | str | None:
    """How the container's ``ports`` name ``port`` (its name, else the number); None when absent."""
    ports = container.data.get("ports")
    for item in ports if isinstance(ports, list) and port is not None else ():
        if isinstance(item, Mapping) and item.get("containerPort") == port:
            name = item.get("name")
            return name if isinstance(name, str) and name else port
    return None


def _leader_set_worker(pod: PodSpec) -> bool:
    """A LeaderWorkerSet's workers next to a leader template: Services send traffic to the leader."""
    return (
        pod.resource.kind == "LeaderWorkerSet"
        and "workerTemplate" in pod.path
        and isinstance(pod.resource.get(("spec", "leaderWorkerTemplate", "leaderTemplate")), Mapping)
    )


ServiceSelector = tuple[str | None, tuple[tuple[str, str], ...], bool]  # namespace, selector, a NEG backend
NEG_ANNOTATION = "cloud.google.com/neg"


def serving_services(ctx: LintContext) -> tuple[ServiceSelector, ...]:
    """The set's Services with a selector."""
    found = []
    for service in ctx.of_kind("Service"):
        selector = service.get(("spec", "selector"))
        if not isinstance(selector, Mapping) or not selector:
            continue
        annotations = service.get(("metadata", "annotations"))
        neg = isinstance(annotations, Mapping) and NEG_ANNOTATION in annotations
        found.append((service.ref.namespace, tuple(sorted((str(k), str(v)) for k, v in selector.items())), neg))
    return tuple(found)


def _by_label(services: tuple[ServiceSelector, ...]) -> dict[tuple[str, str], list[ServiceSelector]]:
    """The Services by the first label of their selector: a pod can only match those whose first
    label it carries (a set holds thousands of Services)."""
    index: dict[tuple[str, str], list[ServiceSelector]] = {}
    for service in services:
        index.setdefault(service[1][0], []).append(service)
    return index


def _traffic(pod: PodSpec, ctx: LintContext) -> tuple[Severity | None, str]:
    """The severity and what the message says of the pod's Service (the module docstring)."""
    if pod.resource.origin is not None:
        return None, "its Service sends requests before the server can answer"
    labels = (pod.template_metadata or {}).get("labels")
    labels = {str(key): str(value) for key, value in labels.items()} if isinstance(labels, Mapping) else {}
    namespace = pod.resource.ref.namespace
    index = ctx.memo(("GS040", "services by label"), lambda: _by_label(serving_services(ctx)))
    behind_neg = False
    for item in labels.items():
        for theirs, selector, neg in index.get(item, ()):
            if (theirs is None or namespace is None or theirs == namespace) and all(
                labels.get(key) == value for key, value in selector
            ):
                if not neg:
                    return None, "its Service sends requests before the server can answer"
                behind_neg = True
    if behind_neg:
        return Severity.INFO, ("a rolling update retires ready pods for it while it loads (its Service is a GKE NEG "
                               "backend, whose readiness gate waits for the load balancer's health check)")
    return Severity.INFO, ("a rolling update retires ready pods for it while it loads (no Service of the set selects "
                           "it; one that does sends requests before the server can answer)")


def check(pod: PodSpec, ctx: LintContext) -> Iterator[Hit]:
    if _leader_set_worker(pod):
        return
    for container in pod.containers(include_init=False):
        if any(isinstance(container.data.get(probe), Mapping) for probe in GATING_PROBES):
            continue
        server = server_of(container)
        if server is None:
            continue
        port = listening_port(server, container)
        built = pod.resource.origin is not None  # from chart values: probes are set the chart's way
        declared = None if built else _declared_port(container, port)
        probe = {"httpGet": {"path": server.health, "port": declared}}
        if built:
            fix = (
                f"Enable a readiness probe in the container's values: `probes.readiness: {{enabled: true, custom: true, "
                f"spec: {{httpGet: {{path: {server.health}, port: {port or '<port>'}}}}}}}`."
            )
        else:
            fix = f"Add `readinessProbe: {{httpGet: {{path: {server.health}, port: {port or '<port>'}}}}}` to the container."
        severity, traffic = _traffic(pod, ctx)
        yield Hit(
            pod.resource,
            container.path,
            f"{subject(pod, container)} runs {server.name} without a readiness or startup probe: the pod is Ready "
            f"as soon as its container starts, so {traffic} (it loads the model first)",
            severity=severity,
            fix=fix,
            edits=(SetValue((*container.path, "readinessProbe"), probe),) if declared is not None else (),
        )


# It reads the set's Services: run over the whole set, not file by file. A set fact would differ
# from an empty set's in most sets and have every file's fact-reading rules run a second time.
RULE = Rule("GS040", "pod", check, SERVING_KINDS, reads_set=True)
