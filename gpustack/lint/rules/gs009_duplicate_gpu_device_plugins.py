"""GS009: two device plugins that advertise ``nvidia.com/gpu`` on nodes they may share.

Any two providers of the resource count: HAMi's and NVIDIA's, the GPU Operator's (its device
plugin is on by default) and the standalone nvidia-device-plugin chart, two plugin DaemonSets.
On a node running both, each registers ``nvidia.com/gpu`` with the kubelet, whichever
registered last owns the resource and the other's allocations break (HAMi FAQ, HAMi#646;
HAMi#829: uninstall NVIDIA's plugin; the GPU Operator's prerequisites: no device
plugin pre-installed). Two may live side by side only on separate nodes (HAMi#2076): the
rule stays quiet when two placements cannot meet (``placement.py``: contradictory required
node labels, or, with a spec, no pool both reach), for one deployment written twice (the
same release or object in two overlays or clusters of a repository), and for releases the set
puts on two clusters (Argo CD destinations, Flux ``kubeConfig``s) or declares as dependencies of
two umbrella charts that bundle the same other charts too (one per cloud, say: installed together
they would install those twice, so they are alternatives). A DaemonSet named as the GPU Operator's own
device plugin DaemonSet, in the operator's namespace, beside the operator is a copy or patch of the
operator's, not a second plugin. Releases that helm commands in guides and scripts declare are not
paired (a guide's commands are often alternatives); beside Bottlerocket's nodes they count.

Two releases of the GPU Operator (HelmRelease, Application, K3s HelmChart, Fleet bundle) under
other names or namespaces, to one cluster, are reported whatever their device plugin setting:
both operators reconcile the one ClusterPolicy and the GPU nodes' operands, and each chart
renders the cluster-scoped ClusterPolicy ``cluster-policy`` (unless ``clusterPolicy.deployCR:
false``, https://github.com/NVIDIA/gpu-operator/blob/main/deployments/gpu-operator/templates/clusterpolicy.yaml),
which Helm installs for the first release and refuses for the second (it belongs to another
release). Their device plugins are then one finding, not a second.

Bottlerocket's NVIDIA variants run NVIDIA's device plugin on the host themselves
(https://github.com/bottlerocket-os/bottlerocket/blob/develop/QUICKSTART-EKS.md: the
``aws-k8s-*-nvidia`` variants include the NVIDIA Kubernetes device plugin); a device plugin the
set deploys beside a GPU NodePool on Bottlerocket (``facts/hostdriver``) is a second one on
those nodes. A warning: the plugin may be kept off them by a selector the set does not show.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from gpustack.lint.context import LintContext
from gpustack.lint.facts import deviceplugins, hostdriver, placement
from gpustack.lint.facts.operatorreleases import cluster_of, operator_releases
from gpustack.lint.facts.pools import ClusterFacts
from gpustack.lint.model import Hit, Severity
from gpustack.lint.registry import Rule
from gpustack.lint.releases import deployed
from gpustack.lint.releases.commands import command_of
from gpustack.lint.releases.helmchart import chart_dependencies, is_chart_metadata

OPERATOR_LABEL = placement.OPERATOR_DEVICE_PLUGIN_LABEL
# The DaemonSet the GPU Operator runs its device plugin as
# (https://github.com/NVIDIA/gpu-operator/blob/main/assets/state-device-plugin/0500_daemonset.yaml):
# one of that name in the operator's namespace (the install guide's, OpenShift's) beside the
# operator is a copy or patch of the operator's own, not a second plugin. NVIDIA's static
# manifest names its DaemonSet so too, in kube-system.
OPERATOR_PLUGIN_DAEMONSET = "nvidia-device-plugin-daemonset"
OPERATOR_NAMESPACES = frozenset({"gpu-operator", "nvidia-gpu-operator"})


def check(ctx: LintContext) -> Iterator[Hit]:
    left_out = deployed.left_out(ctx)
    yield from _second_operators(ctx, left_out)
    plugins = deviceplugins.set_plugins(ctx)
    plugins = [plugin for plugin in plugins if plugin.resource.file not in left_out]
    yield from _beside_bottlerocket(plugins, ctx)
    # A guide's or script's helm commands are often alternatives (one per platform, a second
    # way to install): they are not paired.
    plugins = [plugin for plugin in plugins if plugin.release is None or command_of(plugin.release) is None]
    # Each pair once, on the plugin whose file sorts first (the message names both): the same
    # finding whichever order the paths were given in, so that baselines keep matching.
    plugins.sort(key=lambda plugin: (plugin.resource.file, plugin.resource.document, plugin.resource.document_path))
    for index, plugin in enumerate(plugins):
        for other in plugins[index + 1 :]:
            if other.deployment == plugin.deployment or _apart(plugin, other) or _operators_own(plugin, other):
                continue
            shared = _shared(plugin, other, ctx.cluster)
            if shared is None:
                continue
            yield Hit(
                plugin.resource,
                plugin.path,
                f"{plugin} and {other} both advertise nvidia.com/gpu{shared}: on a node running both, "
                "the one that registered last owns the resource and the other's allocations break",
                fix=_fix(plugin, other),
            )


def _second_operators(ctx: LintContext, left_out: Mapping[str, str]) -> Iterator[Hit]:
    """Each pair of GPU Operator releases of one cluster, once, on the one whose file sorts first."""
    releases = sorted(
        (operator for operator in operator_releases(ctx)
         if operator.release.resource.file not in left_out and command_of(operator.release) is None),
        key=lambda operator: (operator.release.resource.file, operator.release.resource.document),
    )
    for index, first in enumerate(releases):
        for second in releases[index + 1 :]:
            if first.same_deployment(second) or not first.same_cluster(second):
                continue
            yield Hit(
                first.release.resource,
                first.release.path,
                f"{first} and {second} both install the GPU Operator into one cluster: two operators reconcile the"
                " one ClusterPolicy and every GPU node's operands, and by default each chart renders the"
                " cluster-scoped ClusterPolicy `cluster-policy`, which Helm installs for one release and refuses for"
                " the other",
                fix="Keep one GPU Operator release per cluster: remove the other, or merge its values into the one kept.",
            )


def _beside_bottlerocket(plugins: list[deviceplugins.DevicePlugin], ctx: LintContext) -> Iterator[Hit]:
    classes = hostdriver.bottlerocket_node_classes(ctx)
    if not classes:
        return
    node_class, path = classes[0]
    line, _ = node_class.locate(path)
    for plugin in plugins:
        if plugin.vendor != "nvidia":
            continue
        yield Hit(
            plugin.resource,
            plugin.path,
            f"{plugin} advertises nvidia.com/gpu on GPU nodes that run Bottlerocket ({hostdriver.bottlerocket_subject(node_class)}, "
            f"{node_class.file}:{line}), whose NVIDIA variants run NVIDIA's device plugin on the host: on a node running "
            "both, the one that registered last owns the resource and the other's allocations break (assumed: the "
            "plugin is not kept off those nodes)",
            severity=Severity.WARNING,
            fix="Do not deploy a device plugin for Bottlerocket's NVIDIA nodes (the variant brings its own); keep it "
            "off them with a node selector where other GPU nodes need it.",
        )


def _operators_own(a: deviceplugins.DevicePlugin, b: deviceplugins.DevicePlugin) -> bool:
    """One is the GPU Operator's device plugin, the other a DaemonSet of the name and namespace the
    operator gives its own."""
    return any(
        first.operator and second.resource.kind == "DaemonSet" and second.resource.ref.name == OPERATOR_PLUGIN_DAEMONSET
        and second.resource.ref.namespace in OPERATOR_NAMESPACES
        for first, second in ((a, b), (b, a))
    )


def _apart(a: deviceplugins.DevicePlugin, b: deviceplugins.DevicePlugin) -> bool:
    """Whether the set puts the two on different clusters: releases whose objects name two
    clusters (Argo CD destinations, Flux kubeConfigs), or dependencies of two umbrella charts that
    bundle the same other charts too (one per cloud, say): installed together they would install
    those twice, so they are alternatives."""
    if a.release is None or b.release is None:
        return False
    first, second = cluster_of(a.release), cluster_of(b.release)
    if first is not None and second is not None and first != second:
        return True
    umbrellas = (a.release.resource, b.release.resource)
    if not all(is_chart_metadata(chart) for chart in umbrellas) or umbrellas[0].file == umbrellas[1].file:
        return False
    first_names, second_names = ({entry["name"] for _, entry in chart_dependencies(chart)} for chart in umbrellas)
    return bool((first_names & second_names) - {a.release.chart, b.release.chart})


def _fix(a: deviceplugins.DevicePlugin, b: deviceplugins.DevicePlugin) -> str:
    if "hami" in (a.vendor, b.vendor) and a.vendor != b.vendor:
        return (
            "Keep one per node: with HAMi, remove NVIDIA's device plugin (GPU Operator: "
            "`devicePlugin.enabled: false`), or keep NVIDIA's off HAMi's nodes (node affinity `NotIn` "
            f"on the label HAMi selects; GPU Operator: label them `{OPERATOR_LABEL}=false`)."
        )
    if a.operator or b.operator:
        return (
            "Keep one: set `devicePlugin.enabled: false` in the GPU Operator (ClusterPolicy or chart "
            "values) and keep the standalone plugin, or remove the standalone plugin; to split nodes "
            f"between them, label the standalone plugin's nodes `{OPERATOR_LABEL}=false`."
        )
    return "Keep one device plugin per node: remove one, or give them node selectors that no node satisfies both."


def _shared(a: deviceplugins.DevicePlugin, b: deviceplugins.DevicePlugin, cluster: ClusterFacts | None) -> str | None:
    """None when the two never run on one node; else what the message adds (the pools)."""
    first, second = placement.of_plugin(a), placement.of_plugin(b)
    if first.disjoint(second):
        return None
    if cluster is None:
        return ""
    pools = [p.name for p in cluster.pools if first.reaches(p, cluster) and second.reaches(p, cluster)]
    if not pools:
        return None
    where = f"pool {pools[0]}" if len(pools) == 1 else f"pools {', '.join(pools)}"
    return f" on the nodes of {where} ({cluster.spec_file})"


RULE = Rule("GS009", "set", check)
