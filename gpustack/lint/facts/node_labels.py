"""Node labels that the set itself puts on nodes, outside any discovery component.

What a repository says about its nodes' labels, read from:

- ``Node`` objects (``metadata.labels``);
- a K3s or RKE2 ``config.yaml`` (``node-label``: ``key=value`` items,
  https://docs.k3s.io/cli/agent#node-labels-and-taints);
- the kubelet's ``--node-labels``: kubeadm ``InitConfiguration``/``JoinConfiguration``
  ``nodeRegistration.kubeletExtraArgs`` (a map, or v1beta4's ``{name, value}`` list), a Talos
  machine config's ``machine.kubelet.extraArgs``;
- a Talos machine config or patch (``machine.nodeLabels``), talhelper's ``talconfig.yaml``
  (``nodeLabels`` per node and under ``controlPlane``/``worker``, and its inline patches) and
  an Omni cluster template's inline patches
  (https://www.talos.dev/latest/reference/configuration/v1alpha1/config/);
- NFD ``NodeFeatureRule`` objects (``spec.rules[].labels``), which NFD's master applies
  (https://kubernetes-sigs.github.io/node-feature-discovery/stable/usage/custom-resources.html);
- node templates of node provisioners: Karpenter ``NodePool`` (``spec.template.metadata.labels``)
  and its v1alpha5 ``Provisioner`` (``spec.labels``, https://karpenter.sh/v0.32/concepts/provisioners/),
  and OpenShift ``MachineSet`` (``spec.template.spec.metadata.labels``).

A rule asks whether anything labels nodes with a key at all (``set_label_keys``), or what the
values name (``set_label_values``: a GPU model such as ``gpu-class: rtx-3090``).
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
    "Provisioner": ("spec", "labels"),  # karpenter.sh/v1alpha5, NodePool's predecessor
}


def set_label_keys(ctx: LintContext) -> frozenset[str]:
    """Every node label key the set's node configs and objects apply."""
    return frozenset(key for key, _ in _set_labels(ctx))


def set_label_values(ctx: LintContext) -> frozenset[str]:
    """Every node label value the set's node configs and objects apply."""
    return frozenset(value for _, value in _set_labels(ctx) if value)


def _set_labels(ctx: LintContext) -> frozenset[tuple[str, str]]:
    return ctx.memo(("node_labels",), lambda: frozenset(label for r in ctx.resources for label in _labels(r)))


def _labels(resource: Resource) -> Iterator[tuple[str, str]]:
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
    elif talos.is_omni_template(resource):
        for _, patch in talos.machine_configs(resource):
            yield from _machine_labels(patch)


def _machine_labels(config: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """A Talos machine config's ``machine.nodeLabels`` and the kubelet's ``--node-labels``."""
    yield from _keys(get_value(config, "machine", "nodeLabels"))
    yield from _kubelet_flag(get_value(config, "machine", "kubelet", "extraArgs"))


def _keys(labels: Any) -> Iterator[tuple[str, str]]:
    if isinstance(labels, Mapping):
        yield from ((str(key), "" if value is None else str(value)) for key, value in labels.items())


def _kubelet_flag(args: Any) -> Iterator[tuple[str, str]]:
    """``node-labels`` of kubelet extra arguments: a map, or a list of ``{name, value}``."""
    if isinstance(args, list):
        args = {item.get("name"): item.get("value") for item in args if isinstance(item, Mapping)}
    if isinstance(args, Mapping):
        yield from _assignments(str(args.get("node-labels") or "").split(","))


def _assignments(items: Any) -> Iterator[tuple[str, str]]:
    """``key=value`` strings (one, or a list) → (key, value)."""
    for item in [items] if isinstance(items, str) else items if isinstance(items, list) else ():
        key, _, value = str(item).partition("=")
        if key.strip():
            yield key.strip(), value.strip()
