"""Strategic merge patches as kustomize applies them, for the fields GPU manifests use.

kustomize merges a patch into its target with kyaml's merge (``patches`` and
``patchesStrategicMerge``: https://kubectl.docs.kubernetes.io/references/kustomize/kustomization/patches/),
which follows the strategic merge patch semantics of
https://github.com/kubernetes/community/blob/master/contributors/devel/sig-api-machinery/strategic-merge-patch.md:

- mappings merge key by key; a key set to null is removed;
- ``$patch: delete`` on a mapping removes it, ``$patch: replace`` puts the patch's mapping
  in its place;
- a list whose Kubernetes type names a ``patchMergeKey`` (``MERGE_KEYS``) merges item by item
  on that key, and an item with ``$patch: delete`` removes the item it matches; kyaml puts
  the patch's items first, in the patch's order, then the target's other items
  (``MergeOptionsListPrepend`` in kustomize's patch filter);
- every other list (``tolerations``, ``nodeSelectorTerms``, ``args``, and every list of a
  custom resource, which kustomize has no schema for) is replaced by the patch's.

Keys starting with ``$`` other than ``$patch`` (``$setElementOrder``, ``$retainKeys``,
``$deleteFromPrimitiveList``) are out of scope and dropped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpustack.lint.input.provenance import Place, Provenance
from gpustack.lint.model import Path

if TYPE_CHECKING:
    from gpustack.lint.input.overlays import Built

# ``patchMergeKey`` of the list fields of k8s.io/api types
# (https://github.com/kubernetes/api/blob/master/core/v1/types.go): merged item by item.
MERGE_KEYS = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "env": "name",
    "volumes": "name",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
    "imagePullSecrets": "name",
    "hostAliases": "ip",
    "resourceClaims": "name",
    "topologySpreadConstraints": "topologyKey",
}
PORTS = {"containers": "containerPort", "spec": "port"}  # a container's ports / a Service's
# API groups whose kinds kustomize knows the schema of (Kubernetes' own): lists of any other
# group's objects are replaced, never merged.
BUILT_IN_GROUPS = frozenset({
    "v1", "apps", "batch", "policy", "autoscaling", "networking.k8s.io", "rbac.authorization.k8s.io",
    "storage.k8s.io", "scheduling.k8s.io", "node.k8s.io", "apiextensions.k8s.io", "admissionregistration.k8s.io",
    "coordination.k8s.io", "discovery.k8s.io", "certificates.k8s.io",
})
DIRECTIVE = "$patch"


def merge_keyed(api_version: Any) -> bool:
    """Whether lists of an object of ``api_version`` merge on their ``patchMergeKey``."""
    return isinstance(api_version, str) and api_version.split("/")[0] in BUILT_IN_GROUPS


class Merge:
    """One strategic merge patch (``patch``, at ``place``, already copied by ``provenance``)
    applied to one built object."""

    def __init__(self, provenance: Provenance, place: Place, keyed: bool) -> None:
        self.provenance = provenance
        self.place = place
        self.keyed = keyed

    def at(self, path: Path) -> Place:
        resource, root = self.place
        return resource, (*root, *path)

    def rooted(self, made: Any, path: Path) -> Any:
        """``made`` (the patch's, put in place whole) placed at the patch's ``path``."""
        self.provenance.rooted(made, self.at(path))
        return made

    def mapping(self, target: dict[str, Any], patch: dict[str, Any], path: Path, parent: str = "") -> dict[str, Any] | None:
        """``patch`` merged into ``target`` in place; None: the patch deletes the mapping."""
        directive = patch.get(DIRECTIVE)
        if directive == "delete":
            return None
        if directive == "replace":
            return self.rooted({key: value for key, value in patch.items() if not key.startswith("$")}, path)
        for key, value in patch.items():
            if key.startswith("$"):
                continue
            where = (*path, key)
            if value is None:
                if key in target:
                    del target[key]
                    self.provenance.removed(target, key, self.at(where))
                continue
            old = target.get(key)
            if isinstance(value, dict) and isinstance(old, dict):
                merged = self.mapping(old, value, where, key)
                if merged is None:
                    del target[key]
                    self.provenance.removed(target, key, self.at(where))
                elif merged is not old:
                    target[key] = merged
            elif isinstance(value, list) and isinstance(old, list) and (merge_key := self.merge_key(key, parent, value, old)):
                target[key] = self.items(old, value, merge_key, where)
            else:
                target[key] = _without_directives(value)
                self.provenance.wrote(target, key, self.at(where))
        return target

    def merge_key(self, field: str, parent: str, *lists: list[Any]) -> str | None:
        if not self.keyed:
            return None
        if field == "ports":
            return PORTS.get(parent) or next(
                (key for key in PORTS.values() if any(isinstance(item, dict) and key in item for items in lists for item in items)),
                None,
            )
        return MERGE_KEYS.get(field)

    def items(self, target: list[Any], patch: list[Any], key: str, path: Path) -> list[Any]:
        """The patch's list merged into ``target`` on ``key``: the patch's items first."""
        if any(isinstance(item, dict) and item.get(DIRECTIVE) == "replace" for item in patch):
            kept = [_without_directives(item) for item in patch if not (isinstance(item, dict) and DIRECTIVE in item)]
            return self.rooted(kept, path)
        rest = list(target)
        first: list[Any] = []
        for index, item in enumerate(patch):
            if not isinstance(item, dict) or key not in item:
                first.append(item)
                continue
            match = next((old for old in rest if isinstance(old, dict) and old.get(key) == item[key]), None)
            if match is not None:
                rest.remove(match)
            if item.get(DIRECTIVE) == "delete":
                continue
            merged = self.mapping(match, item, (*path, index)) if match is not None else _without_directives(item)
            if merged:
                first.append(merged)
        return first + rest


def _without_directives(value: Any) -> Any:
    """``value`` without ``$`` keys (in place: the patch's data is the build's own copy)."""
    if isinstance(value, dict):
        for key in [key for key in value if key.startswith("$")]:
            del value[key]
        for item in value.values():
            _without_directives(item)
    elif isinstance(value, list):
        for item in value:
            _without_directives(item)
    return value


def strategic_merge(provenance: Provenance, target: dict[str, Any], patch: Any, place: Place) -> dict[str, Any] | None:
    """``patch`` (plain data of the patch at ``place``) merged into the built object
    ``target``; None: the patch deletes the object (``$patch: delete`` at its top)."""
    copied = provenance.copy(patch, *place)
    return Merge(provenance, place, merge_keyed(target.get("apiVersion"))).mapping(target, copied, ())


def merged(provenance: Provenance, built: Built, patch: Any, place: Place) -> bool:
    """``patch`` merged into ``built`` (its data replaced where the patch says ``$patch:
    replace`` at the top); False: the patch deletes the object."""
    result = strategic_merge(provenance, built.data, patch, place)
    if result is None:
        return False
    built.data = result
    return True
