"""GS014: a PrometheusRule, ServiceMonitor or PodMonitor that no Prometheus selects.

kube-prometheus-stack renders each selector of its Prometheus as
``matchLabels: {release: <release>}`` while ``*SelectorNilUsesHelmValues`` is true (the
default): an object without that label is silently ignored (the
dcgm-exporter chart's ServiceMonitor has no ``release`` label).

What the set says decides: a Prometheus object's own selectors, else the values of
kube-prometheus-stack releases declared in the set. Where the set shows no Prometheus at all,
nothing is said: what selects the object then lives outside the set (a kube-prometheus-stack
installed from another folder, often with its selectors opened up; OpenShift's monitoring,
which selects by namespace label; VictoriaMetrics, whose operator converts these objects for
its own agents; a Prometheus run outside the cluster), and on repositories nobody here had read
a release-label note there was judged wrong 22 times in 23.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from gpustack.lint.context import LintContext
from gpustack.lint.facts import labelselectors, registered
from gpustack.lint.facts.operands import exporter_service_monitors
from gpustack.lint.model import Hit, Path, Resource, get_value
from gpustack.lint.registry import Rule
from gpustack.lint.releases import dispatch
from gpustack.lint.releases.release import HelmChartRelease

MONITORING_GROUP = "monitoring.coreos.com/"
# Kind → prefix of the Prometheus fields that select it.
SELECTED_KINDS = {"PrometheusRule": "rule", "ServiceMonitor": "serviceMonitor", "PodMonitor": "podMonitor"}

Selects = Callable[[Resource], bool]


def _stack() -> str:
    """kube-prometheus-stack, the registry's monitoring stack."""
    return registered.chart_of_role("monitoring-stack")


def _monitoring(resource: Resource) -> bool:
    return (resource.api_version or "").startswith(MONITORING_GROUP)


def _prometheus_selects(prometheus: Resource, prefix: str, namespaces: Mapping[str, Mapping[str, Any]]) -> Selects:
    spec = prometheus.get(("spec",), {})
    selector = spec.get(f"{prefix}Selector") if isinstance(spec, Mapping) else None
    namespace_selector = spec.get(f"{prefix}NamespaceSelector") if isinstance(spec, Mapping) else None

    def selects(resource: Resource) -> bool:
        # prometheus-operator: a null selector selects nothing; a null namespace selector
        # means the Prometheus's own namespace only.
        if not isinstance(selector, Mapping) or not labelselectors.selector_matches(selector, labelselectors.labels_of(resource)):
            return False
        namespace = resource.ref.namespace
        if not isinstance(namespace_selector, Mapping):
            own = prometheus.ref.namespace
            return namespace is None or own is None or namespace == own
        # Namespace labels are known only for Namespace objects in the set.
        if namespace not in namespaces:
            return True
        return labelselectors.selector_matches(namespace_selector, namespaces[namespace])

    return selects


def _release_selects(release: HelmChartRelease, prefix: str) -> tuple[Selects, str]:
    """What a kube-prometheus-stack release's Prometheus selects, and how to say it."""
    spec = get_value(release.values, "prometheus", "prometheusSpec", default={})
    spec = spec if isinstance(spec, Mapping) else {}
    selector = spec.get(f"{prefix}Selector")
    if isinstance(selector, Mapping) and selector:
        where = f"the `{prefix}Selector` in the values of {release.owner}"
        return (lambda r: labelselectors.selector_matches(selector, labelselectors.labels_of(r))), where
    if spec.get(f"{prefix}SelectorNilUsesHelmValues", True) is False:
        return (lambda r: True), ""
    name = release.release or "<release>"
    return _release_label(release.release), f"{release.owner}, whose `{prefix}Selector` is `release: {name}`"


def _values_files(ctx: LintContext) -> Iterator[HelmChartRelease]:
    """kube-prometheus-stack values files linted with the manifests that no release takes (not
    mapped to the chart in ``.gpustack.yaml``, no chart their path and keys tell): documents
    without kind holding ``prometheus.prometheusSpec``."""
    taken = {layer.resource.file for release in dispatch.releases(ctx) for layer in release.layers}
    for resource in ctx.resources:
        if resource.file in ctx.values_files or resource.file in taken:
            continue
        if resource.kind is None and isinstance(resource.get(("prometheus", "prometheusSpec")), Mapping):
            yield HelmChartRelease(resource, ("prometheus",), _stack(), None, resource.data)


def _release_label(release: str | None) -> Selects:
    """A ``release`` label of that value (any value where the release's name is not known)."""

    def selects(resource: Resource) -> bool:
        value = labelselectors.labels_of(resource).get("release")
        return value is not None and (release is None or str(value) == release)

    return selects


@dataclass(frozen=True)
class _Target:
    """A monitoring object: in the set, or rendered by a chart release (reported at its values)."""

    resource: Resource
    name: str
    report: tuple[Resource, Path]
    label_with: str = "Label it"  # how the fix hint says to add the label


def _rendered_service_monitors(ctx: LintContext) -> Iterator[_Target]:
    """The ServiceMonitor a DCGM exporter release renders, labelled ``additionalLabels``."""
    for release, keys in exporter_service_monitors(ctx):
        labels = get_value(release.values, *keys, "additionalLabels", default={})
        data = {
            "apiVersion": "monitoring.coreos.com/v1",
            "kind": "ServiceMonitor",
            "metadata": {"name": release.release, "labels": labels if isinstance(labels, Mapping) else {}},
        }
        monitor = Resource(release.resource.file, data, release.resource.locator, release.resource.document)
        report = release.where(*keys, "additionalLabels")
        label_with = f"Set `{'.'.join(keys)}.additionalLabels`"
        yield _Target(monitor, f"the ServiceMonitor of {release}", report, label_with)


def check(ctx: LintContext) -> Iterator[Hit]:
    targets = [
        _Target(r, str(r.ref), (r, ("metadata", "labels")))
        for r in ctx.resources
        if r.kind in SELECTED_KINDS and _monitoring(r)
    ]
    targets += _rendered_service_monitors(ctx)
    if not targets:
        return
    prometheuses = [r for r in ctx.resources if r.kind == "Prometheus" and _monitoring(r)]
    releases = [
        release
        for release in (*_values_files(ctx), *dispatch.releases(ctx))
        if release.chart == _stack() and get_value(release.values, "prometheus", "enabled") is not False
    ]
    namespaces = {r.ref.name: labelselectors.labels_of(r) for r in ctx.resources if r.kind == "Namespace" and r.ref.name}
    for target in targets:
        resource = target.resource
        prefix = SELECTED_KINDS[resource.kind or ""]
        if prometheuses:
            if any(_prometheus_selects(p, prefix, namespaces)(resource) for p in prometheuses):
                continue
            names = ", ".join(str(p.ref) for p in prometheuses)
            message = f"no Prometheus in the set selects {target.name} by `{prefix}Selector` ({names})"
        elif releases:
            verdicts = [_release_selects(release, prefix) for release in releases]
            if any(selects(resource) for selects, _ in verdicts):
                continue
            message = f"{target.name} is not selected by {', '.join(why for _, why in verdicts)}"
        else:
            continue  # no Prometheus in the set: what selects the object is not said here
        yield Hit(
            *target.report,
            message,
            fix=f"{target.label_with} `release: <kube-prometheus-stack release>`, or set "
            f"`prometheus.prometheusSpec.{prefix}SelectorNilUsesHelmValues: false` in the chart's values.",
        )


RULE = Rule("GS014", "set", check)
