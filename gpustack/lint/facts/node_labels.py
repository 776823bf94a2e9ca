"""Node labels that the set itself puts on nodes, outside any discovery component.

What a repository says about its nodes' labels, read from:

- ``Node`` objects (``metadata.labels``);
- a K3s or RKE2 ``config.yaml`` (``node-label``: ``key=value`` items,
  https://docs.k3s.io/cli/agent#node-labels-and-taints);
- the kubelet's ``--node-labels``: kubeadm ``InitConfiguration``/``JoinConfiguration``
  ``nodeRegistration.kubeletExtraArgs`` (a map, or v1beta4's ``{name, value}`` list), a Talos
  machine config's ``machine.kubelet.extraArgs``;
- a Talos machine config or patch (``machine.nodeLabels``), and talhelper's ``talconfig.yaml``
  (``nodeLabels`` per node and under ``controlPlane``/``worker``, and its inline patches)
  (https://www.talos.dev/latest/reference/configuration/v1alpha1/config/);
- NFD ``NodeFeatureRule`` objects (``spec.rules[].labels``), which NFD's master applies
  (https://kubernetes-sigs.github.io/node-feature-discovery/stable/usage/custom-resources.html);
- node templates of node provisioners: Karpenter ``NodePool`` (``spec.template.metadata.labels``)
  and OpenShift ``MachineSet`` (``spec.template.spec.metadata.labels``).

Only label keys count: a rule asks whether anything labels nodes with a key at all.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from gpustack.lint.facts import talos
from gpustack.lint.model import Resource, get_value

if TYPE_CHECKING:
    from gpustack.lint.context import LintContext

_K3S_KEYS = ("node-label", "node-label+")
_TEMPLATE_LABELS = {
    "NodePool": ("spec", "template", "metadata", "labels"),  # karpenter.sh
    "MachineSet": ("spec", "template", "spec", "metadata", "labels"),  # machine.openshift.io
}


def set_label_keys(ctx: LintContext) -> frozenset[str]:
    """Every node label key the set's node configs and objects apply."""
    return ctx.memo(("node_labels",), lambda: frozenset(key for r in ctx.resources for key in _label_keys(r)))


def _label_keys(resource: Resource) -> Iterator[str]:
    data = resource.data
    if resource.kind == "Node":
        yield from _keys(resource.get(("metadata", "labels")))
    elif resource.kind == "NodeFeatureRule":
        rules = resource.get(("spec", "rules"))
        for rule in rules if isinstance(rules, list) else ():
            yield from _keys(rule.get("labels") if isinstance(rule, Mapping) else None)
    elif resource.kind in _TEMPLATE_LABELS:
        yield from _keys(resource.get(_TEMPLATE_LABELS[resource.kind]))
    elif resource.kind in ("InitConfiguration", "JoinConfiguration"):
        yield from _kubelet_flag(resource.get(("nodeRegistration", "kubeletExtraArgs")))
    elif resource.kind is None:
        for key in _K3S_KEYS:
            yield from _assignments(data.get(key))
        if talos.is_talconfig(resource):
            for group in (data, data.get("controlPlane"), data.get("worker"), *data["nodes"]):
                yield from _keys(group.get("nodeLabels") if isinstance(group, Mapping) else None)
            for _, patch in talos.talconfig_patches(resource):
                yield from _machine_labels(patch)
        elif talos.is_machine_config(resource):
            yield from _machine_labels(data)


def _machine_labels(config: Mapping[str, Any]) -> Iterator[str]:
    """A Talos machine config's ``machine.nodeLabels`` and the kubelet's ``--node-labels``."""
    yield from _keys(get_value(config, "machine", "nodeLabels"))
    yield from _kubelet_flag(get_value(config, "machine", "kubelet", "extraArgs"))


def _keys(labels: Any) -> Iterator[str]:
    if isinstance(labels, Mapping):
        yield from (str(key) for key in labels)


def _kubelet_flag(args: Any) -> Iterator[str]:
    """``node-labels`` of kubelet extra arguments: a map, or a list of ``{name, value}``."""
    if isinstance(args, list):
        args = {item.get("name"): item.get("value") for item in args if isinstance(item, Mapping)}
    if isinstance(args, Mapping):
        yield from _assignments(str(args.get("node-labels") or "").split(","))


def _assignments(items: Any) -> Iterator[str]:
    """``key=value`` strings (one, or a list) → keys."""
    for item in [items] if isinstance(items, str) else items if isinstance(items, list) else ():
        key = str(item).partition("=")[0].strip()
        if key:
            yield key
