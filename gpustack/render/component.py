"""The contract between the render pipeline and its component modules.

Each component module (runtime, device_plugin, nfd, gpu_operator, monitoring, hami, dra,
workloads, …) exposes ``build(chart: cdk8s.Chart, ctx: RenderContext) -> Contribution``:
Kubernetes objects go into ``chart`` (one cdk8s Chart per component, via ``add_object``),
everything else (Helm releases, feature gates, README notes, extra files) comes back in the
``Contribution``. The pipeline (``gpustack.render.app``) orders the charts, synthesises them
and writes the tree.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gpustack import charts
from gpustack.spec.models import GpuStack

# Namespaces every cluster has: never created, labelled or owned by the stack.
BUILTIN_NAMESPACES = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})

# The control-plane and node components that read feature gates.
GATE_COMPONENTS = ("apiserver", "controller-manager", "scheduler", "kubelet")


@dataclass(frozen=True)
class RenderContext:
    """The validated spec (cross-field checks passed) plus where it came from."""

    stack: GpuStack
    spec_file: str
    # The ``versions.yaml`` record of the render this one replaces (stackfiles/versions.py):
    # its versions are where the README's upgrade steps start.
    earlier_versions: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class HelmRelease:
    """One upstream chart to install, with gpustack's values for it.

    Written as ``helm/<name>.values.yaml`` and delivered as a K3s HelmChart and/or an Argo CD
    Application. ``wave`` orders delivery (lower first: CRDs and runtime before consumers).
    """

    name: str
    chart: str
    repo: str
    version: str
    namespace: str
    values: Mapping[str, Any]
    wave: int = 0
    # A chart kept in a Git repository rather than published to a Helm repository: ``repo`` is
    # then the Git URL, ``version`` the revision and ``path`` the chart's folder in it.
    path: str | None = None
    # The Pod Security level its pods need in its namespace (pod_security.py): privileged unless
    # the release says less; a namespace several releases share gets the least strict.
    pod_security: str = "privileged"

    @property
    def values_path(self) -> str:
        """The values file in the stack folder."""
        return f"helm/{self.name}.values.yaml"

    def helm_command(self, values_file: str) -> str:
        """The ``helm`` command line that installs this release with ``values_file``."""
        if self.path is None:
            return (
                f"helm upgrade --install {self.name} {self.chart} --repo {self.repo} "
                f"--version {self.version} -n {self.namespace} -f {values_file}"
            )
        checkout = f"{self.chart}-src"
        return (
            f"git clone --depth 1 --branch {self.version} {self.repo} {checkout} && "
            f"helm upgrade --install {self.name} {checkout}/{self.path} -n {self.namespace} "
            f"--create-namespace -f {values_file}"
        )


def chart_release(
    chart: str,
    *,
    name: str,
    version: str,
    namespace: str,
    values: Mapping[str, Any],
    wave: int = 0,
    pod_security: str = "privileged",
) -> HelmRelease:
    """A release of a chart of the registry (``specs/charts.yaml``), installed from where it says."""
    entry = charts.chart(chart)
    return HelmRelease(
        name=name,
        chart=entry.name,
        repo=entry.repository,
        version=version,
        namespace=namespace,
        values=values,
        wave=wave,
        path=entry.path,
        pod_security=pod_security,
    )


@dataclass
class Contribution:
    releases: list[HelmRelease] = field(default_factory=list)
    # component (one of GATE_COMPONENTS) → gate → wanted value; only gates that differ
    # from the version's default.
    feature_gates: dict[str, dict[str, bool]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # Markdown bullets for the stack README
    files: dict[str, str] = field(default_factory=dict)  # extra files: relative path → text


def add_object(chart: Any, obj: Mapping[str, Any]) -> Any:
    """Add a plain-dict Kubernetes object to a cdk8s chart with a stable, explicit id."""
    import cdk8s

    metadata = dict(obj.get("metadata", {}))
    api_object = cdk8s.ApiObject(
        chart,
        f"{obj['kind']}-{metadata.get('namespace', '')}-{metadata['name']}",
        api_version=obj["apiVersion"],
        kind=obj["kind"],
        metadata=cdk8s.ApiObjectMetadata(**_metadata_kwargs(metadata)),
    )
    for key, value in obj.items():
        if key not in ("apiVersion", "kind", "metadata"):
            api_object.add_json_patch(cdk8s.JsonPatch.add(f"/{key}", value))
    return api_object


def _metadata_kwargs(metadata: Mapping[str, Any]) -> dict[str, Any]:
    names = {"name": "name", "namespace": "namespace", "labels": "labels", "annotations": "annotations"}
    unknown = set(metadata) - set(names)
    if unknown:
        raise ValueError(f"unsupported metadata fields: {sorted(unknown)}")
    return {names[key]: value for key, value in metadata.items()}
