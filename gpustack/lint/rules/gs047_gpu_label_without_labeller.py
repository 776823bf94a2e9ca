"""GS047: pods that require a GPU discovery label that nothing in the set puts on nodes.

``nvidia.com/gpu.present`` is set by the GPU Operator; GFD's labels (``nvidia.com/gpu.product``,
``.count``, ``.memory``, …) by GPU Feature Discovery, which the device plugin chart deploys only
with ``gfd.enabled`` and the GPU Operator by default. A set that deploys NVIDIA's device plugin
itself, without the operator, owns the GPU layer: a pod that requires one of those labels there
runs only on nodes someone labelled by hand, and every new GPU node strands it. Hand labels the
set applies (``facts/node_labels.py``: Node objects, K3s, kubelet and Talos node labels,
NodeFeatureRules, node templates) count. With a spec GS026 judges selectors against the pools
instead, so this rule needs none and says nothing under one.

NFD's labels (``feature.node.kubernetes.io/pci-10de.present``, …) count as unset there too
where nothing in the set deploys NFD (the device plugin chart bundles it only with
``nfd.enabled``): its own default affinity then strands it.

A GPU pod's selector on a ``node-role.kubernetes.io/*`` label (other than the servers' roles)
asks for a label kubelets may not give themselves: judged in every set that does not apply it.

A selector on the bare ``nvidia.com/gpu`` (the device plugin's resource name) is a label no
discovery component sets, whatever the set deploys: it is judged in every set.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from gpustack.lint.context import LintContext
from gpustack.lint.facts import clusterpolicy, registered
from gpustack.lint.facts.deviceplugins import set_plugins
from gpustack.lint.facts.images import image_repository
from gpustack.lint.facts.nfd import NFD_LABEL_PREFIX, deploys_nfd
from gpustack.lint.facts.node_labels import set_label_keys
from gpustack.lint.facts.operands import component_releases
from gpustack.lint.facts.podspec import (
    LabelTest,
    command_parts,
    node_label_tests,
    subject,
)
from gpustack.lint.facts.pools import GFD_LABELS, GPU_PRESENT_LABEL
from gpustack.lint.facts.valuepods import placement_pod_specs
from gpustack.lint.model import Hit, PodSpec, get_value
from gpustack.lint.registry import Rule
from gpustack.lint.releases import dispatch

GFD = "gpu-feature-discovery"
_NFD_FIX = (
    "Deploy Node Feature Discovery (the device plugin chart's `nfd.enabled: true`, or NFD's own chart), or "
    "label the GPU nodes in the set (node config or Node objects)."
)
# The device plugin's resource name, which people write as a node label: nothing sets it.
RESOURCE_NAME_LABEL = "nvidia.com/gpu"
# Node roles (https://kubernetes.io/docs/reference/labels-annotations-taints/#node-role-kubernetes-io-control-plane):
# kubeadm, K3s and RKE2 label their servers; no component labels a GPU worker's role.
NODE_ROLE_PREFIX = "node-role.kubernetes.io/"
SERVER_ROLES = frozenset({f"{NODE_ROLE_PREFIX}{role}" for role in ("control-plane", "master", "etcd")})


def check(ctx: LintContext) -> Iterator[Hit]:
    if ctx.cluster is not None:
        return
    unset, nfd_unset = _unset_discovery_labels(ctx)
    unset |= {RESOURCE_NAME_LABEL}
    applied = set_label_keys(ctx)

    def is_unset(key: str) -> bool:
        return key not in applied and (key in unset or (nfd_unset and key.startswith(NFD_LABEL_PREFIX)))

    def is_unset_for_gpu_pods(key: str) -> bool:
        return is_unset(key) or (key not in applied and _node_role(key))

    for name, pod in _selecting_pods(ctx):
        gpu_pod = pod.gpu_consumer or pod.system_component
        judged = is_unset_for_gpu_pods if gpu_pod else is_unset
        if not any(judged(key) for key in _required_keys(pod)):
            continue  # most pods: no label to judge, no tests to build
        missing = _stranding_tests(pod, judged)
        if missing:
            yield _hit(name, pod, missing[0])


def _required_keys(pod: PodSpec) -> Iterator[str]:
    """The label keys the pod's nodeSelector and required affinity name, read from the spec as
    it is (a set rule runs over every pod of the set, cached ones included, on every run)."""
    selector = pod.spec.get("nodeSelector")
    if isinstance(selector, dict):
        yield from (str(key) for key in selector)
    affinity = pod.spec.get("affinity")
    node = affinity.get("nodeAffinity") if isinstance(affinity, dict) else None
    required = node.get("requiredDuringSchedulingIgnoredDuringExecution") if isinstance(node, dict) else None
    terms = required.get("nodeSelectorTerms") if isinstance(required, dict) else None
    for term in terms if isinstance(terms, list) else ():
        expressions = term.get("matchExpressions") if isinstance(term, dict) else None
        for expression in expressions if isinstance(expressions, list) else ():
            if isinstance(expression, dict) and isinstance(expression.get("key"), str):
                yield expression["key"]


def _node_role(key: str) -> bool:
    """A node-role label kubelets may not give themselves (``--node-labels`` refuses the
    kubernetes.io namespace outside its allowed prefixes), other than the roles kubeadm, K3s and
    RKE2 put on their servers."""
    return key.startswith(NODE_ROLE_PREFIX) and key not in SERVER_ROLES


def _unset_discovery_labels(ctx: LintContext) -> tuple[set[str], bool]:
    """GPU discovery labels nothing puts on nodes where the set deploys NVIDIA's device plugin
    itself, without the GPU Operator: ``gpu.present``, GFD's unless GFD runs; and whether NFD's
    (``feature.node.kubernetes.io/*``) are unset too, where nothing in the set deploys NFD."""
    plugins = set_plugins(ctx)
    if not any(p.vendor == "nvidia" for p in plugins) or any(p.operator for p in plugins) or _operator(ctx):
        return set(), False
    return {GPU_PRESENT_LABEL} | (set() if _gfd(ctx) else set(GFD_LABELS)), not deploys_nfd(ctx)


def _hit(name: str, pod: PodSpec, first: LabelTest) -> Hit:
    if _node_role(first.key):
        return Hit(
            pod.resource,
            first.path,
            f"{name} requires the node label {first.key}, which a kubelet may not give its own node (only "
            "kubelet.kubernetes.io/ and node.kubernetes.io/ labels of kubernetes.io's namespace pass --node-labels) "
            "and nothing in the set puts on nodes: it runs only on nodes labelled by hand, and a new GPU node "
            "strands it",
            fix="Select a label the set gives GPU nodes (a GPU discovery label, or one of the node config's labels), "
            "or label the GPU nodes in the set (Node objects, the node config's labels outside kubernetes.io).",
        )
    if first.key == RESOURCE_NAME_LABEL:
        return Hit(
            pod.resource,
            first.path,
            f"{name} requires the node label {first.key}, the device plugin's resource name, which no GPU discovery "
            "component puts on nodes (NFD, GFD and the GPU Operator set nvidia.com/gpu.present, .product, .count) "
            "and nothing in the set does: it runs only on nodes labelled by hand, and a new GPU node strands it",
            fix="Drop the selector (the nvidia.com/gpu request already keeps the pod on GPU nodes), select a label "
            "GPU discovery makes (NFD's feature.node.kubernetes.io/pci-10de.present, or nvidia.com/gpu.present under "
            "the GPU Operator), or label the GPU nodes in the set (node config or Node objects).",
        )
    labeller = (
        "the GPU Operator" if first.key == GPU_PRESENT_LABEL
        else "Node Feature Discovery" if first.key.startswith(NFD_LABEL_PREFIX)
        else "GPU Feature Discovery"
    )
    return Hit(
        pod.resource,
        first.path,
        f"{name} requires the node label {first.key}, but nothing in the set puts it on nodes ({labeller} "
        "sets it, and the set deploys NVIDIA's device plugin without it): it runs only on nodes labelled "
        "by hand, and a new GPU node strands it",
        fix=_NFD_FIX if labeller == "Node Feature Discovery" else
        f"Select a label the set's discovery makes (NFD's feature.node.kubernetes.io/pci-10de.present), "
        f"deploy {labeller}, or label the GPU nodes in the set (node config or Node objects).",
    )


def _stranding_tests(pod: PodSpec, is_unset: Callable[[str], bool]) -> list[LabelTest]:
    """The required tests on unset labels that keep the pod off every node: a nodeSelector
    entry, or one in each of the required affinity's terms (terms are OR'd)."""
    required = [t for t in node_label_tests(pod) if t.required]
    selector = [t for t in required if t.term is None and t.selects and is_unset(t.key)]
    if selector:
        return selector
    terms: dict[int, list[LabelTest]] = {}
    for test in required:
        if test.term is not None:
            terms.setdefault(test.term, [])
            if test.selects and is_unset(test.key):
                terms[test.term].append(test)
    if terms and all(terms.values()):
        return [tests[0] for tests in terms.values()]
    return []


def _selecting_pods(ctx: LintContext) -> Iterator[tuple[str, PodSpec]]:
    for pod in ctx.pod_specs:
        yield subject(pod), pod
    for release in dispatch.releases(ctx):
        for pod in placement_pod_specs(release):
            yield str(release), pod


def _operator(ctx: LintContext) -> bool:
    operator = registered.chart_of_role("gpu-operator")
    return bool(clusterpolicy.cluster_policies(ctx)) or any(r.chart == operator for r in dispatch.releases(ctx))


def _gfd(ctx: LintContext) -> bool:
    """Whether the set deploys GFD: a device plugin release with ``gfd.enabled``, or a GFD container."""
    bundlers = registered.component_values(GFD, GFD)
    for release, prefix in component_releases(ctx, bundlers, "gfd"):
        if get_value(release.values, *prefix, "enabled") is True:
            return True
    return any(_runs_gfd(pod) for pod in ctx.pod_specs)


def _runs_gfd(pod: PodSpec) -> bool:
    for container in pod.containers():
        if image_repository(container.image).endswith(GFD):
            return True
        if any(text.rsplit("/", 1)[-1] == GFD for _, text in command_parts(container)):
            return True
    return False


RULE = Rule("GS047", "set", check)
