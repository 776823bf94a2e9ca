"""Flux delivery of the stack (``gitops.flux``): a ``flux/`` folder for a repository bootstrapped
by ``flux bootstrap``.

- ``flux/stack.yaml``, the entry file the user puts under ``clusters/<cluster>/``: one Flux
  ``Kustomization`` per layer, read from the bootstrap source (``gitops.flux.sourceRef``), each
  with ``prune``, ``wait`` (every object it applies Ready, HelmReleases included) and a
  ``timeout``, chained by ``dependsOn``: prerequisites and sources → releases → manifests.
- ``flux/prerequisites/``: what the charts' pods need before they start: the releases' namespaces
  with their Pod Security labels, never pruned (a pruned namespace takes its chart with it), and
  the early files of ``manifests/`` (``rendered.EARLY_MANIFESTS``: the workloads' namespaces, the
  RuntimeClass the device plugin's and exporter's pods name, the generated Secrets the charts'
  pods mount, such as Grafana's admin Secret).
- ``flux/sources/``: a HelmRepository per chart repository, an OCIRepository per chart installed
  by ``chartRef`` (only charts published as OCI, ``specs/charts.yaml`` ``oci``), a GitRepository
  per chart kept in Git (``HelmRelease.path``).
- ``flux/releases/``: one HelmRelease per release, its values inline or in a ConfigMap next to it
  (``valuesFrom``); ``dependsOn`` the releases of the wave before (``delivery.previous_wave``:
  what Argo CD's sync waves express, e.g. a chart's ServiceMonitors after kube-prometheus-stack).
- ``flux/manifests/``: the rest of ``manifests/``, once every release is Ready, so the CRDs of its
  custom resources exist.

The prerequisites and manifests layers list files of ``manifests/`` (``../../manifests/…``):
kustomize-controller builds without kustomize's root-only load restriction, within the source
(``SecureBuild`` in https://github.com/fluxcd/pkg/blob/main/kustomize/kustomize_generator.go).

API versions are those Flux 2.7 serves (the controllers' CRDs: source-controller v1.9,
helm-controller v1.6, kustomize-controller v1.9): https://fluxcd.io/flux/components/
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from gpustack import charts
from gpustack.render.component import Contribution, HelmRelease, RenderContext
from gpustack.render.delivery import kustomization, previous_wave, release_namespaces, stack_path
from gpustack.render.rendered import EARLY_MANIFESTS
from gpustack.spec.models import GpuStack
from gpustack.yamlio import dump

SOURCE_API = "source.toolkit.fluxcd.io/v1"
HELM_API = "helm.toolkit.fluxcd.io/v2"
KUSTOMIZE_API = "kustomize.toolkit.fluxcd.io/v1"
ENTRY_PATH = "flux/stack.yaml"
LAYERS = ("prerequisites", "sources", "releases", "manifests")  # folders under flux/, one Kustomization each
# https://fluxcd.io/flux/components/kustomize/kustomizations/#prune: objects with it are never deleted.
PRUNE = "kustomize.toolkit.fluxcd.io/prune"
# https://fluxcd.io/flux/components/helm/helmreleases/#values-references: helm-controller
# reconciles the release as soon as a ConfigMap with this label changes.
WATCH = {"reconcile.fluxcd.io/watch": "Enabled"}
VALUES_KEY = "values.yaml"
# A Helm chart pushed to an OCI registry is one layer of this media type; Flux extracts it.
# https://fluxcd.io/flux/components/source/ocirepositories/#layer-selector
HELM_LAYER = {"mediaType": "application/vnd.cncf.helm.chart.content.v1.tar+gzip", "operation": "copy"}

Objects = list[dict[str, Any]]


def enabled(stack: GpuStack) -> bool:
    return stack.spec.gitops.flux.enabled


def flux_objects(
    ctx: RenderContext, releases: Sequence[HelmRelease], _manifests: Mapping[str, Objects]
) -> Mapping[str, Objects]:
    """Every Flux file of the stack: path under the stack folder → objects."""
    stack = ctx.stack
    if not enabled(stack):
        return {}
    files: dict[str, Objects] = {ENTRY_PATH: layer_kustomizations(stack)}
    namespaces = release_namespaces(releases)
    for namespace in namespaces:
        namespace["metadata"]["annotations"] = {PRUNE: "disabled"}
    files["flux/prerequisites/namespaces.yaml"] = namespaces
    for source in sources(stack, releases):
        files[f"flux/sources/{source['metadata']['name']}.yaml"] = [source]
    for release in releases:
        files[f"flux/releases/{release.name}.yaml"] = release_objects(stack, releases, release)
    return files


def layer_kustomizations_files(delivery: Mapping[str, Objects], manifests: Iterable[str]) -> dict[str, str]:
    """``flux/<layer>/kustomization.yaml`` for each layer: its own files, and for the prerequisites
    and manifests layers their part of ``manifests/`` (``manifests``: its files' names)."""
    if ENTRY_PATH not in delivery:
        return {}
    listed: dict[str, list[str]] = {layer: [] for layer in LAYERS}
    for path in delivery:
        folder, _, file = path.rpartition("/")
        if folder.removeprefix("flux/") in listed:
            listed[folder.removeprefix("flux/")].append(file)
    for name in manifests:
        listed["prerequisites" if name in EARLY_MANIFESTS else "manifests"].append(f"../../manifests/{name}.yaml")
    return {f"flux/{layer}/kustomization.yaml": kustomization(sorted(files)) for layer, files in listed.items()}


def layer_kustomizations(stack: GpuStack) -> Objects:
    """The entry file: prerequisites and sources first, then the releases, then the manifests."""
    root = stack_path(stack)
    prerequisites = _kustomization(stack, "prerequisites", f"{root}/flux/prerequisites", [])
    sources_layer = _kustomization(stack, "sources", f"{root}/flux/sources", [])
    releases = _kustomization(stack, "releases", f"{root}/flux/releases", [prerequisites, sources_layer])
    manifests = _kustomization(stack, "manifests", f"{root}/flux/manifests", [releases])
    return [prerequisites, sources_layer, releases, manifests]


def _kustomization(stack: GpuStack, layer: str, path: str, after: Objects) -> dict[str, Any]:
    flux = stack.spec.gitops.flux
    source = flux.sourceRef
    spec: dict[str, Any] = {
        "interval": flux.interval,
        "timeout": flux.timeout,
        "sourceRef": {"kind": source.kind, "name": source.name, "namespace": source.namespace},
        "path": f"./{path}",
        "prune": flux.prune,
        "wait": True,
    }
    if after:
        spec["dependsOn"] = [{"name": k["metadata"]["name"]} for k in after]
    return {
        "apiVersion": KUSTOMIZE_API,
        "kind": "Kustomization",
        "metadata": {"name": f"{stack.metadata.name}-{layer}", "namespace": flux.namespace},
        "spec": spec,
    }


def uses_chart_ref(stack: GpuStack, release: HelmRelease) -> bool:
    """chartRef to an OCIRepository: chosen, and the chart is published as OCI."""
    return stack.spec.gitops.flux.chartReference == "chartRef" and oci_url(release) is not None


def oci_url(release: HelmRelease) -> str | None:
    if release.path is not None or release.chart not in charts.registry():
        return None
    return charts.chart(release.chart).oci


# Words of a chart repository's URL that name no one: a HelmRepository is named by the rest
# (https://nvidia.github.io/dcgm-exporter/helm-charts: nvidia-dcgm-exporter).
_URL_NOISE = frozenset({"https", "http", "www", "github", "io", "com", "org", "helm", "charts"})


def source_name(stack: GpuStack, release: HelmRelease) -> str:
    """The source a release's chart comes from: its own OCIRepository or GitRepository, else
    the HelmRepository of its chart repository (shared by the charts published there)."""
    if release.path is not None or uses_chart_ref(stack, release):
        return f"{stack.metadata.name}-{release.name}"
    words: list[str] = []
    for word in re.split(r"[^a-z0-9]+", release.repo.lower()):
        if word and word not in _URL_NOISE and word not in words:
            words.append(word)
    return f"{stack.metadata.name}-{'-'.join(words)}"[:63].rstrip("-")


def sources(stack: GpuStack, releases: Sequence[HelmRelease]) -> Objects:
    found: dict[str, dict[str, Any]] = {}
    for release in releases:
        name = source_name(stack, release)
        if name in found:
            continue
        if release.path is not None:
            found[name] = _source(stack, "GitRepository", name, {"url": release.repo, "ref": {"tag": release.version}})
        elif uses_chart_ref(stack, release):
            spec = {"url": oci_url(release), "ref": {"tag": release.version}, "layerSelector": dict(HELM_LAYER)}
            found[name] = _source(stack, "OCIRepository", name, spec)
        else:
            found[name] = _source(stack, "HelmRepository", name, {"url": release.repo})
    return list(found.values())


def _source(stack: GpuStack, kind: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    flux = stack.spec.gitops.flux
    return {
        "apiVersion": SOURCE_API,
        "kind": kind,
        "metadata": {"name": name, "namespace": flux.namespace},
        "spec": {"interval": flux.interval, **spec},
    }


def release_name(stack: GpuStack, release: HelmRelease) -> str:
    """The HelmRelease object's name: the stack's, so that two stacks share no Flux object."""
    return f"{stack.metadata.name}-{release.name}"


def release_objects(stack: GpuStack, releases: Sequence[HelmRelease], release: HelmRelease) -> Objects:
    """The HelmRelease, and with ``values: configMap`` the ConfigMap of its values first."""
    flux = stack.spec.gitops.flux
    name = release_name(stack, release)
    chart_source = {"kind": _source_kind(stack, release), "name": source_name(stack, release)}
    spec: dict[str, Any] = {
        "interval": flux.interval,
        "timeout": flux.timeout,
        "releaseName": release.name,
        "targetNamespace": release.namespace,
        "storageNamespace": release.namespace,
    }
    if uses_chart_ref(stack, release):
        spec["chartRef"] = chart_source
    else:
        chart = release.chart if release.path is None else f"./{release.path}"
        spec["chart"] = {"spec": {"chart": chart, "version": release.version, "sourceRef": chart_source}}
        if release.path is not None:  # a Git tag pins the chart; Chart.yaml's version is whatever it says
            del spec["chart"]["spec"]["version"]
    earlier = previous_wave(releases, release)
    if earlier:
        spec["dependsOn"] = [{"name": release_name(stack, r)} for r in earlier]
    crds = _ships_crds(release)
    spec["install"] = {**({"crds": "Create"} if crds else {}), "remediation": {"retries": flux.retries}}
    spec["upgrade"] = {
        **({"crds": "CreateReplace"} if crds else {}),
        "remediation": {"retries": flux.retries, "strategy": "rollback"},
    }
    objects: Objects = []
    if flux.values == "configMap":
        values_name = f"{name}-values"
        objects.append({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": values_name, "namespace": flux.namespace, "labels": dict(WATCH)},
            "data": {VALUES_KEY: dump(release.values)},
        })
        spec["valuesFrom"] = [{"kind": "ConfigMap", "name": values_name, "valuesKey": VALUES_KEY}]
    else:
        spec["values"] = dict(release.values)
    objects.append({
        "apiVersion": HELM_API,
        "kind": "HelmRelease",
        "metadata": {"name": name, "namespace": flux.namespace},
        "spec": spec,
    })
    return objects


def _source_kind(stack: GpuStack, release: HelmRelease) -> str:
    if release.path is not None:
        return "GitRepository"
    return "OCIRepository" if uses_chart_ref(stack, release) else "HelmRepository"


def _ships_crds(release: HelmRelease) -> bool:
    return release.chart in charts.registry() and charts.chart(release.chart).crds


def build(chart: Any, ctx: RenderContext) -> Contribution:
    """No objects: the README notes of Flux delivery."""
    stack = ctx.stack
    if not enabled(stack):
        return Contribution()
    flux = stack.spec.gitops.flux
    source = flux.sourceRef
    root = stack_path(stack)
    name = stack.metadata.name
    return Contribution(notes=[
        "Flux: in a repository bootstrapped with `flux bootstrap git --url=<repository> --branch=<branch> "
        f"--path=clusters/<cluster>` (it creates the {source.kind} `{source.namespace}/{source.name}` the "
        f"Kustomizations read), commit this folder at `{root}`, copy `flux/stack.yaml` to "
        f"`clusters/<cluster>/{name}.yaml`, commit and push. `flux get kustomizations -n {flux.namespace}` "
        "shows the layers as they become Ready.",
        f"The layers: `{name}-prerequisites` (the charts' namespaces with their Pod Security labels "
        "(`enforce: privileged` where a node agent runs, else `baseline`), never pruned; the workloads' namespaces and the RuntimeClass from `manifests/`) and "
        f"`{name}-sources` (the chart sources) first, then `{name}-releases` (one HelmRelease per chart, each "
        f"waiting for the charts whose CRDs its values use: `dependsOn`), then `{name}-manifests` (the rest of "
        "`manifests/`), once every release is Ready, so the CRDs of its custom resources exist. Each layer waits "
        f"for what it applies to be Ready (`wait: true`, timeout {flux.timeout}); a failed install or upgrade is "
        f"retried {flux.retries} times, a failed upgrade then rolled back. It converges on an empty cluster "
        "without a manual step.",
        "Flux applies this committed folder: re-render and commit to change the stack. "
        + ("Each Kustomization deletes what is removed from its folder (`gitops.flux.prune`)."
           if flux.prune else "Nothing removed from Git is deleted (`gitops.flux.prune: false`)."),
    ])
