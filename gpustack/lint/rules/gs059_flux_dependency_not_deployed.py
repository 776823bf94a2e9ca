"""GS059: a Flux Kustomization or HelmRelease of the GPU stack waits on an object nothing deploys.

Flux reconciles a Kustomization or HelmRelease only once every object its ``spec.dependsOn``
names is Ready (https://fluxcd.io/flux/components/kustomize/kustomizations/#dependencies,
https://fluxcd.io/flux/components/helm/helmreleases/#dependencies); one that no object of the
cluster is, is never Ready, so the dependent stays "dependency not ready" and never installs.
The rule reports a dependsOn entry naming an object of its kind (its name, in its namespace,
by default the dependent's) that the set does not deploy (none, or only in files a
kustomization leaves out), for a dependent that deploys GPU software (a GPU chart, GPU pods,
or a folder holding them). Only where the set holds the whole Flux tree (``fluxgraph``): an
entry Kustomization, every path and listed file present; otherwise the object may sit in a
file the run was not given.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator

from gpustack.lint.context import LintContext
from gpustack.lint.facts import fluxgraph, registered
from gpustack.lint.model import Hit, Resource, posix_path
from gpustack.lint.registry import Rule
from gpustack.lint.releases import deployed, dispatch
from gpustack.lint.releases.deployed import folder_pattern

GPU_ROLES = ("gpu-operator", "device-plugin", "feature-discovery", "gpu-sharing", "dra-driver", "metrics-exporter")


def check(ctx: LintContext) -> Iterator[Hit]:
    found = [dependency for resource in ctx.resources for dependency in fluxgraph.dependencies(resource)]
    if not found:
        return
    tree = fluxgraph.FluxTree(ctx.resources, deployed.left_out(ctx))
    if tree.gap is not None or tree.entry is None:
        return
    gpu = _gpu_objects(ctx)
    for dependency in found:
        if tree.find(dependency) is not None or not _deploys_gpu_software(dependency.dependent, gpu):
            continue
        dependent = dependency.dependent
        yield Hit(
            dependent,
            dependency.path,
            f"{dependent.ref} depends on {dependency}, which the set does not deploy (looked for a {dependency.kind}"
            f" named {dependency.name}{' in namespace ' + dependency.namespace if dependency.namespace else ''} among"
            f" the {tree.of_kind(dependency.kind)} {dependency.kind}s of the Flux tree that {tree.entry.ref} enters): Flux"
            " waits for it to be Ready, so the dependent never reconciles",
            fix=f"Deploy {dependency} (list its file where the tree reaches it), or correct or drop the dependsOn"
            " entry.",
        )


def _gpu_objects(ctx: LintContext) -> list[Resource]:
    """The objects that deploy GPU software: GPU pods and GPU system components (manifests and
    chart values), and releases of the GPU stack's charts."""
    charts = registered.names_of_roles(*GPU_ROLES)
    objects = {id(pod.resource): pod.resource for pod in ctx.pod_specs if pod.gpu_consumer or pod.system_component}
    objects.update((id(r.resource), r.resource) for r in dispatch.releases(ctx) if r.chart in charts)
    return list(objects.values())


def _deploys_gpu_software(dependent: Resource, gpu: list[Resource]) -> bool:
    """A HelmRelease among ``gpu``; a Kustomization whose paths hold one of them."""
    if dependent.kind == "HelmRelease":
        return any(resource is dependent for resource in gpu)
    patterns = [folder_pattern(path) for path in fluxgraph.gitops_paths(dependent)]
    return any(
        pattern.search(folder)
        for resource in gpu
        for folder in _folders_of(resource.file)
        for pattern in patterns
    )


def _folders_of(file: str) -> Iterator[str]:
    folder = posixpath.dirname(posixpath.normpath(posix_path(file)))
    while folder and folder not in ("/", "."):
        yield folder
        folder = posixpath.dirname(folder)


RULE = Rule("GS059", "set", check, frozenset(fluxgraph.GROUPS))
