"""Which DCGM fields the set's exporters collect: their counters CSVs.

dcgm-exporter exports only the fields its counters file lists (``-f``/``--collectors``, env
``DCGM_EXPORTER_COLLECTORS``; https://github.com/NVIDIA/dcgm-exporter#changing-metrics). Where
the set replaces that file, the fields are read from the replacement when the set holds it: a
ConfigMap mounted over the path, the dcgm-exporter chart's ``customMetrics`` (rendered into a
ConfigMap mounted at the default path), the GPU Operator's ``dcgmExporter.config.name``
ConfigMap. A replacement the set does not hold (a ConfigMap made elsewhere, a file baked into
an image) makes the fields unknown. Without replacement the exporter collects its defaults
(``defaultCollected`` in ``data/dcgm-metrics.yaml``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from gpustack.lint.facts import clusterpolicy, registered
from gpustack.lint.facts.commands import command_parts
from gpustack.lint.facts.consumers import env_vars
from gpustack.lint.facts.images import image_repository
from gpustack.lint.facts.operands import component_releases
from gpustack.lint.model import Container, PodSpec, Resource, get_value
from gpustack.shipped import lint_data

if TYPE_CHECKING:
    from gpustack.lint.context import LintContext

EXPORTER_IMAGE = "dcgm-exporter"  # the repository's last part: nvcr.io/nvidia/k8s/dcgm-exporter
COLLECTORS_ENV = "DCGM_EXPORTER_COLLECTORS"
DEFAULT_FILES = frozenset({"/etc/dcgm-exporter/default-counters.csv", "/etc/dcgm-exporter/dcp-metrics-included.csv"})
DEFAULT_FILE = "/etc/dcgm-exporter/default-counters.csv"


@cache
def default_collected() -> frozenset[str]:
    return frozenset(lint_data("dcgm-metrics.yaml")["defaultCollected"])


@dataclass(frozen=True)
class Collected:
    """The fields the set's exporters collect (None: some exporter's are unknown), and whether
    an exporter of the set says so (else dcgm-exporter's defaults are assumed)."""

    fields: frozenset[str] | None
    in_set: bool
    source: str  # how a message names where the fields come from


def csv_fields(text: str) -> frozenset[str]:
    """The fields a counters CSV enables: the first column of each line not commented out."""
    fields = (line.split(",", 1)[0].strip() for line in text.splitlines())
    return frozenset(field for field in fields if field.startswith("DCGM_"))


def collected(ctx: LintContext) -> Collected:
    """What the set's exporters collect, computed once per set."""
    return ctx.set_fact(_collected)


def _collected(ctx: LintContext) -> Collected:
    found: list[frozenset[str] | None] = [
        *(_pod_fields(ctx, pod, container) for pod in ctx.pod_specs if (container := _exporter(pod))),
        *(_release_fields(ctx, release.values, prefix) for release, prefix in component_releases(ctx, _exporter_charts(), "dcgmExporter")),
        *(_operator_fields(ctx, get_value(policy.data, "spec", "dcgmExporter")) for policy in clusterpolicy.cluster_policies(ctx)),
    ]
    if not found:
        return Collected(default_collected(), False, "dcgm-exporter's default counters (no exporter in the set)")
    if any(fields is None for fields in found):
        return Collected(None, True, "")
    union = frozenset().union(*(fields for fields in found if fields is not None))
    return Collected(union, True, "the counters of the set's DCGM exporters")


@cache
def _exporter_charts() -> Mapping[str, Any]:
    return registered.component_values("metrics-exporter", "dcgm-exporter")


def _exporter(pod: PodSpec) -> Container | None:
    return next((c for c in pod.containers() if image_repository(c.image).endswith(EXPORTER_IMAGE)), None)


def _pod_fields(ctx: LintContext, pod: PodSpec, container: Container) -> frozenset[str] | None:
    path = _collectors_path(container) or DEFAULT_FILE
    mounted = _mounted_config_map(pod, container, path)
    if mounted is None:
        return default_collected() if path in DEFAULT_FILES else None
    name, key = mounted
    if not name:
        return None
    config_map = _config_map(ctx, name, pod.resource.ref.namespace)
    text = get_value(config_map.data, "data", key) if config_map is not None else None
    return csv_fields(text) if isinstance(text, str) else None


def _collectors_path(container: Container) -> str | None:
    words = [word for _, part in command_parts(container) for word in part.split()]
    for index, word in enumerate(words):
        flag, _, value = word.partition("=")
        if flag in ("-f", "--collectors"):
            return value or (words[index + 1] if index + 1 < len(words) else None)
    return next((var.value for var in env_vars(container) if var.name == COLLECTORS_ENV and var.value), None)


def _mounted_config_map(pod: PodSpec, container: Container, path: str) -> tuple[str, str] | None:
    """(ConfigMap name, key) mounted at ``path`` or a folder above it; ("", "") for another
    kind of volume there; None when no volume covers the path."""
    volumes = {v.get("name"): v for v in pod.spec.get("volumes") or () if isinstance(v, Mapping)}
    mounts = container.data.get("volumeMounts")
    for mount in mounts if isinstance(mounts, list) else ():
        if not isinstance(mount, Mapping) or not isinstance(mount.get("mountPath"), str):
            continue
        target = mount["mountPath"].rstrip("/")
        if path != target and not path.startswith(target + "/"):
            continue
        source = get_value(volumes.get(mount.get("name"), {}), "configMap", "name")
        if not isinstance(source, str):
            return "", ""
        key = mount.get("subPath") if path == target else path[len(target) + 1 :]
        return source, str(key or PurePosixPath(path).name)
    return None


def _release_fields(ctx: LintContext, values: Mapping[str, Any], prefix: tuple[str, ...]) -> frozenset[str] | None:
    """The dcgm-exporter chart's values (at the top), or the GPU Operator's exporter section."""
    return _operator_fields(ctx, get_value(values, *prefix)) if prefix else _chart_fields(values)


def _chart_fields(values: Mapping[str, Any]) -> frozenset[str] | None:
    """The dcgm-exporter chart: ``customMetrics`` replaces the file at its default path."""
    custom = values.get("customMetrics")
    if isinstance(custom, str):
        return csv_fields(custom)
    arguments = values.get("arguments")
    if isinstance(arguments, list) and any(str(a) not in DEFAULT_FILES | {"-f", "--collectors"} for a in arguments):
        return None
    return default_collected()


def _operator_fields(ctx: LintContext, section: Any) -> frozenset[str] | None:
    """The GPU Operator: ``dcgmExporter.config.name`` names a ConfigMap holding the CSV."""
    name = get_value(section, "config", "name") if isinstance(section, Mapping) else None
    if not isinstance(name, str) or not name:
        return default_collected()
    config_map = _config_map(ctx, name, None)
    data = get_value(config_map.data, "data") if config_map is not None else None
    if not isinstance(data, Mapping):
        return None
    return frozenset().union(*(csv_fields(text) for text in data.values() if isinstance(text, str)))


def _config_map(ctx: LintContext, name: str, namespace: str | None) -> Resource | None:
    candidates = [r for r in ctx.of_kind("ConfigMap") if r.ref.name == name]
    return next((r for r in candidates if namespace is None or r.ref.namespace == namespace), None)
