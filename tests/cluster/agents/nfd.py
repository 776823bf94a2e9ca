"""Node Feature Discovery: PCI labels named as the running worker's config says, the local
source's feature files (GFD's labels), and the stack's NodeFeatureRules, applied by nfd-master.

- The worker reads ``nfd-worker.conf`` from the ConfigMap mounted at
  ``/etc/kubernetes/node-feature-discovery``; ``sources.pci.deviceClassWhitelist`` defaults to
  ``["03", "0b40", "12"]`` (a two-digit class takes every subclass) and ``deviceLabelFields`` to
  ``["class", "vendor"]``, joined with ``_`` into ``feature.node.kubernetes.io/pci-<fields>.present``
  (https://github.com/kubernetes-sigs/node-feature-discovery/blob/v0.19.0/source/pci/pci.go,
  docs/reference/worker-configuration-reference.md).
- The local source turns ``features.d`` files into labels
  (https://kubernetes-sigs.github.io/node-feature-discovery/v0.19/usage/customization-guide.html#feature-files).
- Only nfd-master writes labels, from the NodeFeature object of a worker on the node; it denies
  the ``kubernetes.io`` and ``k8s.io`` namespaces (and their subdomains) but its own
  ``feature.node.kubernetes.io`` and ``profile.node.kubernetes.io``
  (pkg/nfd-master/nfd-master.go, ``filterFeatureLabels``; ``denyLabelNs``).
- NodeFeatureRules: ``matchFeatures`` on ``pci.device`` with ``In``, ``NotIn``, ``Exists`` and
  ``DoesNotExist``; every ``matchFeatures`` entry must hold, any device may satisfy it
  (https://kubernetes-sigs.github.io/node-feature-discovery/v0.19/usage/customization-guide.html#nodefeaturerule-custom-resource).
"""

from __future__ import annotations

from typing import Any

import yaml

from tests.cluster.agents.world import Published, World, image_has

IMAGE = "nfd/node-feature-discovery"
PREFIX = "feature.node.kubernetes.io/"
DEFAULT_CLASSES = ["03", "0b40", "12"]
DEFAULT_FIELDS = ["class", "vendor"]
CONFIG_FOLDER = "/etc/kubernetes/node-feature-discovery"
OWN_NAMESPACES = ("feature.node.kubernetes.io", "profile.node.kubernetes.io")


def _is(role: str):  # noqa: ANN202 - a pod predicate
    return lambda pod: image_has(pod, IMAGE, command=role)


def publish(world: World, out: Published) -> None:
    masters = world.running(_is("nfd-master"), anywhere=True)
    workers = world.running(_is("nfd-worker"))
    if not masters or not workers:
        return
    worker_config = _config(world, workers[0])
    pci = worker_config.get("sources", {}).get("pci", {})
    labels = pci_labels(world.node.machine.pci, pci.get("deviceClassWhitelist") or DEFAULT_CLASSES,
                        pci.get("deviceLabelFields") or DEFAULT_FIELDS)
    for text in world.memory.features_d.values():
        labels |= dict(line.split("=", 1) for line in text.splitlines() if "=" in line and not line.startswith("#"))
    for rule in world.objects.get("NodeFeatureRule", []):
        labels |= rule_labels(rule, world.node.machine.pci)
    out.labels |= {key: value for key, value in labels.items() if _allowed(key)}


def _config(world: World, pod: dict[str, Any]) -> dict[str, Any]:
    """The worker's ``nfd-worker.conf``, from the ConfigMap mounted at its config folder."""
    text = next(iter(world.mounted(pod, CONFIG_FOLDER).values()), "") or ""
    return yaml.safe_load(text) or {}


def _allowed(key: str) -> bool:
    namespace = key.split("/", 1)[0] if "/" in key else "feature.node.kubernetes.io"
    if namespace in OWN_NAMESPACES or namespace.endswith((".feature.node.kubernetes.io", ".profile.node.kubernetes.io")):
        return True
    return not any(namespace == d or namespace.endswith("." + d) for d in ("kubernetes.io", "k8s.io"))


def pci_labels(devices: list[dict[str, str]], classes: list[str], fields: list[str]) -> dict[str, str]:
    labels = {}
    for device in devices:
        if any(device["class"].startswith(c) for c in classes):
            labels[f"{PREFIX}pci-{'_'.join(device[f] for f in fields)}.present"] = "true"
    return labels


def _holds(expression: dict[str, Any], value: str | None) -> bool:
    operator, values = expression.get("op"), [str(v) for v in expression.get("value") or []]
    return {"In": value in values, "NotIn": value is not None and value not in values,
            "Exists": value is not None, "DoesNotExist": value is None}.get(operator, False)


def rule_labels(rule: dict[str, Any], devices: list[dict[str, str]]) -> dict[str, str]:
    """The labels of the rules of a NodeFeatureRule whose ``matchFeatures`` hold for the node's
    PCI devices; a rule on any other feature does not match (no other feature is modelled)."""
    labels: dict[str, str] = {}
    for entry in rule.get("spec", {}).get("rules", []):
        terms = entry.get("matchFeatures") or []
        if terms and all(term.get("feature") == "pci.device" and any(
                all(_holds(e, device.get(k)) for k, e in (term.get("matchExpressions") or {}).items())
                for device in devices) for term in terms):
            labels |= {k if "/" in k else PREFIX + k: str(v) for k, v in (entry.get("labels") or {}).items()}
    return labels
