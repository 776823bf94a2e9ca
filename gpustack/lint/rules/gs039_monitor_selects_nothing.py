"""GS039: a ServiceMonitor or PodMonitor whose selector matches nothing the set deploys.

A ServiceMonitor scrapes the endpoints of the Services that ``spec.selector`` matches in the
namespaces of ``spec.namespaceSelector`` (its own namespace when unset); a PodMonitor the pods.
A selector that matches nothing scrapes nothing, silently: the classic case is a hand-written
ServiceMonitor for DCGM metrics with the labels of another exporter's Service, and the GPU
dashboards stay empty. Targets come from the set's Services and workload pod templates, from
chart releases whose objects ``data/monitor-targets.yaml`` describes, and from the GPU
Operator's ClusterPolicy; a release of any other chart, or a namespaced custom resource (an
operator's), in a namespace the monitor selects may create the target, and so does the cluster
itself in kube-system: such monitors are not judged.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from gpustack.lint.context import LintContext
from gpustack.lint.facts import labelselectors
from gpustack.lint.model import Hit, Resource, get_value
from gpustack.lint.registry import Rule
from gpustack.lint.releases import dispatch, kustomize
from gpustack.lint.releases.release import HelmChartRelease
from gpustack.shipped import lint_data

MONITORS = {"ServiceMonitor": "Service", "PodMonitor": "Pod"}
# API groups whose objects create no Services or pods of their own accord (built-ins, GitOps
# delivery, the monitoring CRDs but for the servers the Prometheus Operator runs): anything
# else namespaced may be an operator's input.
_QUIET_GROUPS = frozenset(
    {
        "", "apps", "batch", "rbac.authorization.k8s.io", "networking.k8s.io", "policy", "autoscaling",
        "storage.k8s.io", "scheduling.k8s.io", "coordination.k8s.io", "discovery.k8s.io", "node.k8s.io",
        "admissionregistration.k8s.io", "apiextensions.k8s.io", "certificates.k8s.io", "resource.k8s.io",
        "monitoring.coreos.com", "kustomize.config.k8s.io", "source.toolkit.fluxcd.io",
        "kustomize.toolkit.fluxcd.io", "helm.toolkit.fluxcd.io", "helm.cattle.io", "argoproj.io",
    }
)

_SERVED_KINDS = frozenset({"Prometheus", "Alertmanager", "ThanosRuler"})

Namespaces = frozenset[str] | None  # None: any namespace


@dataclass(frozen=True)
class Targets:
    charts: Mapping[str, Mapping[str, list[Mapping[str, str]]]]
    kinds: Mapping[str, Mapping[str, list[Mapping[str, str]]]]
    namespaces: frozenset[str]
    cluster: Mapping[str, Mapping[str, list[Mapping[str, str]]]]


@cache
def known_targets() -> Targets:
    data = lint_data("monitor-targets.yaml")
    return Targets(data["charts"], data["kinds"], frozenset(data["namespaces"]), data["cluster"])


class _Placement:
    """The namespace each object lands in: its own, else the one a kustomization sets for its
    folder (``namespace:``) or a Flux Kustomization for its ``spec.path`` (``targetNamespace``);
    None when nothing in the set says."""

    def __init__(self, resources: tuple[Resource, ...]) -> None:
        self.folders: list[tuple[str, str]] = []  # (folder suffix, namespace), longest first
        for resource in resources:
            folder, namespace = self._sets(resource)
            if folder is not None and namespace:
                self.folders.append((folder, namespace))
        self.folders.sort(key=lambda item: -len(item[0]))

    @staticmethod
    def _sets(resource: Resource) -> tuple[str | None, str | None]:
        if resource.kind == "Kustomization" and _group(resource) == "kustomize.toolkit.fluxcd.io":
            path, namespace = resource.get(("spec", "path")), resource.get(("spec", "targetNamespace"))
            return (_folder(path) if isinstance(path, str) else None), namespace if isinstance(namespace, str) else None
        if kustomize.is_kustomization(resource):
            namespace = resource.get(("namespace",))
            return posixpath.dirname(kustomize.posix_path(resource.file)), namespace if isinstance(namespace, str) else None
        return None, None

    def of(self, resource: Resource) -> str | None:
        if resource.ref.namespace:
            return resource.ref.namespace
        folder = posixpath.dirname(kustomize.posix_path(resource.file))
        for suffix, namespace in self.folders:
            # a kustomization's folder and below; a Flux path anywhere in the checkout
            if suffix and (f"{folder}/".startswith(f"{suffix}/") or f"/{suffix}/" in f"{folder}/"):
                return namespace
        return None


def _folder(path: str) -> str:
    return posixpath.normpath(kustomize.posix_path(path)).strip("/")


def _namespaces(monitor: Resource, placement: _Placement) -> Namespaces:
    selector = monitor.get(("spec", "namespaceSelector"))
    if isinstance(selector, Mapping) and selector.get("any") is True:
        return None
    names = selector.get("matchNames") if isinstance(selector, Mapping) else None
    if isinstance(names, list) and names:
        return frozenset(str(name) for name in names)
    own = placement.of(monitor)
    return frozenset({own}) if own else None  # nothing says: the apply sets it


def _in(namespace: str | None, selected: Namespaces) -> bool:
    return selected is None or namespace is None or namespace in selected


def _group(resource: Resource) -> str:
    api_version = resource.api_version or ""
    return api_version.split("/")[0] if "/" in api_version else ""


def _release_namespace(release: HelmChartRelease, placement: _Placement) -> str | None:
    resource = release.resource
    if resource.kind == "Application":
        destination = resource.get(("spec", "destination", "namespace"))
        return destination if isinstance(destination, str) and destination else None
    target = resource.get(("spec", "targetNamespace"))
    if isinstance(target, str) and target:
        return target
    return placement.of(resource) if resource.kind else None


def _described(labels: Mapping[str, str], release: str | None, name: str) -> dict[str, str]:
    """Labels of data/monitor-targets.yaml with ``{release}`` and ``{name}`` filled in (a
    label naming an unknown release matches any value: it is left out)."""
    filled: dict[str, str] = {}
    for key, value in labels.items():
        if "{release}" in str(value) and release is None:
            continue
        filled[key] = str(value).replace("{release}", release or "").replace("{name}", name)
    return filled


@dataclass(frozen=True)
class _Monitor:
    resource: Resource
    target_kind: str  # "Service" | "Pod"
    selector: Mapping[str, Any]
    namespaces: Namespaces
    placement: _Placement

    def matches(self, labels: Mapping[str, Any], namespace: str | None) -> bool:
        return _in(namespace, self.namespaces) and labelselectors.selector_matches(self.selector, labels)


def _in_set(monitor: _Monitor, ctx: LintContext) -> bool:
    if monitor.target_kind == "Service":
        return any(
            monitor.matches(labelselectors.labels_of(r), monitor.placement.of(r)) for r in ctx.resources if r.kind == "Service"
        )
    return any(
        monitor.matches(_mapping(pod.template_metadata.get("labels")), monitor.placement.of(pod.resource))
        for pod in ctx.pod_specs
    )


def _created_elsewhere(monitor: _Monitor, namespaces: frozenset[str], ctx: LintContext) -> bool:
    """Whether a chart release, an operator or the cluster may create a target the set does not
    hold in ``namespaces`` (those the monitor selects)."""
    known = known_targets()
    if namespaces & known.namespaces:
        return True
    for namespace, described in known.cluster.items():
        if any(monitor.matches(labels, namespace) for labels in described.get(monitor.target_kind, ())):
            return True
    for release in dispatch.releases(ctx):
        namespace = _release_namespace(release, monitor.placement)
        if not _in(namespace, monitor.namespaces):
            continue
        described = known.charts.get(release.chart)
        if described is None:
            return True  # any other chart may create anything in its namespace
        name = get_value(release.values, "nameOverride") or release.chart
        if any(monitor.matches(_described(labels, release.release, str(name)), None)
               for labels in described.get(monitor.target_kind, ())):
            return True
    for resource in ctx.resources:
        described = known.kinds.get(resource.kind or "")
        if described is not None:
            if any(monitor.matches(_described(labels, None, ""), None) for labels in described.get(monitor.target_kind, ())):
                return True
        elif _operator_input(resource) and (namespace := monitor.placement.of(resource)):
            if _in(namespace, monitor.namespaces):
                return True  # an operator's input in a selected namespace
    return False


def _operator_input(resource: Resource) -> bool:
    return _group(resource) not in _QUIET_GROUPS or resource.kind in _SERVED_KINDS


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _templated(selector: Mapping[str, Any]) -> bool:
    return "{{" in repr(selector)


def _where(namespaces: frozenset[str]) -> str:
    return f"in namespace{'s' if len(namespaces) > 1 else ''} {', '.join(sorted(namespaces))}"


def check(ctx: LintContext) -> Iterator[Hit]:
    placement: _Placement | None = None
    for resource in ctx.of_kind(*MONITORS):
        target_kind = MONITORS.get(resource.kind or "")
        if target_kind is None or _group(resource) != "monitoring.coreos.com":
            continue
        selector = resource.get(("spec", "selector"))
        if not isinstance(selector, Mapping) or _templated(selector):
            continue
        placement = placement or _Placement(ctx.resources)
        monitor = _Monitor(resource, target_kind, selector, _namespaces(resource, placement), placement)
        if monitor.namespaces is None or _in_set(monitor, ctx) or _created_elsewhere(monitor, monitor.namespaces, ctx):
            continue
        what = "Service" if target_kind == "Service" else "pod"
        yield Hit(
            resource,
            ("spec", "selector"),
            f"{resource.ref} selects no {what} of the set {_where(monitor.namespaces)}: it scrapes nothing, "
            "and the metrics it is meant for never reach Prometheus",
            fix=f"Match the labels of the {what}s to scrape (`kubectl get {what.lower()}s -n <namespace> "
            "--show-labels`), or set `spec.namespaceSelector`; lint the set that deploys them with it, "
            "or pass `--partial`.",
        )


RULE = Rule("GS039", "set", check)
