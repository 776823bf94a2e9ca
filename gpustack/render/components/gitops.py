"""GitOps delivery of every Helm release of the stack: K3s HelmCharts and an Argo CD app-of-apps.

Two delivery steps for the pipeline (``app.DELIVERY``), each given the merged releases:

- ``k3s_helm_charts``: one ``helm.cattle.io/v1`` HelmChart per release under ``k3s/``, for the
  K3s server's auto-deploy folder; on by default for K3s.
- ``argocd_applications``: with ``gitops.argocd.enabled``, ``argocd/root.yaml`` (the stack's
  AppProject and the app of apps) and under ``argocd/apps/`` one Application per release (Helm
  values inline) plus one for ``manifests/``, ordered by sync waves.

``build`` adds the README notes. Argo CD syncs the committed output with what it does natively
(Helm charts from their repositories with ``valuesObject``, a folder of manifests): no config
management plugin, which would need a repo-server sidecar image with gpustack and Node.js that
nobody publishes.

A release whose chart lives in a Git repository (``HelmRelease.path``) is installed by Argo CD
from Git; K3s' helm-controller cannot, so on K3s it is left to the README's Helm command.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from gpustack.render import pod_security
from gpustack.render.component import BUILTIN_NAMESPACES, Contribution, HelmRelease, RenderContext
from gpustack.render.delivery import last_wave, namespace_levels, stack_path
from gpustack.spec.models import GpuStack
from gpustack.yamlio import dump

K3S_NAMESPACE = "kube-system"  # where K3s' helm-controller expects HelmCharts
K3S_MANIFESTS = "/var/lib/rancher/k3s/server/manifests"
IN_CLUSTER = "https://kubernetes.default.svc"
SYNC_WAVE = "argocd.argoproj.io/sync-wave"
# With it, deleting an Application deletes what it deployed: only with gitops.argocd.cascadeDelete.
FINALIZER = "resources-finalizer.argocd.argoproj.io"
ROOT_PATH = "argocd/root.yaml"
MANIFESTS_APP_PATH = "argocd/apps/manifests.yaml"
# Every child retries a failed sync with backoff: Argo CD does not retry an automated sync that
# failed for the same commit, and on an empty cluster a child can fail until another child's CRDs
# or namespace exist (about 37 minutes of attempts in all).
RETRY = {"limit": 10, "backoff": {"duration": "30s", "factor": 2, "maxDuration": "5m"}}
# ServerSideApply: CRDs such as kube-prometheus-stack's exceed the annotation size of client-side
# apply. SkipDryRunOnMissingResource: a child's custom resources (ServiceMonitors,
# PrometheusRules, …) may need CRDs that another child installs; without it the whole sync fails
# its dry run until they exist. It changes nothing for kinds that exist, so every child has it:
# gpustack does not read the charts' templates to know which of them hold custom resources.
CHILD_SYNC_OPTIONS = ("ServerSideApply=true", "SkipDryRunOnMissingResource=true")

Objects = list[dict[str, Any]]


def k3s_enabled(stack: GpuStack) -> bool:
    """On by default for K3s, unless Flux delivers the releases (one delivery per stack)."""
    wanted = stack.spec.gitops.k3sHelmCharts
    if wanted is None:
        return stack.spec.cluster.distribution == "k3s" and not stack.spec.gitops.flux.enabled
    return wanted


def k3s_helm_charts(
    ctx: RenderContext, releases: Sequence[HelmRelease], _manifests: Mapping[str, Objects]
) -> Mapping[str, Objects]:
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


def argocd_applications(
    ctx: RenderContext, releases: Sequence[HelmRelease], manifests: Mapping[str, Objects]
) -> Mapping[str, Objects]:
    stack = ctx.stack
    if not stack.spec.gitops.argocd.enabled:
        return {}
    root = [root_application(stack)]
    if stack.spec.gitops.argocd.project is None:
        root.insert(0, app_project(stack, releases, manifests))
    levels = namespace_levels(releases)
    apps = {f"argocd/apps/{r.name}.yaml": [release_application(stack, r, levels)] for r in releases}
    # Last: the workloads need HAMi's webhook and scheduler, the PrometheusRules the CRDs of
    # kube-prometheus-stack; the charts' namespaces are created by the charts' Applications.
    # Waves order the first apply only: without a health check for Application objects (an
    # argocd-cm customization gpustack does not own), Argo CD does not wait for a wave to be
    # healthy. Convergence rests on RETRY and CHILD_SYNC_OPTIONS instead.
    apps[MANIFESTS_APP_PATH] = [manifests_application(stack, wave=last_wave(releases))]
    return {ROOT_PATH: root, **apps}


def project_name(stack: GpuStack) -> str:
    return stack.spec.gitops.argocd.project or stack.metadata.name


def app_project(stack: GpuStack, releases: Sequence[HelmRelease], manifests: Mapping[str, Objects]) -> dict[str, Any]:
    """The stack's own AppProject instead of ``default`` (any repository, any namespace): its
    Applications may sync only from the stack's Git repository and the charts' repositories, into
    the in-cluster namespaces the stack uses (the releases', those of ``manifests/``, and Argo CD's
    own for the Applications). kube-system is among them: kube-prometheus-stack writes the Services
    of its control-plane jobs there (coredns, kube-controller-manager, kube-scheduler). Cluster-scoped
    kinds stay allowed: the charts install CRDs, ClusterRoles, webhooks and DeviceClasses
    (https://argo-cd.readthedocs.io/en/stable/user-guide/projects/)."""
    argocd = stack.spec.gitops.argocd
    repos = {argocd.repoURL, *(r.repo for r in releases)}
    namespaces = {argocd.namespace, "default", "kube-system", *(r.namespace for r in releases)}
    namespaces |= {o["metadata"]["namespace"] for objs in manifests.values() for o in objs if "namespace" in o["metadata"]}
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "AppProject",
        "metadata": {"name": project_name(stack), "namespace": argocd.namespace},
        "spec": {
            "description": f"The GPU stack {stack.metadata.name}, rendered by gpustack.",
            "sourceRepos": sorted(r for r in repos if r),
            "destinations": [{"server": IN_CLUSTER, "namespace": n} for n in sorted(namespaces)],
            "clusterResourceWhitelist": [{"group": "*", "kind": "*"}],
        },
    }


def release_application(stack: GpuStack, release: HelmRelease, levels: Mapping[str, str]) -> dict[str, Any]:
    source: dict[str, Any] = {"repoURL": release.repo, "targetRevision": release.version}
    if release.path is None:
        source["chart"] = release.chart
    else:
        source["path"] = release.path
    source["helm"] = {"releaseName": release.name, "valuesObject": dict(release.values)}
    own_namespace = release.namespace not in BUILTIN_NAMESPACES
    return _application(
        stack,
        name=f"{stack.metadata.name}-{release.name}",
        wave=release.wave,
        source=source,
        namespace=release.namespace,
        # The release's namespace is the Application's: created by it with the Pod Security labels
        # before the chart's privileged pods (managedNamespaceMetadata), and never pruned with it.
        # Built-in namespaces (kube-system) are left as the cluster has them.
        sync_options=["CreateNamespace=true", *CHILD_SYNC_OPTIONS] if own_namespace else list(CHILD_SYNC_OPTIONS),
        namespace_labels=pod_security.namespace_labels(levels[release.namespace]) if own_namespace else None,
    )


def manifests_application(stack: GpuStack, *, wave: int) -> dict[str, Any]:
    return _application(
        stack,
        name=f"{stack.metadata.name}-manifests",
        wave=wave,
        source=_rendered_source(stack, "manifests"),
        namespace="default",
        sync_options=list(CHILD_SYNC_OPTIONS),
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


def build(chart: Any, ctx: RenderContext) -> Contribution:
    """No objects: the README notes of the delivery."""
    stack = ctx.stack
    notes = []
    if k3s_enabled(stack):
        notes.append(
            f"K3s: `sudo sh cluster/k3s-auto-deploy.sh` on a server node copies the releases' namespaces, "
            f"`k3s/*.yaml` and `manifests/*.yaml` into {K3S_MANIFESTS}; K3s applies them and keeps them "
            "applied, its helm-controller installs each chart, and what needs another's CRDs is retried until "
            "they exist. Deleting a file there does not uninstall anything."
        )
    if stack.spec.gitops.argocd.enabled:
        notes.append(
            f"Argo CD: commit this folder to {stack.spec.gitops.argocd.repoURL} at `{stack_path(stack)}` "
            f"(revision `{stack.spec.gitops.argocd.targetRevision}`: `gitops.argocd.targetRevision`; pin a tag or "
            "commit in production), then `kubectl apply -f argocd/root.yaml` once"
            + (
                f" (AppProject `{project_name(stack)}` first: its Applications may sync only from the stack's "
                "repositories into the namespaces it uses)"
                if stack.spec.gitops.argocd.project is None
                else ""
            )
            + ": it syncs `argocd/apps`, one Application per chart with "
            "its values inline, and one for `manifests/`. Each chart's Application creates its namespace with "
            "its Pod Security labels (`enforce: privileged` where a node agent runs, else `baseline`; "
            "managedNamespaceMetadata); deleting the manifests "
            "Application leaves them and the charts in place."
        )
        notes.append(_deletion_note(stack))
        notes.append(
            "Sync waves order the first apply (NFD and kube-prometheus-stack with its CRDs first, the device "
            "plugins and exporter next, `manifests/` last), but Argo CD does not wait for a wave's Applications "
            "to be healthy unless its `argocd-cm` has a health check for Applications. gpustack does not rely "
            "on it (that ConfigMap belongs to your Argo CD installation): every Application retries failed "
            "syncs with backoff (10 attempts, 30 s doubling up to 5 min) and skips the dry run of custom "
            "resources whose CRD another Application has not installed yet, so the stack converges on an empty "
            "cluster without a manual sync."
        )
        notes.append(
            "Argo CD syncs this committed folder with what it does natively (each chart from its repository "
            "with its values inline, `manifests/` as a folder): there is no config management plugin to run "
            "`gpustack render` inside Argo CD, since that needs a repo-server sidecar image with gpustack and "
            "Node.js that no one publishes. Re-render and commit to change the stack."
        )
    return Contribution(notes=notes)


def _deletion_note(stack: GpuStack) -> str:
    argocd = stack.spec.gitops.argocd
    pruned = (
        "automated syncs delete what is removed from Git (`gitops.argocd.prune`)"
        if argocd.prune
        else "automated syncs never delete: an object removed from Git stays and its Application shows OutOfSync "
        "until you delete the object (`gitops.argocd.prune: true` changes this)"
    )
    healed = "revert changes made in the cluster" if argocd.selfHeal else "leave changes made in the cluster"
    cascade = (
        "deleting a child Application, or the root pruning one, deletes the charts and objects it deployed "
        "(`gitops.argocd.cascadeDelete`)"
        if argocd.cascadeDelete
        else "no Application has the resources finalizer, so deleting the root or any child Application leaves "
        "the GPU stack running (`gitops.argocd.cascadeDelete: true` makes deleting a child delete what it deployed)"
    )
    return f"What Argo CD deletes: {pruned}; they {healed}; {cascade}."


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
    namespace_labels: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    argocd = stack.spec.gitops.argocd
    metadata: dict[str, Any] = {"name": name, "namespace": argocd.namespace}
    if wave is not None:
        metadata["annotations"] = {SYNC_WAVE: str(wave)}
    if cascade and argocd.cascadeDelete:
        metadata["finalizers"] = [FINALIZER]
    sync_policy: dict[str, Any] = {"automated": {"prune": argocd.prune, "selfHeal": argocd.selfHeal}}
    if sync_options:
        sync_policy["syncOptions"] = sync_options
    if namespace_labels:
        sync_policy["managedNamespaceMetadata"] = {"labels": dict(namespace_labels)}
    sync_policy["retry"] = copy.deepcopy(RETRY)
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": metadata,
        "spec": {
            "project": project_name(stack),
            "source": source,
            "destination": {"server": IN_CLUSTER, "namespace": namespace},
            "syncPolicy": sync_policy,
        },
    }

