"""What set-level and cross-object rules ask of the input set.

- Helm releases declared as objects (K3s ``HelmChart``, Argo CD ``Application``, Flux
  ``HelmRelease``) with their values, so rules can read what a chart will render.
- Label selectors (``matchLabels`` / ``matchExpressions``) as Kubernetes evaluates them.
- Device plugins, whichever way they are deployed: a plugin container in a pod spec, a GPU
  Operator ``ClusterPolicy``, or a chart release.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from gpustack.lint.gpu import image_repository
from gpustack.lint.model import Path, PodSpec, Resource


@dataclass(frozen=True)
class HelmChartRelease:
    """A chart release declared in the set; ``path`` is its chart reference."""

    resource: Resource
    path: Path
    chart: str  # chart name without repository or version, e.g. "kube-prometheus-stack"
    release: str | None
    values: Mapping[str, Any]


def helm_releases(resource: Resource) -> Iterator[HelmChartRelease]:
    """The chart releases ``resource`` declares (none for other kinds)."""
    api_group = (resource.ref.api_version or "").split("/")[0]
    spec = resource.get(("spec",))
    if not isinstance(spec, Mapping):
        return
    name = resource.ref.name
    if resource.kind == "HelmChart" and api_group == "helm.cattle.io":
        values = coalesce(_yaml_mapping(spec.get("valuesContent")), _dotted(spec.get("set")))
        yield HelmChartRelease(resource, ("spec", "chart"), _chart_name(spec.get("chart")), name, values)
    elif resource.kind == "Application" and api_group == "argoproj.io":
        sources: list[tuple[Path, Any]] = [(("spec", "source"), spec.get("source"))]
        if isinstance(spec.get("sources"), list):
            sources += [(("spec", "sources", i), source) for i, source in enumerate(spec["sources"])]
        for path, source in sources:
            if not isinstance(source, Mapping) or not isinstance(source.get("chart"), str):
                continue
            helm = source.get("helm") if isinstance(source.get("helm"), Mapping) else {}
            params = helm.get("parameters") if isinstance(helm.get("parameters"), list) else []
            values = coalesce(
                coalesce(_yaml_mapping(helm.get("values")), _mapping(helm.get("valuesObject"))),
                _dotted({p.get("name"): p.get("value") for p in params if isinstance(p, Mapping)}),
            )
            release = _text(helm.get("releaseName")) or name
            yield HelmChartRelease(resource, (*path, "chart"), _chart_name(source["chart"]), release, values)
    elif resource.kind == "HelmRelease" and api_group == "helm.toolkit.fluxcd.io":
        chart = spec.get("chart")
        chart_spec = chart.get("spec") if isinstance(chart, Mapping) else None
        chart_name = chart_spec.get("chart") if isinstance(chart_spec, Mapping) else None
        target = _text(spec.get("targetNamespace"))
        release = _text(spec.get("releaseName")) or (f"{target}-{name}" if target and name else name)
        path = ("spec", "chart", "spec", "chart")
        yield HelmChartRelease(resource, path, _chart_name(chart_name), release, _mapping(spec.get("values")))


def _chart_name(chart: Any) -> str:
    """``prometheus-community/kube-prometheus-stack``, ``oci://…/hami``, ``…/hami-2.6.0.tgz`` → name."""
    if not isinstance(chart, str):
        return ""
    name = chart.rstrip("/").rsplit("/", 1)[-1]
    if name.endswith(".tgz"):
        name = name[: -len(".tgz")].rsplit("-", 1)[0]
    return name


def _yaml_mapping(text: Any) -> Mapping[str, Any]:
    """Values written as a YAML string, read as Helm reads them (sigs.k8s.io/yaml, like manifests)."""
    if not isinstance(text, str) or not text.strip():
        return {}
    from gpustack.lint.load import load_text

    documents = load_text("<values>", text).resources
    return documents[0].data if documents else {}


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _dotted(pairs: Any) -> Mapping[str, Any]:
    """``--set``-style ``{"a.b": "false"}`` as nested values (``true``/``false`` as Helm reads them)."""
    nested: dict[str, Any] = {}
    for key, value in _mapping(pairs).items():
        if not isinstance(key, str):
            continue
        node = nested
        *parents, leaf = key.split(".")
        for part in parents:
            child = node.get(part)
            node[part] = node = child if isinstance(child, dict) else {}
        node[leaf] = {"true": True, "false": False}.get(value, value) if isinstance(value, str) else value
    return nested


def coalesce(base: Mapping[str, Any], override: Mapping[str, Any]) -> Mapping[str, Any]:
    """Helm's coalescing of ``override`` into ``base``: maps merge key by key (so a user map
    never replaces a default map wholesale), a null value deletes the key."""
    merged = dict(base)
    for key, value in override.items():
        if value is None:
            merged.pop(key, None)
        elif isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = coalesce(merged[key], value)
        else:
            merged[key] = value
    return merged


def get_value(values: Mapping[str, Any], *keys: str, default: Any = None) -> Any:
    node: Any = values
    for key in keys:
        if not isinstance(node, Mapping) or key not in node:
            return default
        node = node[key]
    return node


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def labels_of(resource: Resource) -> Mapping[str, Any]:
    return _mapping(resource.get(("metadata", "labels")))


def selector_matches(selector: Mapping[str, Any], labels: Mapping[str, Any]) -> bool:
    """Kubernetes LabelSelector semantics; an empty selector matches everything."""
    for key, value in _mapping(selector.get("matchLabels")).items():
        if key not in labels or label_text(labels[key]) != label_text(value):
            return False
    expressions = selector.get("matchExpressions")
    for expression in expressions if isinstance(expressions, list) else ():
        if not isinstance(expression, Mapping):
            continue
        key, op = expression.get("key"), expression.get("operator")
        values = {label_text(v) for v in expression.get("values") or ()}
        present = key in labels
        value = label_text(labels.get(key))
        if (
            (op == "In" and not (present and value in values))
            or (op == "NotIn" and present and value in values)
            or (op == "Exists" and not present)
            or (op == "DoesNotExist" and present)
        ):
            return False
    return True


def label_text(value: Any) -> str:
    # Kubernetes' YAML 1.1 reading makes an unquoted `on` a boolean; compare what was written.
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


Vendor = Literal["hami", "nvidia"]

# Image repositories of the two plugins that both advertise nvidia.com/gpu (reference §1,
# §7). The same images also run GFD, the MPS daemon and HAMi's scheduler, so the container's
# command decides.
_PLUGIN_IMAGES: dict[str, Vendor] = {
    "nvcr.io/nvidia/k8s-device-plugin": "nvidia",
    "nvidia/k8s-device-plugin": "nvidia",
    "projecthami/hami": "hami",
}
_PLUGIN_COMMAND = "nvidia-device-plugin"
# Chart name → which plugin it deploys when ``devicePlugin.enabled`` is not false.
_PLUGIN_CHARTS: dict[str, Vendor] = {"nvidia-device-plugin": "nvidia", "gpu-operator": "nvidia", "hami": "hami"}


@dataclass(frozen=True)
class DevicePlugin:
    """A device plugin deployment found in one object."""

    vendor: Vendor
    resource: Resource
    path: Path  # the container's image, the ClusterPolicy's devicePlugin, or the release's chart
    pod: PodSpec | None = None
    release: HelmChartRelease | None = None

    def __str__(self) -> str:
        name = "HAMi's device plugin" if self.vendor == "hami" else "NVIDIA's device plugin"
        return f"{name} ({self.resource.ref})"


def device_plugins(resource: Resource, pods: Iterable[PodSpec]) -> Iterator[DevicePlugin]:
    """Device plugins that ``resource`` deploys; ``pods`` are its pod specs."""
    for pod in pods:
        for container in pod.containers(include_init=False):
            vendor = _PLUGIN_IMAGES.get(image_repository(container.image))
            command = container.data.get("command")
            program = command[0].rsplit("/", 1)[-1] if isinstance(command, list) and command else None
            # NVIDIA's image runs the plugin by default; HAMi's needs the explicit command.
            if vendor and (program == _PLUGIN_COMMAND or (program is None and vendor == "nvidia")):
                yield DevicePlugin(vendor, resource, (*container.path, "image"), pod=pod)
    if resource.kind == "ClusterPolicy" and (resource.ref.api_version or "").startswith("nvidia.com/"):
        if resource.get(("spec", "devicePlugin", "enabled")) is not False:
            yield DevicePlugin("nvidia", resource, ("spec", "devicePlugin"))
    for release in helm_releases(resource):
        vendor = _PLUGIN_CHARTS.get(release.chart)
        if vendor and get_value(release.values, "devicePlugin", "enabled") is not False:
            yield DevicePlugin(vendor, resource, release.path, release=release)
