"""GS057: NetworkPolicies in a set whose pod network is Flannel, with no policy engine beside it.

The API server stores a NetworkPolicy whatever the CNI; only a network plugin that implements
the API enforces it (https://kubernetes.io/docs/concepts/services-networking/network-policies/#prerequisites).
Flannel does not (https://github.com/flannel-io/flannel#networking-details: "Flannel is focused on
networking. For network policy, other projects such as Calico can be used."). The evidence that
the set's pod network is Flannel:

- a pod of Flannel's image (its kube-flannel DaemonSet), a ``flannel`` chart release, or Flannel's
  release manifest among a kustomization's remote resources;
- a Talos machine config or patch with ``cluster.network.cni.name: flannel``, or a whole control
  plane config (``version: v1alpha1``, ``machine.type`` controlplane or init) that names no CNI:
  Talos then deploys its default, Flannel
  (https://www.talos.dev/v1.13/reference/configuration/v1alpha1/config/#Config.cluster.network.cni);
- a K3s config with ``disable-network-policy: true`` (and Flannel not switched off): K3s' embedded
  policy controller, which enforces them beside Flannel, is off
  (https://docs.k3s.io/networking/networking-services#network-policy-controller).

Quiet where the set deploys a policy engine (Cilium, Calico or Canal, kube-router, Antrea, Weave's
policy controller, kube-network-policies: their images, charts, manifests or Talos custom CNI
URLs). A warning, never an error: an engine installed outside the set would enforce them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from gpustack.lint.context import LintContext
from gpustack.lint.facts import talos
from gpustack.lint.model import Hit, Path, Resource, get_value
from gpustack.lint.registry import Rule
from gpustack.lint.releases import deployed, dispatch
from gpustack.lint.releases.kustomize import is_kustomization

FLANNEL = re.compile(r"(?:^|/)(?:flannel|flannel-io)/flannel\b|mirrored-flannelcni-flannel\b|kube-flannel\.ya?ml")
ENGINES = re.compile(
    r"(?:^|/)cilium/cilium\b|(?:^|/)calico/node\b|tigera[/-]operator|(?:^|/)calico\.ya?ml|canal\.ya?ml|"
    r"cloudnativelabs/kube-router|kuberouter|kube-network-policies|antrea|weaveworks/weave-npc"
)
FLANNEL_CHARTS = frozenset({"flannel"})
ENGINE_CHARTS = frozenset({"cilium", "tigera-operator", "calico", "kube-router", "antrea", "kube-network-policies"})
CNI_NAME = ("cluster", "network", "cni", "name")
CONTROL_PLANE_TYPES = frozenset({"controlplane", "init"})


def _images(ctx: LintContext, left_out: Any) -> Iterator[tuple[Resource, Path, str]]:
    for pod in ctx.pod_specs:
        if pod.resource.file not in left_out:
            yield from ((pod.resource, (*c.path, "image"), c.image) for c in pod.containers())


def _remote(ctx: LintContext) -> Iterator[tuple[Resource, Path, str]]:
    for resource in ctx.resources:
        listed = resource.data.get("resources") if is_kustomization(resource) else None
        for index, entry in enumerate(listed if isinstance(listed, list) else ()):
            if isinstance(entry, str) and "://" in entry:
                yield resource, ("resources", index), entry


def _talos(ctx: LintContext) -> Iterator[tuple[Resource, Path, str | None, str]]:
    """Talos documents' CNI: (document, path, ``flannel`` or None for another, the evidence's words)."""
    for resource in ctx.resources:
        for at, config in talos.machine_configs(resource):
            name = get_value(config, *CNI_NAME)
            if name == "flannel":
                yield resource, (*at, *CNI_NAME), "flannel", "Talos's cluster.network.cni.name: flannel"
            elif name == "custom":
                urls = get_value(config, "cluster", "network", "cni", "urls")
                yield resource, (*at, *CNI_NAME[:-1]), None, " ".join(map(str, urls if isinstance(urls, list) else ()))
            elif name is None and config.get("version") == "v1alpha1" and get_value(config, "machine", "type") in CONTROL_PLANE_TYPES:
                yield resource, (*at, "cluster"), "flannel", "Talos's default CNI, Flannel: the config names none"


def _k3s_without_policy_controller(ctx: LintContext) -> Iterator[tuple[Resource, Path, str]]:
    for resource in ctx.resources:
        data = resource.data
        if resource.kind is None and data.get("disable-network-policy") is True and data.get("flannel-backend") != "none":
            yield resource, ("disable-network-policy",), "K3s' Flannel with its network policy controller disabled"


def _evidence(ctx: LintContext, left_out: Any) -> list[tuple[Resource, Path, str]] | None:
    """Where the set shows Flannel as its pod network; None where it deploys a policy engine."""
    named = [*_images(ctx, left_out), *_remote(ctx)]
    configs = list(_talos(ctx))
    releases = [r for r in dispatch.releases(ctx) if r.resource.file not in left_out]
    texts = [what for _, _, what in named] + [what for _, _, cni, what in configs if cni is None]
    if any(ENGINES.search(text) for text in texts) or any(r.chart in ENGINE_CHARTS for r in releases):
        return None
    found = [(resource, path, f"image {what}" if what and "://" not in what else f"manifest {what}")
             for resource, path, what in named if FLANNEL.search(what)]
    found += [(resource, path, what) for resource, path, cni, what in configs if cni == "flannel"]
    found += [(r.resource, r.path, str(r)) for r in releases if r.chart in FLANNEL_CHARTS]
    found += list(_k3s_without_policy_controller(ctx))
    return found


def check(ctx: LintContext) -> Iterator[Hit]:
    left_out = deployed.left_out(ctx)
    policies = [r for r in ctx.of_kind("NetworkPolicy") if r.file not in left_out]
    found = _evidence(ctx, left_out) if policies else None
    if not found:
        return
    names = ", ".join(str(r.ref) for r in policies[:3]) + (f" and {len(policies) - 3} more" if len(policies) > 3 else "")
    seen: set[int] = set()
    for resource, path, what in found:
        if id(resource) in seen:  # one finding per object (a DaemonSet's Flannel containers)
            continue
        seen.add(id(resource))
        yield Hit(
            resource,
            path,
            f"the set's pod network is Flannel ({what}), which does not implement NetworkPolicy, and the set deploys "
            f"no policy engine: {names} {'is' if len(policies) == 1 else 'are'} accepted by the API server and "
            "enforced by nothing",
            fix="Use a CNI that enforces NetworkPolicy (Cilium, Calico; on Talos `cluster.network.cni.name: none` and "
            "install it), or run a policy engine beside Flannel (kube-network-policies); on K3s keep its network policy "
            "controller.",
        )


RULE = Rule("GS057", "set", check, frozenset({"NetworkPolicy"}))
