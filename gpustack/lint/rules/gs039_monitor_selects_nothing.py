"""GS039: a ServiceMonitor or PodMonitor whose selector matches nothing the set deploys, or a
ServiceMonitor endpoint on a port name no Service it selects has.

A ServiceMonitor scrapes the endpoints of the Services that ``spec.selector`` matches in the
namespaces of ``spec.namespaceSelector`` (its own namespace when unset); a PodMonitor the pods.
A selector that matches nothing scrapes nothing, silently: the classic case is a hand-written
ServiceMonitor for DCGM metrics with the labels of another exporter's Service, and the GPU
dashboards stay empty. Targets come from the set's Services and workload pod templates, from
chart releases whose objects ``data/monitor-targets.yaml`` describes, and from the GPU
Operator's ClusterPolicy; a release of any other chart, or a namespaced custom resource (an
operator's), in a namespace the monitor selects may create the target, and so does the cluster
itself in kube-system: such monitors are not judged.

The GPU Operator creates its exporters' Services at run time, from its ClusterPolicy, not from
its chart's templates (NVIDIA/gpu-operator ``assets/state-dcgm-exporter/``): a set that shows
neither the operator's release nor a ClusterPolicy may still run it, installed where the linter
does not read (the helm CLI, OLM, Fleet's ``fleet.yaml``, Terraform). A monitor that selects
exactly what the operator creates counts as matching there, in any namespace.

Where every Service a ServiceMonitor selects is known, ports and all (the set's own, or those
the data describes), an endpoint whose ``port`` none of them names scrapes nothing either
(the Prometheus Operator keeps only endpoints of that Service port name): the GPU Operator's
DCGM exporter Service names its port ``gpu-metrics``, the dcgm-exporter chart's ``metrics``.

Only monitors of GPU metrics are judged: those whose name, namespace, selectors or endpoints
name a GPU exporter or a GPU server (DCGM, NVIDIA, HAMi, vLLM, Triton, Ollama, an LLM, ...). A
monitor for a cost exporter or an autoscaler is no GPU pitfall, whatever it selects.
"""

from __future__ import annotations

import json
import posixpath
import re
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
class _Described:
    """A Service or pod something creates without the set spelling it out."""

    labels: Mapping[str, str]
    name: str | None = None  # the Service's name, for messages
    ports: tuple[str, ...] | None = None  # the Service's port names, when known


Described = Mapping[str, list[_Described]]  # by target kind: Service, Pod


@dataclass(frozen=True)
class Targets:
    charts: Mapping[str, Described]
    kinds: Mapping[str, Described]
    kind_charts: Mapping[str, str]  # kind -> the chart that runs its operator
    namespaces: frozenset[str]
    cluster: Mapping[str, Described]


@cache
def known_targets() -> Targets:
    data = lint_data("monitor-targets.yaml")
    kinds = data["kinds"]
    return Targets(
        {chart: _entries(listed) for chart, listed in data["charts"].items()},
        {kind: _entries(listed) for kind, listed in kinds.items()},
        {kind: listed["chart"] for kind, listed in kinds.items() if "chart" in listed},
        frozenset(data["namespaces"]),
        {namespace: _entries(listed) for namespace, listed in data["cluster"].items()},
    )


def _entries(listed: Mapping[str, Any]) -> Described:
    described: dict[str, list[_Described]] = {}
    for target in MONITORS.values():
        for entry in listed.get(target) or ():
            if isinstance(entry.get("labels"), Mapping):
                ports = entry.get("ports")
                described.setdefault(target, []).append(
                    _Described(entry["labels"], entry.get("name"), tuple(ports) if isinstance(ports, list) else None))
            else:
                described.setdefault(target, []).append(_Described(entry))
    return described


@dataclass(frozen=True)
class _Target:
    """A target a monitor selects: what it is (for messages) and its port names, when known."""

    what: str
    ports: tuple[str, ...] | None


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

    def matched(self, described: Described, release: str | None, name: str, namespace: str | None, owner: str) -> list[_Target]:
        """The described targets the monitor selects, as targets of ``owner``."""
        found = []
        for entry in described.get(self.target_kind, ()):
            if self.matches(_described(entry.labels, release, name), namespace):
                service = f" {str(entry.name).replace('{name}', name)}" if entry.name else ""
                found.append(_Target(f"{self.target_kind}{service} that {owner} creates", entry.ports))
        return found


def _in_set(monitor: _Monitor, ctx: LintContext) -> list[_Target]:
    if monitor.target_kind == "Service":
        return [
            _Target(str(r.ref), _port_names(r))
            for r in ctx.resources
            if r.kind == "Service" and monitor.matches(labelselectors.labels_of(r), monitor.placement.of(r))
        ]
    return [
        _Target(str(pod.resource.ref), None)
        for pod in ctx.pod_specs
        if monitor.matches(_mapping(pod.template_metadata.get("labels")), monitor.placement.of(pod.resource))
    ]


def _port_names(service: Resource) -> tuple[str, ...] | None:
    """A Service's port names; None where one is not plain text."""
    ports = service.get(("spec", "ports"))
    names = [port.get("name") for port in ports if isinstance(port, Mapping)] if isinstance(ports, list) else []
    if not all(name is None or (isinstance(name, str) and "{{" not in name) for name in names):
        return None
    return tuple(name for name in names if name)


def _created_elsewhere(monitor: _Monitor, namespaces: frozenset[str], ctx: LintContext) -> tuple[list[_Target], bool]:
    """The targets a chart release, an operator or the cluster creates that the set does not
    hold, in ``namespaces`` (those the monitor selects), and whether something may create
    others the linter cannot describe."""
    known = known_targets()
    found: list[_Target] = []
    if namespaces & known.namespaces:
        return found, True
    for namespace, described in known.cluster.items():
        found += [_Target(target.what, None) for target in monitor.matched(described, None, "", namespace, "the cluster")]
    deployed: set[str] = set()  # charts and kinds the set deploys
    for release in dispatch.releases(ctx):
        deployed.add(release.chart)
        namespace = _release_namespace(release, monitor.placement)
        if not _in(namespace, monitor.namespaces):
            continue
        described = known.charts.get(release.chart)
        if described is None:
            return found, True  # any other chart may create anything in its namespace
        name = get_value(release.values, "nameOverride") or release.chart
        found += monitor.matched(described, release.release, str(name), None, str(release))
    for resource in ctx.resources:
        described = known.kinds.get(resource.kind or "")
        if described is not None:
            deployed.add(resource.kind or "")
            found += monitor.matched(described, None, "", None, f"{resource.ref}'s operator")
        elif _operator_input(resource) and (namespace := monitor.placement.of(resource)):
            if _in(namespace, monitor.namespaces):
                return found, True  # an operator's input in a selected namespace
    for kind, chart in known.kind_charts.items():
        if kind not in deployed and chart not in deployed:  # the operator may run, installed where the linter does not read
            found += monitor.matched(known.kinds[kind], None, "", None, f"the {chart} chart's operator (installed outside these files)")
    return found, False


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
        if not isinstance(selector, Mapping) or _templated(selector) or not _about_gpus(resource):
            continue
        placement = placement or _Placement(ctx.resources)
        monitor = _Monitor(resource, target_kind, selector, _namespaces(resource, placement), placement)
        if monitor.namespaces is None:
            continue
        targets = _in_set(monitor, ctx)
        elsewhere, unknown = _created_elsewhere(monitor, monitor.namespaces, ctx)
        targets += elsewhere
        if unknown:
            continue
        if targets:
            if target_kind == "Service" and all(target.ports is not None for target in targets):
                yield from _unnamed_ports(resource, targets)
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


_GPU_WORDS = re.compile(
    r"dcgm|gpu|nvidia|cuda|hami|vllm|sglang|triton|text-generation|\btgi\b|ollama|\bnim\b|llm|lmdeploy|tensorrt"
    r"|inference|kserve|llama|mistral|gemma|qwen",
    re.IGNORECASE,
)


def _about_gpus(monitor: Resource) -> bool:
    """Whether the monitor is for GPU metrics: its name, namespace, selectors or endpoints name a
    GPU exporter or server."""
    metadata = monitor.data.get("metadata")
    spec = monitor.data.get("spec")
    parts = (metadata.get("name"), metadata.get("namespace")) if isinstance(metadata, Mapping) else ()
    if isinstance(spec, Mapping):
        parts += tuple(spec.get(key) for key in ("selector", "namespaceSelector", "endpoints", "podMetricsEndpoints", "jobLabel"))
    return bool(_GPU_WORDS.search(json.dumps(parts, default=str)))


def _unnamed_ports(monitor: Resource, targets: list[_Target]) -> Iterator[Hit]:
    """Endpoints on a port name that no selected Service has (all their port names known)."""
    names = sorted({name for target in targets for name in target.ports or ()})
    endpoints = monitor.get(("spec", "endpoints"))
    for index, endpoint in enumerate(endpoints if isinstance(endpoints, list) else ()):
        port = endpoint.get("port") if isinstance(endpoint, Mapping) else None
        if not isinstance(port, str) or not port or "{{" in port or port in names:
            continue
        selected = "; ".join(f"{target.what}, ports: {', '.join(target.ports or ()) or 'none named'}" for target in targets[:3])
        yield Hit(
            monitor,
            ("spec", "endpoints", index, "port"),
            f"{monitor.ref} scrapes port `{port}`, which no Service it selects names ({selected}): the Prometheus "
            "Operator keeps only endpoints of that Service port name, so this endpoint scrapes nothing",
            fix=f"Set `port: {names[0]}`." if len(names) == 1 else "Name one of the selected Services' ports.",
        )


RULE = Rule("GS039", "set", check, frozenset(MONITORS))
