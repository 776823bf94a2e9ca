"""The render pipeline: spec → RenderContext → one cdk8s Chart per component → file tree.

1. ``COMPONENTS`` (the single list, in apply order): each module's ``build(chart, ctx)`` adds
   Kubernetes objects to its own Chart and returns a ``Contribution``.
2. ``merge``: all Contributions become one ``Rendered`` (releases by name, feature gates per
   component with the user's gates, notes per component, extra files). This is the one place
   where contributions meet.
3. ``DELIVERY``: steps that turn the merged Helm releases into delivery objects (K3s HelmCharts,
   Argo CD Applications, Flux objects), written under their own paths and printed by ``-o -``.
4. Every Kubernetes object is validated for the spec's Kubernetes version; ``tree`` lays out
   the files.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from types import ModuleType
from typing import Any

from gpustack.errors import GpustackError
from gpustack.render import jsii_env, k8s_validate, pod_security
from gpustack.render.delivery import kustomization, release_namespaces
from gpustack.render.component import (
    BUILTIN_NAMESPACES,
    Contribution,
    HelmRelease,
    RenderContext,
    add_object,
)
from gpustack.render.components import (
    chart_policies,
    control_plane,
    device_plugin,
    dra,
    etcd_snapshots,
    flux,
    gitops,
    gpu_operator,
    hami,
    minio_users,
    monitoring,
    network_policies,
    nfd,
    partitioning,
    runtime,
    secrets,
    smoke,
    workloads,
)
from gpustack.render.rendered import NAMESPACES, RELEASE_NAMESPACES, Objects, Rendered
from gpustack.render.stackfiles import (
    cluster_config,
    k3s_autodeploy,
    lint_config,
    readme,
    talos_config,
    upgrade,
    versions,
)
from gpustack.yamlio import dump, dump_all

COMPONENTS: tuple[ModuleType, ...] = (
    runtime, nfd, device_plugin, gpu_operator, partitioning, hami, dra, monitoring, control_plane, etcd_snapshots, secrets,
    workloads,
    smoke, minio_users, network_policies, gitops, flux,
)

# (context, merged releases sorted by wave, the components' manifests) → {path relative to the
# stack folder: objects}
DeliveryStep = Callable[[RenderContext, Sequence[HelmRelease], Mapping[str, Objects]], Mapping[str, Objects]]
DELIVERY: tuple[DeliveryStep, ...] = (gitops.k3s_helm_charts, gitops.argocd_applications, flux.flux_objects)

def component_name(module: ModuleType) -> str:
    return module.__name__.rsplit(".", 1)[-1].replace("_", "-")


def render(ctx: RenderContext) -> Rendered:
    jsii_env.prepare()
    import cdk8s

    app = cdk8s.App()
    charts, contributions = {}, {}
    for module in COMPONENTS:
        name = component_name(module)
        charts[name] = cdk8s.Chart(app, name, disable_resource_name_hashes=True)
        contributions[name] = module.build(charts[name], ctx)
    synthesised = {name: chart.to_json() for name, chart in charts.items()}
    rendered = chart_policies.added(merge(ctx, contributions, synthesised))
    namespaces = cdk8s.Chart(app, NAMESPACES, disable_resource_name_hashes=True)
    for obj in namespace_objects(rendered):
        add_object(namespaces, obj)
    manifests = {NAMESPACES: namespaces.to_json(), **rendered.manifests}
    rendered = replace(
        rendered,
        manifests={name: objs for name, objs in manifests.items() if objs},
        namespaces=release_namespaces(rendered.releases),
    )
    k8s_validate.validate_all(rendered.objects(), minor=ctx.stack.spec.cluster.minor)
    return rendered


def merge(ctx: RenderContext, contributions: Mapping[str, Contribution], manifests: Mapping[str, Objects]) -> Rendered:
    """Merge the components' contributions; the delivery steps then see the merged releases."""
    releases = merge_releases(r for c in contributions.values() for r in c.releases)
    files: dict[str, str] = {}
    for contribution in contributions.values():
        for path, text in contribution.files.items():
            if path in files:
                raise GpustackError(f"internal: two components write {path}")
            files[path] = text
    delivery: dict[str, Objects] = {}
    for step in DELIVERY:
        delivery.update({path: list(objects) for path, objects in step(ctx, releases, manifests).items()})
    return Rendered(
        ctx=ctx,
        manifests=dict(manifests),
        releases=releases,
        feature_gates=cluster_config.merge_gates(
            (c.feature_gates for c in contributions.values()),
            ctx.stack.spec.cluster.featureGates,
            minor=ctx.stack.spec.cluster.minor,
        ),
        notes={name: list(c.notes) for name, c in contributions.items() if c.notes},
        files=files,
        delivery=delivery,
    )


def merge_releases(releases: Iterator[HelmRelease]) -> tuple[HelmRelease, ...]:
    """One release per name: a component may add values to another's release (same chart)."""
    merged: dict[str, HelmRelease] = {}
    for release in releases:
        first = merged.get(release.name)
        if first is None:
            merged[release.name] = release
            continue
        if (first.chart, first.repo, first.version, first.namespace) != (
            release.chart, release.repo, release.version, release.namespace
        ):
            raise GpustackError(f"internal: two different charts for release {release.name}")
        values = _merge_values(first.values, release.values, release.name)
        merged[release.name] = replace(first, values=values, wave=min(first.wave, release.wave))
    return tuple(sorted(merged.values(), key=lambda r: (r.wave, r.name)))


def _merge_values(a: Mapping[str, Any], b: Mapping[str, Any], where: str) -> dict[str, Any]:
    result = dict(a)
    for key, value in b.items():
        if isinstance(result.get(key), Mapping) and isinstance(value, Mapping):
            result[key] = _merge_values(result[key], value, f"{where}.{key}")
        elif key in result and result[key] != value:
            raise GpustackError(f"internal: conflicting Helm values at {where}.{key}")
        else:
            result[key] = value
    return result


def namespace_objects(rendered: Rendered) -> Objects:
    """Namespaces of ``manifests/`` objects that no release creates (the built-in ones exist),
    with the Pod Security labels their pods meet (``security.podSecurityLabels``)."""
    by_namespace: dict[str, list[dict[str, Any]]] = {}
    for objects in rendered.manifests.values():
        for obj in objects:
            if obj["metadata"].get("namespace"):
                by_namespace.setdefault(obj["metadata"]["namespace"], []).append(obj)
    created = {r.namespace for r in rendered.releases} | BUILTIN_NAMESPACES
    labelled = rendered.ctx.stack.spec.security.podSecurityLabels
    result = []
    for name in sorted(set(by_namespace) - created):
        metadata: dict[str, Any] = {"name": name}
        if labelled:
            metadata["labels"] = pod_security.workload_labels(by_namespace[name])
        result.append({"apiVersion": "v1", "kind": "Namespace", "metadata": metadata})
    return result


def values_file(release: HelmRelease) -> str:
    header = (
        f"# Helm values for chart {release.chart} {release.version} ({release.repo}),\n"
        f"# release {release.name} in namespace {release.namespace}:\n"
        f"#   {release.helm_command(f'{release.name}.values.yaml')}\n"
    )
    return header + dump(release.values)


def tree(rendered: Rendered) -> dict[str, str]:
    """The output folder as {relative path: text}, sorted by path."""
    node_config = talos_config if rendered.ctx.stack.spec.cluster.distribution == "talos" else cluster_config
    files: dict[str, str] = dict(node_config.config_files(rendered.ctx.stack, rendered.feature_gates))
    for name, objects in rendered.manifests.items():
        files[f"manifests/{name}.yaml"] = dump_all(objects)
    files["manifests/kustomization.yaml"] = kustomization(f"{name}.yaml" for name in rendered.manifests)
    for release in rendered.releases:
        files[release.values_path] = values_file(release)
    if rendered.namespaces:
        files[RELEASE_NAMESPACES] = dump_all(rendered.namespaces)
    for path, objects in rendered.delivery.items():
        files[path] = dump_all(objects)
    files.update(flux.layer_kustomizations_files(rendered.delivery, rendered.manifests))
    for path, text in rendered.files.items():
        if path in files:
            raise GpustackError(f"internal: a contributed file overwrites {path}")
        files[path] = text
    files[lint_config.PATH] = lint_config.render(rendered.ctx.stack, rendered.releases)
    if gitops.k3s_enabled(rendered.ctx.stack):
        files[k3s_autodeploy.PATH] = k3s_autodeploy.render(rendered)
    now = versions.current(rendered.ctx.stack, rendered.releases)
    before = versions.previous(now, rendered.ctx.earlier_versions)
    upgrade.check(before, now, rendered.ctx.spec_file)
    files[versions.PATH] = versions.render(rendered.ctx.stack, now, before)
    steps = upgrade.markdown(rendered.ctx.stack, rendered.releases, before, now) if before else []
    files[readme.PATH] = readme.render(rendered, sorted(files), upgrade=steps)
    return dict(sorted(files.items()))


def stream_objects(rendered: Rendered) -> Iterator[dict[str, Any]]:
    """What ``render -o -`` prints: every object, for ``kubectl apply -f -``."""
    yield from (obj for _, obj in rendered.objects())


def stream(rendered: Rendered) -> str:
    """Every object of ``stream_objects`` as one YAML stream (``render -o -``)."""
    return dump_all(stream_objects(rendered))
