"""GitOps delivery of every Helm release of the stack: K3s HelmCharts and an Argo CD app-of-apps.

Two delivery steps for the pipeline (``app.DELIVERY``), each given the merged releases:

- ``k3s_helm_charts``: one ``helm.cattle.io/v1`` HelmChart per release under ``k3s/``, for the
  K3s server's auto-deploy folder; on by default for K3s.
- ``argocd_applications``: with ``gitops.argocd.enabled``, ``argocd/root.yaml`` (the app of
  apps) and under ``argocd/apps/`` one Application per release (Helm values inline) plus one for
  ``manifests/``, ordered by sync waves.

``build`` adds the README notes and, for Argo CD, the config management plugin snippet.

A release whose chart lives in a Git repository (``HelmRelease.path``) is installed by Argo CD
from Git; K3s' helm-controller cannot, so on K3s it is left to the README's Helm command.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any

from gpustack.render.component import Contribution, HelmRelease, RenderContext
from gpustack.spec.models import GpuStack
from gpustack.yamlio import dump

K3S_NAMESPACE = "kube-system"  # where K3s' helm-controller expects HelmCharts
K3S_MANIFESTS = "/var/lib/rancher/k3s/server/manifests"
IN_CLUSTER = "https://kubernetes.default.svc"
SYNC_WAVE = "argocd.argoproj.io/sync-wave"
# Deleting an Application deletes what it deployed (the app-of-apps convention).
FINALIZER = "resources-finalizer.argocd.argoproj.io"
PLUGIN_PATH = "argocd/plugin.yaml"
PLUGIN_NAME = "gpustack"
PLUGIN_VERSION = "v1"

Objects = list[dict[str, Any]]


def k3s_enabled(stack: GpuStack) -> bool:
    wanted = stack.spec.gitops.k3sHelmCharts
    return stack.spec.cluster.distribution == "k3s" if wanted is None else wanted


def k3s_helm_charts(ctx: RenderContext, releases: Sequence[HelmRelease]) -> Mapping[str, Objects]:
    if not k3s_enabled(ctx.stack):
        return {}
    return {f"k3s/{r.name}.yaml": [helm_chart(r)] for r in releases if r.path is None}


def helm_chart(release: HelmRelease) -> dict[str, Any]:
    return {
        "apiVersion": "helm.cattle.io/v1",
        "kind": "HelmChart",
        "metadata": {"name": release.name, "namespace": K3S_NAMESPACE},
        "spec": {
            "chart": release.chart,
            "repo": release.repo,
            "version": release.version,
            "targetNamespace": release.namespace,
            "createNamespace": True,
            "valuesContent": dump(release.values),
        },
    }


def argocd_applications(ctx: RenderContext, releases: Sequence[HelmRelease]) -> Mapping[str, Objects]:
    stack = ctx.stack
    if not stack.spec.gitops.argocd.enabled:
        return {}
    apps = {f"argocd/apps/{r.name}.yaml": [release_application(stack, r)] for r in releases}
    # Last: the workloads need HAMi's webhook and scheduler, the PrometheusRules the CRDs of
    # kube-prometheus-stack; the charts' namespaces are created by the charts' Applications.
    last_wave = max((r.wave for r in releases), default=0) + 1
    apps["argocd/apps/manifests.yaml"] = [manifests_application(stack, wave=last_wave)]
    return {"argocd/root.yaml": [root_application(stack)], **apps}


def release_application(stack: GpuStack, release: HelmRelease) -> dict[str, Any]:
    source: dict[str, Any] = {"repoURL": release.repo, "targetRevision": release.version}
    if release.path is None:
        source["chart"] = release.chart
    else:
        source["path"] = release.path
    source["helm"] = {"releaseName": release.name, "valuesObject": dict(release.values)}
    return _application(
        stack,
        name=f"{stack.metadata.name}-{release.name}",
        wave=release.wave,
        source=source,
        namespace=release.namespace,
        # CreateNamespace: the release's namespace; ServerSideApply: CRDs such as
        # kube-prometheus-stack's exceed the annotation size of client-side apply.
        sync_options=["CreateNamespace=true", "ServerSideApply=true"],
    )


def manifests_application(stack: GpuStack, *, wave: int) -> dict[str, Any]:
    return _application(
        stack,
        name=f"{stack.metadata.name}-manifests",
        wave=wave,
        source=_rendered_source(stack, "manifests"),
        namespace="default",
        sync_options=[],
    )


def root_application(stack: GpuStack) -> dict[str, Any]:
    """The app of apps: applied once by hand, it syncs ``argocd/apps`` from Git."""
    # No finalizer: deleting the root must not cascade through every layer of the stack.
    return _application(
        stack,
        name=stack.metadata.name,
        wave=None,
        source=_rendered_source(stack, "argocd/apps"),
        namespace=stack.spec.gitops.argocd.namespace,
        sync_options=[],
        cascade=False,
    )


def stack_path(stack: GpuStack) -> str:
    """The rendered stack's folder in the Git repository (``gpustack render``'s default folder)."""
    return stack.spec.gitops.argocd.path or f"output/{stack.metadata.name}"


def plugin_config(ctx: RenderContext) -> str:
    """``plugin.yaml`` of an Argo CD config management plugin sidecar that runs ``gpustack render``."""
    spec_file = PurePosixPath(ctx.spec_file).name
    config = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "ConfigManagementPlugin",
        "metadata": {"name": PLUGIN_NAME},
        "spec": {
            "version": PLUGIN_VERSION,
            "discover": {"fileName": spec_file},
            "generate": {
                "command": ["sh", "-c"],
                # The Application's plugin env GPUSTACK_SPEC reaches the plugin as ARGOCD_ENV_GPUSTACK_SPEC.
                "args": [f'gpustack render "${{ARGOCD_ENV_GPUSTACK_SPEC:-{spec_file}}}" -o -'],
            },
        },
    }
    header = (
        "# Argo CD config management plugin: mount as /home/argocd/cmp-server/config/plugin.yaml in a\n"
        "# sidecar of argocd-repo-server whose image has gpustack with its render tools installed:\n"
        "# `pip install '.[render]'` in a clone of the gpustack repository, or\n"
        "# `pip install \"kube-gpustack[render] @ git+<repository URL>@<ref>\"`.\n"
    )
    return header + dump(config)


def build(chart: Any, ctx: RenderContext) -> Contribution:
    """No objects: the README notes of the delivery, and the plugin snippet for Argo CD."""
    stack = ctx.stack
    notes, files = [], {}
    if k3s_enabled(stack):
        notes.append(
            f"K3s: copy `k3s/*.yaml` into {K3S_MANIFESTS} on a server node; K3s applies them and its "
            "helm-controller installs each chart, retrying until the charts they depend on are up. "
            "Deleting a file there does not uninstall the chart."
        )
    if stack.spec.gitops.argocd.enabled:
        notes.append(
            f"Argo CD: commit this folder to {stack.spec.gitops.argocd.repoURL} at `{stack_path(stack)}`, then "
            "`kubectl apply -f argocd/root.yaml` once: it syncs `argocd/apps`, one Application per chart with "
            "its values inline, ordered by sync waves (NFD and kube-prometheus-stack with its CRDs first, the "
            "device plugins and exporter next), and `manifests/` last."
        )
        files[PLUGIN_PATH] = plugin_config(ctx)
        notes.append(
            f"Instead of committing the output, Argo CD can render the spec itself: `{PLUGIN_PATH}` configures a "
            f"config management plugin that runs `gpustack render SPEC -o -` (every manifest and delivery object "
            f"as one stream) in a repo-server sidecar; Applications select it with `plugin: {{name: "
            f"{PLUGIN_NAME}-{PLUGIN_VERSION}}}` and may set the spec's path in its env `GPUSTACK_SPEC`."
        )
    return Contribution(notes=notes, files=files)


def _rendered_source(stack: GpuStack, folder: str) -> dict[str, Any]:
    """A folder of the rendered stack in the Git repository of ``gitops.argocd``."""
    argocd = stack.spec.gitops.argocd
    return {"repoURL": argocd.repoURL, "targetRevision": argocd.targetRevision, "path": f"{stack_path(stack)}/{folder}"}


def _application(
    stack: GpuStack,
    *,
    name: str,
    wave: int | None,
    source: dict[str, Any],
    namespace: str,
    sync_options: list[str],
    cascade: bool = True,
) -> dict[str, Any]:
    argocd = stack.spec.gitops.argocd
    metadata: dict[str, Any] = {"name": name, "namespace": argocd.namespace}
    if wave is not None:
        metadata["annotations"] = {SYNC_WAVE: str(wave)}
    if cascade:
        metadata["finalizers"] = [FINALIZER]
    sync_policy: dict[str, Any] = {"automated": {"prune": True, "selfHeal": True}}
    if sync_options:
        sync_policy["syncOptions"] = sync_options
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": metadata,
        "spec": {
            "project": argocd.project,
            "source": source,
            "destination": {"server": IN_CLUSTER, "namespace": namespace},
            "syncPolicy": sync_policy,
        },
    }

