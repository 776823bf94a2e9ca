"""What set-level and cross-object rules ask of the input set.

- Helm releases wherever GitOps keeps their values (K3s ``HelmChart`` and ``HelmChartConfig``,
  Argo CD ``Application``, Flux ``HelmRelease``, kustomize ``helmCharts``, values files mapped
  to a chart in ``.gpustack.yaml``): chart, repository, version, and the values layer by layer
  with their positions, so rules read what a chart will render and point at the key.
- Label selectors (``matchLabels`` / ``matchExpressions``) as Kubernetes evaluates them.
- Device plugins, whichever way they are deployed: a plugin container in a pod spec, a GPU
  Operator ``ClusterPolicy``, or a chart release.
"""

from __future__ import annotations

import posixpath
import re
import weakref
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal

from gpustack.lint.facts.images import image_repository
from gpustack.lint.model import Path, PodSpec, Resource
from gpustack.lint.releases.chartsource import ChartRef, SourceIndex, chart_ref

if TYPE_CHECKING:
    from gpustack.lint.context import LintContext


@dataclass(frozen=True)
class ValuesLayer:
    """One place that sets a release's values. ``path`` is where they sit in ``resource``
    (it may go on into a YAML string: the loader locates inside it). ``written`` maps each
    key path of a ``--set``-style layer (K3s ``set``, Argo CD ``parameters``) to where it is
    written; None for a values tree."""

    resource: Resource
    path: Path
    values: Mapping[str, Any]
    written: Mapping[tuple[str, ...], Path] | None = None

    def where(self, keys: tuple[str, ...]) -> Path | None:
        """Where this layer sets ``keys`` (or a key below it), or None."""
        if self.written is not None:
            return next((path for written, path in self.written.items() if written[: len(keys)] == keys), None)
        node: Any = self.values
        for key in keys:
            if not isinstance(node, Mapping) or key not in node:
                return None
            node = node[key]
        return (*self.path, *keys)


@dataclass(frozen=True)
class HelmChartRelease:
    """A chart release declared in the set; ``path`` is its chart reference. ``values`` are the
    user's, merged as Helm merges ``layers`` (lowest precedence first), without chart defaults."""

    resource: Resource
    path: Path
    chart: str  # chart name without repository or version, e.g. "kube-prometheus-stack"
    release: str | None
    values: Mapping[str, Any]
    repo: str | None = None
    version: str | None = None  # as written: "2.10.0", "v26.7.0", a range, a Git revision
    layers: tuple[ValuesLayer, ...] = ()
    chart_ref: ChartRef | None = None  # Flux ``spec.chartRef``: ``releases`` resolves it in the set
    note: str | None = None  # why the chart or its version could not be told

    def where(self, *keys: str) -> tuple[Resource, Path]:
        """The object and path of the highest-precedence layer that sets ``keys``; the chart
        reference when only the chart's defaults do."""
        for layer in reversed(self.layers):
            path = layer.where(keys)
            if path is not None:
                return layer.resource, path
        return self.resource, self.path

    @property
    def owner(self) -> str:
        """What declares the release: ``HelmChart kube-system/hami``, ``values file helm/hami.values.yaml``."""
        return str(self.resource.ref) if self.resource.kind else f"values file {self.resource.file}"

    def __str__(self) -> str:
        version = f" {self.version}" if self.version else ""
        return f"chart {self.chart}{version} ({self.owner})"


def _release(
    resource: Resource, path: Path, chart: Any, release: str | None, layers: list[ValuesLayer], **identity: Any
) -> HelmChartRelease:
    values: Mapping[str, Any] = {}
    for layer in layers:
        values = coalesce(values, layer.values)
    name, version = _chart_name(chart)
    version = _text(identity.pop("version", None)) or version
    return HelmChartRelease(resource, path, name, release, values, version=version, layers=tuple(layers), **identity)


# The kinds ``helm_releases`` reads (None: a kustomization.yaml without apiVersion and kind).
_RELEASE_KINDS = frozenset({"Kustomization", "HelmChart", "Application", "HelmRelease", None})


def helm_releases(resource: Resource) -> Iterator[HelmChartRelease]:
    """The chart releases ``resource`` declares by itself (none for other kinds): K3s
    HelmChart, Argo CD Application, Flux HelmRelease, kustomize ``helmCharts``. ``releases``
    adds what takes the whole set (HelmChartConfig, values files)."""
    if resource.kind not in _RELEASE_KINDS:  # before ``ref``: most objects of a large set are none of these
        return
    api_group = resource.api_group
    if is_kustomization(resource):
        yield from _kustomize_releases(resource)
        return
    spec = resource.get(("spec",))
    if not isinstance(spec, Mapping):
        return
    name = resource.ref.name
    if resource.kind == "HelmChart" and api_group == "helm.cattle.io":
        # Precedence (upstream-facts §4): defaults, valuesContent, valuesSecrets,
        # HelmChartConfig, set; ``releases`` inserts the HelmChartConfigs.
        layers = [_text_layer(resource, ("spec", "valuesContent")), _dotted_layer(resource, ("spec", "set"))]
        yield _release(
            resource, ("spec", "chart"), spec.get("chart"), name, [layer for layer in layers if layer],
            repo=_text(spec.get("repo")), version=spec.get("version"),
        )
    elif resource.kind == "Application" and api_group == "argoproj.io":
        sources: list[tuple[Path, Any]] = [(("spec", "source"), spec.get("source"))]
        if isinstance(spec.get("sources"), list):
            sources += [(("spec", "sources", i), source) for i, source in enumerate(spec["sources"])]
        for path, source in sources:
            if isinstance(source, Mapping) and (release := _argo_release(resource, path, source)):
                yield release
    elif resource.kind == "HelmRelease" and api_group == "helm.toolkit.fluxcd.io":
        chart = spec.get("chart")
        chart_spec = _mapping(chart.get("spec") if isinstance(chart, Mapping) else None)
        target = _text(spec.get("targetNamespace"))
        release = _text(spec.get("releaseName")) or (f"{target}-{name}" if target and name else name)
        layers = [ValuesLayer(resource, ("spec", "values"), _mapping(spec.get("values")))]
        if not chart_spec and (ref := chart_ref(resource, spec)):
            yield _release(resource, ("spec", "chartRef", "name"), None, release, layers, chart_ref=ref)
            return
        yield _release(
            resource, ("spec", "chart", "spec", "chart"), chart_spec.get("chart"), release, layers,
            repo=_text(_mapping(chart_spec.get("sourceRef")).get("name")), version=chart_spec.get("version"),
        )


def _argo_release(resource: Resource, path: Path, source: Mapping[str, Any]) -> HelmChartRelease | None:
    """A Helm source: a chart from a Helm repository, or a chart folder in Git (``path``)."""
    helm = _mapping(source.get("helm"))
    if isinstance(source.get("chart"), str):
        chart, chart_path = source["chart"], (*path, "chart")
    elif isinstance(source.get("path"), str) and helm:
        chart, chart_path = source["path"], (*path, "path")
    else:
        return None
    # Precedence (Argo CD docs): valueFiles, values, valuesObject, parameters.
    layers = [
        _text_layer(resource, (*path, "helm", "values")),
        ValuesLayer(resource, (*path, "helm", "valuesObject"), _mapping(helm.get("valuesObject"))),
        _parameters_layer(resource, (*path, "helm", "parameters"), helm.get("parameters")),
    ]
    release = _text(helm.get("releaseName")) or resource.ref.name
    return _release(
        resource, chart_path, chart, release, [layer for layer in layers if layer and layer.values],
        repo=_text(source.get("repoURL")), version=source.get("targetRevision"),
    )


KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")


def posix_path(file: str) -> str:
    """A linted file's name with forward slashes (Windows paths included), for posixpath."""
    return file.replace("\\", "/")


def is_cluster_policy(resource: Resource) -> bool:
    """The GPU Operator's ``ClusterPolicy`` (``nvidia.com/``), which configures its operands."""
    return resource.kind == "ClusterPolicy" and (resource.api_version or "").startswith("nvidia.com/")


def cluster_policies(ctx: LintContext) -> list[Resource]:
    """The set's GPU Operator ``ClusterPolicy`` objects, in input order."""
    return [resource for resource in ctx.of_kind("ClusterPolicy") if is_cluster_policy(resource)]


def is_kustomization(resource: Resource) -> bool:
    if resource.kind == "Kustomization":
        return (resource.api_version or "").startswith("kustomize.config.k8s.io/")
    return resource.kind is None and posixpath.basename(posix_path(resource.file)) in KUSTOMIZATION_FILES


def left_out_by_kustomization(ctx: LintContext) -> frozenset[str]:
    """Files that a ``kustomization.yaml`` beside them does not name: kustomize (and Flux,
    which uses the folder's kustomization when there is one) applies only what it lists, so
    a release or DaemonSet kept in such a file (``resources: []``, entries commented out) is
    not deployed. A file counts as named when any string of the kustomization is its name
    (``resources``, ``patches``, generators alike), so nothing named is ever left out."""
    return ctx.memo(("left-out-by-kustomization",), lambda: _left_out(ctx.resources))


def _left_out(resources: Iterable[Resource]) -> frozenset[str]:
    named: dict[str, set[str]] = {}
    for resource in resources:
        if is_kustomization(resource):
            folder, name = posixpath.split(posix_path(resource.file))
            named.setdefault(folder, {name}).update(posixpath.normpath(text) for text in _strings(resource.data))
    if not named:
        return frozenset()
    left_out = set()
    for file in {resource.file for resource in resources}:
        folder, name = posixpath.split(posix_path(file))
        if folder in named and name not in named[folder]:
            left_out.add(file)
    return frozenset(left_out)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _kustomize_releases(resource: Resource) -> Iterator[HelmChartRelease]:
    charts = resource.get(("helmCharts",))
    for index, item in enumerate(charts if isinstance(charts, list) else ()):
        if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
            continue
        path = ("helmCharts", index)
        layers = [ValuesLayer(resource, (*path, "valuesInline"), _mapping(item.get("valuesInline")))]
        yield _release(
            resource, (*path, "name"), item["name"], _text(item.get("releaseName")) or item["name"], layers,
            repo=_text(item.get("repo")), version=item.get("version"),
        )


def _chart_name(chart: Any) -> tuple[str, str | None]:
    """``prometheus-community/kube-prometheus-stack``, ``oci://…/hami``, ``…/hami-2.6.0.tgz`` →
    the name, and the version a packaged chart's file name carries."""
    if not isinstance(chart, str):
        return "", None
    name = chart.rstrip("/").rsplit("/", 1)[-1]
    if name.endswith(".tgz"):
        name, _, version = name[: -len(".tgz")].rpartition("-")
        return name, version or None
    return name, None


def _text_layer(resource: Resource, path: Path) -> ValuesLayer | None:
    """Values written as a YAML string (K3s ``valuesContent``, Argo CD ``helm.values``)."""
    text = resource.get(path)
    values = yaml_mapping(text) if isinstance(text, str) else {}
    return ValuesLayer(resource, path, values) if values else None


@lru_cache(maxsize=256)
def yaml_mapping(text: str) -> Mapping[str, Any]:
    """Values written as a YAML string, read as Helm reads them (sigs.k8s.io/yaml, like manifests)."""
    if not text.strip():
        return {}
    from gpustack.lint.input.load import load_text

    documents = load_text("<values>", text).resources
    return documents[0].data if documents else {}


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _dotted_layer(resource: Resource, path: Path) -> ValuesLayer | None:
    """``--set``-style ``{"a.b": "false"}`` (K3s HelmChart ``set``)."""
    pairs = [(key, value, (*path, key)) for key, value in _mapping(resource.get(path)).items() if isinstance(key, str)]
    return _dotted(resource, path, pairs) if pairs else None


def _parameters_layer(resource: Resource, path: Path, parameters: Any) -> ValuesLayer | None:
    """Argo CD ``helm.parameters``: ``[{name: a.b, value: "1"}]``."""
    pairs = [
        (item["name"], item.get("value"), (*path, index, "name"))
        for index, item in enumerate(parameters if isinstance(parameters, list) else ())
        if isinstance(item, Mapping) and isinstance(item.get("name"), str)
    ]
    return _dotted(resource, path, pairs) if pairs else None


def _dotted(resource: Resource, path: Path, pairs: list[tuple[str, Any, Path]]) -> ValuesLayer:
    """Nested values of ``--set`` pairs (``true``/``false`` as Helm reads them; ``\\.`` escapes a
    dot; ``a[0]`` indexes a list, whose items are not followed)."""
    nested: dict[str, Any] = {}
    written: dict[tuple[str, ...], Path] = {}
    for key, value, where in pairs:
        parts = tuple(part.replace("\\.", ".") for part in re.split(r"(?<!\\)\.", key))
        indexed = next((i for i, part in enumerate(parts) if "[" in part), None)
        if indexed is not None:  # a list item: its key is checked, its value not followed
            written[(*parts[:indexed], parts[indexed].split("[", 1)[0])] = where
            continue
        written[parts] = where
        node = nested
        for part in parts[:-1]:
            child = node.get(part)
            node[part] = node = child if isinstance(child, dict) else {}
        node[parts[-1]] = {"true": True, "false": False}.get(value, value) if isinstance(value, str) else value
    return ValuesLayer(resource, path, nested, written)


# --- releases of the whole set ------------------------------------------------------------


def releases(ctx: LintContext) -> tuple[HelmChartRelease, ...]:
    """Every chart release of the set, once: what objects declare (``helm_releases``), with
    K3s HelmChartConfigs merged into their HelmChart, kustomize ``valuesFile``s, and the values
    files that ``.gpustack.yaml`` maps to a chart (``ctx.values_files``). Computed once per run."""
    cached = _RELEASES.get(id(ctx))
    if cached is not None and cached[0]() is ctx:
        return cached[1]
    found = _releases(ctx)
    for key in [key for key, (ref, _) in _RELEASES.items() if ref() is None]:
        del _RELEASES[key]
    _RELEASES[id(ctx)] = (weakref.ref(ctx), found)
    return found


_RELEASES: dict[int, tuple[weakref.ref[LintContext], tuple[HelmChartRelease, ...]]] = {}


def same_releases(ctx: LintContext, other: LintContext) -> LintContext:
    """``other`` (``ctx`` with more pod specs, the same resources) sharing its releases."""
    _RELEASES[id(other)] = (weakref.ref(other), releases(ctx))
    return other


def _releases(ctx: LintContext) -> tuple[HelmChartRelease, ...]:
    configs: dict[tuple[str | None, str | None], list[ValuesLayer]] = {}
    by_file: dict[str, list[Resource]] = {}
    for resource in ctx.resources:
        by_file.setdefault(resource.file, []).append(resource)
        if resource.kind == "HelmChartConfig" and (resource.api_version or "").startswith("helm.cattle.io/"):
            layer = _text_layer(resource, ("spec", "valuesContent"))
            if layer is not None:
                configs.setdefault((resource.ref.namespace, resource.ref.name), []).append(layer)
    found: list[HelmChartRelease] = []
    sources: SourceIndex | None = None
    for resource in ctx.resources:
        for release in helm_releases(resource):
            if release.chart_ref is not None:
                sources = sources or SourceIndex(ctx.resources)
                release = _from_source(release, sources)
            elif resource.kind == "HelmChart":
                extra = tuple(configs.pop((resource.ref.namespace, resource.ref.name), []))
                below = tuple(layer for layer in release.layers if layer.written is None)
                above = tuple(layer for layer in release.layers if layer.written is not None)  # `set`
                release = _with_layers(release, below + extra + above)
            elif is_kustomization(resource):
                release = _with_values_file(release, by_file)
            found.append(release)
    for (namespace, name), layers in configs.items():  # a packaged K3s chart configured (traefik, …)
        found.append(_release(layers[0].resource, ("metadata", "name"), name, name, layers))
    for file, chart in ctx.values_files.items():
        name, _, version = chart.partition("@")
        for resource in by_file.get(file, ()):
            found.append(_release(resource, (), name, None, [ValuesLayer(resource, (), resource.data)], version=version))
    return tuple(found)


def _from_source(release: HelmChartRelease, sources: SourceIndex) -> HelmChartRelease:
    """A chartRef release with the chart, version and repository its source object names."""
    assert release.chart_ref is not None
    source = sources.resolve(release.chart_ref, str(release.resource.ref))
    return replace(release, chart=source.chart, version=source.version, repo=source.repo, note=source.note)


def release_notes(ctx: LintContext) -> Iterator[tuple[Resource, Path, str]]:
    """Why a release's chart or version is unknown (the rules that need it pass it by)."""
    for release in releases(ctx):
        if release.note:
            yield release.resource, release.path, release.note


def _with_layers(release: HelmChartRelease, layers: tuple[ValuesLayer, ...]) -> HelmChartRelease:
    values: Mapping[str, Any] = {}
    for layer in layers:
        values = coalesce(values, layer.values)
    return replace(release, values=values, layers=layers)


def _with_values_file(release: HelmChartRelease, by_file: Mapping[str, list[Resource]]) -> HelmChartRelease:
    """kustomize's ``valuesFile`` (relative to the kustomization), below ``valuesInline``."""
    item = release.resource.get(release.path[:-1])
    values_file = item.get("valuesFile") if isinstance(item, Mapping) else None
    if not isinstance(values_file, str):
        return release
    folder = posixpath.dirname(posix_path(release.resource.file))
    wanted = posixpath.normpath(posixpath.join(folder, values_file))
    files = [r for file, rs in by_file.items() if posixpath.normpath(posix_path(file)) == wanted for r in rs]
    return _with_layers(release, tuple(ValuesLayer(r, (), r.data) for r in files) + release.layers)


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

    @property
    def operator(self) -> bool:
        """Deployed by the GPU Operator (its ClusterPolicy, or the chart that creates it)."""
        return self.release.chart == "gpu-operator" if self.release is not None else self.pod is None

    @property
    def deployment(self) -> tuple[str | None, ...]:
        """What a cluster holds once: a chart's release, an object (kind and name), the GPU
        Operator. Two plugins of one deployment are the same plugin written twice (a values
        file beside the HelmChart or Application that delivers it, an overlay, another cluster
        of the repository, upstream's alternative static manifests in two namespaces), never a
        pair."""
        if self.operator:
            return ("gpu-operator",)
        if self.release is not None:
            return ("release", self.release.chart)
        return ("object", self.resource.ref.kind, self.resource.ref.name)

    def __str__(self) -> str:
        if self.vendor == "hami":
            name = "HAMi's device plugin"
        else:
            name = "the GPU Operator's device plugin" if self.operator else "NVIDIA's device plugin"
        where = self.resource.ref if self.resource.kind else f"values file {self.resource.file}"
        return f"{name} ({where})"


def device_plugins(resource: Resource, pods: Iterable[PodSpec]) -> Iterator[DevicePlugin]:
    """Device plugins that ``resource`` deploys as manifests; ``pods`` are its pod specs.
    ``release_plugin`` tells those of chart releases."""
    for pod in pods:
        # The containers' data as it is (a set rule visits every pod: building their
        # Container objects would cost more than the test).
        containers = pod.spec.get("containers")
        for index, data in enumerate(containers if isinstance(containers, list) else ()):
            image = data.get("image") if isinstance(data, Mapping) else None
            vendor = _PLUGIN_IMAGES.get(image_repository(image)) if isinstance(image, str) else None
            if vendor is None:
                continue
            command = data.get("command")
            first = command[0] if isinstance(command, list) and command else None
            program = first.rsplit("/", 1)[-1] if isinstance(first, str) else None
            # NVIDIA's image runs the plugin by default; HAMi's needs the explicit command.
            if program == _PLUGIN_COMMAND or (program is None and vendor == "nvidia"):
                yield DevicePlugin(vendor, resource, (*pod.path, "containers", index, "image"), pod=pod)
    if is_cluster_policy(resource):
        if resource.get(("spec", "devicePlugin", "enabled")) is not False:
            yield DevicePlugin("nvidia", resource, ("spec", "devicePlugin"))


def release_plugin(release: HelmChartRelease) -> DevicePlugin | None:
    """The device plugin a chart release deploys, if any."""
    vendor = _PLUGIN_CHARTS.get(release.chart)
    if vendor and get_value(release.values, "devicePlugin", "enabled") is not False:
        return DevicePlugin(vendor, release.resource, release.path, release=release)
    return None


# HAMi's plugin DaemonSet selects ``devicePlugin.nvidiaNodeSelector`` (``nvidianodeSelector`` up
# to chart v2.7), by default ``gpu: "on"`` (reference §0, §7).
HAMI_SELECTOR_KEYS = ("nvidiaNodeSelector", "nvidianodeSelector")
HAMI_DEFAULT_SELECTOR: Mapping[str, Any] = {"gpu": "on"}


def hami_selector_keys(release: HelmChartRelease, ctx: LintContext) -> tuple[str, ...]:
    """The device plugin node selector keys the release's HAMi version reads (renamed in 2.8)."""
    from gpustack.lint.charts import chartversions

    alternatives = tuple(("devicePlugin", key) for key in HAMI_SELECTOR_KEYS)
    return tuple(path[-1] for path in chartversions.read_of(release.chart, release.version, alternatives, ctx.chart_values))


def hami_node_selector(values: Mapping[str, Any], keys: tuple[str, ...] = HAMI_SELECTOR_KEYS) -> Mapping[str, Any]:
    """The node selector of a HAMi release's device plugin: its values over the chart's default
    (Helm merges the maps; a null removes a default key). ``keys``: the names under
    ``devicePlugin`` the chart version reads (``hami_selector_keys``)."""
    selector = HAMI_DEFAULT_SELECTOR
    for key in keys:
        user = get_value(values, "devicePlugin", key)
        selector = coalesce(selector, user if isinstance(user, Mapping) else {})
    return selector
