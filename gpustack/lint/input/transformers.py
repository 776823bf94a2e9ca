"""kustomize's simple transformers that change what the rules judge: ``namespace``,
``namePrefix``/``nameSuffix`` (the object's own name), ``commonLabels``/``labels``,
``commonAnnotations``, ``replicas`` and ``images``
(https://kubectl.docs.kubernetes.io/references/kustomize/kustomization/).

Each takes the kustomization's field and the objects being built, and changes them in place,
recording in ``Provenance`` that the kustomization's field wrote the value: a finding on an
image tag that ``images:`` set points at that entry. Out of scope: rewriting references to
renamed objects (kustomize's name reference transformer) and the field specs a
``configurations:`` file adds.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from gpustack.lint.input.provenance import Place, Provenance
from gpustack.lint.model import Path

if TYPE_CHECKING:
    from gpustack.lint.input.overlays import Built

# Kinds without a namespace (Kubernetes' cluster-scoped kinds): ``namespace:`` leaves them be.
# A custom resource's scope is its CRD's, which kustomize does not know: it sets the namespace.
CLUSTER_SCOPED = frozenset({
    "Namespace", "Node", "PersistentVolume", "ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition",
    "StorageClass", "PriorityClass", "RuntimeClass", "CSIDriver", "CSINode", "VolumeAttachment", "IngressClass",
    "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration", "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding", "APIService", "DeviceClass", "CertificateSigningRequest",
})
# Where a workload kind keeps its selector and pod template labels (``commonLabels``).
SELECTOR_KINDS = frozenset({"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"})
TEMPLATE_KINDS = SELECTOR_KINDS | {"Job", "ReplicationController"}
REPLICA_KINDS = frozenset({"Deployment", "StatefulSet", "ReplicaSet", "ReplicationController"})
_IMAGE = re.compile(r"^(?P<name>[^@]*?)(?::(?P<tag>[^:/@]+))?(?:@(?P<digest>.+))?$")


def namespace(objects: list[Built], value: str, place: Place, provenance: Provenance) -> None:
    for built in objects:
        if built.data.get("kind") in CLUSTER_SCOPED:
            continue
        metadata = _mapping(built.data, "metadata", provenance, place)
        metadata["namespace"] = value
        provenance.wrote(metadata, "namespace", place)
        if built.data.get("kind") in ("RoleBinding", "ClusterRoleBinding"):
            for subject in built.data.get("subjects") or ():
                if isinstance(subject, dict) and subject.get("kind") == "ServiceAccount" and subject.get("namespace") in (None, "default"):
                    subject["namespace"] = value
                    provenance.wrote(subject, "namespace", place)


def affix(objects: list[Built], prefix: str, suffix: str, place: Place, provenance: Provenance) -> None:
    """``namePrefix``/``nameSuffix`` on each object's own name (not on references to it)."""
    for built in objects:
        metadata = built.data.get("metadata")
        if built.data.get("kind") in ("Namespace", "CustomResourceDefinition") or not isinstance(metadata, dict):
            continue
        if isinstance(metadata.get("name"), str):
            metadata["name"] = f"{prefix}{metadata['name']}{suffix}"
            provenance.wrote(metadata, "name", place)


def labels(objects: list[Built], values: Mapping[str, Any], place: Place, provenance: Provenance, *,
           selectors: bool, templates: bool) -> None:
    """Labels on every object; with ``selectors`` (``commonLabels``, ``includeSelectors``)
    also on workload selectors and pod templates, with ``templates`` on pod templates."""
    text = {str(key): str(value) for key, value in values.items()}
    for built in objects:
        paths: list[Path] = [("metadata", "labels")]
        kind = built.data.get("kind")
        if selectors and kind in SELECTOR_KINDS:
            paths.append(("spec", "selector", "matchLabels"))
        if selectors and kind == "Service":
            paths.append(("spec", "selector"))
        if (selectors or templates) and kind in TEMPLATE_KINDS:
            paths.append(("spec", "template", "metadata", "labels"))
        if (selectors or templates) and kind == "CronJob":
            paths.append(("spec", "jobTemplate", "spec", "template", "metadata", "labels"))
        for path in paths:
            _set_all(built.data, path, text, place, provenance)


def annotations(objects: list[Built], values: Mapping[str, Any], place: Place, provenance: Provenance) -> None:
    text = {str(key): str(value) for key, value in values.items()}
    for built in objects:
        _set_all(built.data, ("metadata", "annotations"), text, place, provenance)
        if built.data.get("kind") in TEMPLATE_KINDS:
            _set_all(built.data, ("spec", "template", "metadata", "annotations"), text, place, provenance)


def replicas(objects: list[Built], entries: list[Any], place: Place, provenance: Provenance) -> None:
    for index, entry in enumerate(entries):
        if not isinstance(entry, Mapping) or "count" not in entry:
            continue
        where = (place[0], (*place[1], index, "count"))
        for built in objects:
            if built.data.get("kind") in REPLICA_KINDS and entry.get("name") in built.names:
                spec = _mapping(built.data, "spec", provenance, where)
                spec["replicas"] = entry["count"]
                provenance.wrote(spec, "replicas", where)


def images(objects: list[Built], entries: list[Any], place: Place, provenance: Provenance) -> None:
    """``images:``: each container image whose name is an entry's ``name`` gets its
    ``newName``, ``newTag`` and ``digest``, in every object's ``containers`` and
    ``initContainers`` lists, wherever they are."""
    for index, entry in enumerate(entries):
        if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str):
            continue
        where = (place[0], (*place[1], index))
        for built in objects:
            for container in _containers(built.data):
                image = container.get("image")
                new = _image(image, entry) if isinstance(image, str) else None
                if new is not None:
                    container["image"] = new
                    provenance.wrote(container, "image", where)


def _image(image: str, entry: Mapping[str, Any]) -> str | None:
    """``image`` as the ``images:`` entry changes it, or None when it names another image."""
    parts = _IMAGE.match(image)
    if parts is None or parts["name"] != entry["name"]:
        return None
    name = str(entry.get("newName") or parts["name"])
    if entry.get("digest"):
        return f"{name}@{entry['digest']}"
    if entry.get("newTag") is not None:
        return f"{name}:{entry['newTag']}"
    tag = f":{parts['tag']}" if parts["tag"] else ""
    return f"{name}{tag}@{parts['digest']}" if parts["digest"] else f"{name}{tag}"


def _containers(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, dict):
        for key, item in value.items():
            if key in ("containers", "initContainers") and isinstance(item, list):
                yield from (container for container in item if isinstance(container, dict))
            else:
                yield from _containers(item)
    elif isinstance(value, list):
        for item in value:
            yield from _containers(item)


def _set_all(data: dict[str, Any], path: Path, values: Mapping[str, str], place: Place, provenance: Provenance) -> None:
    node = data
    for step in path:
        node = _mapping(node, str(step), provenance, place)
    for key, value in values.items():
        node[key] = value
        provenance.wrote(node, key, place)


def _mapping(parent: dict[str, Any], key: str, provenance: Provenance, place: Place) -> dict[str, Any]:
    """``parent[key]``, made an empty mapping written at ``place`` when missing."""
    found = parent.get(key)
    if not isinstance(found, dict):
        found = parent[key] = provenance.copy({}, *place)
    return found
