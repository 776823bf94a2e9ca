"""The order in which Flux applies a rendered stack, read from the rendered output alone.

Flux applies a Kustomization only once every Kustomization of its ``dependsOn`` is Ready, and one
with ``wait: true`` (or ``healthChecks``) is Ready only once what it applied is Ready
(https://fluxcd.io/flux/components/kustomize/kustomizations/#dependencies); helm-controller
installs a HelmRelease only once those of its ``dependsOn`` are Ready, which is once their charts
are installed (https://fluxcd.io/flux/components/helm/helmreleases/#dependencies). So an object
is *after* a HelmRelease when its own HelmRelease depends on it, directly or not, or when its
Kustomization depends, directly or not, on a waiting Kustomization that applies it.

``Graph.problems`` says what breaks that order: a dependsOn naming nothing (dangling), a cycle,
a custom resource not after the release that installs its CRD, a release or object whose
namespace is not there before it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from graphlib import CycleError, TopologicalSorter
from pathlib import Path
from typing import Any

from gpustack.render import pod_security
from tests.flux.support import documents

# Flux's own kinds: `flux bootstrap` installs their CRDs, in the namespace of the entry file's objects.
FLUX_GROUPS = ("source.toolkit.fluxcd.io", "helm.toolkit.fluxcd.io", "kustomize.toolkit.fluxcd.io")
BUILTIN_NAMESPACES = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})


def builtin(api_version: str) -> bool:
    """Served by the API server itself (the core group, groups without a dot, ``*.k8s.io``) or by
    Flux, which the bootstrap installed."""
    group = api_version.rpartition("/")[0]
    return "." not in group or group.endswith(".k8s.io") or group in FLUX_GROUPS


def kind_of(obj: Mapping[str, Any]) -> tuple[str, str]:
    return obj["apiVersion"].rpartition("/")[0], obj["kind"]


@dataclass
class Unit:
    """What Flux applies at once: a Kustomization's folder, or a HelmRelease's chart."""

    name: str
    objects: list[dict[str, Any]] = field(default_factory=list)
    depends_on: list[str] = field(default_factory=list)
    waits: bool = True  # Ready only once what it applied is Ready
    namespace: str | None = None  # a HelmRelease's target namespace


@dataclass
class Graph:
    kustomizations: dict[str, Unit]
    releases: dict[str, Unit]
    applied_by: dict[str, str]  # HelmRelease → the Kustomization that applies it
    bootstrapped: frozenset[str] = frozenset()  # namespaces `flux bootstrap` made (the entry file's)

    def before(self, unit: str) -> set[str]:
        """Every Kustomization and HelmRelease Ready before ``unit`` (a name of either) starts."""
        seen: set[str] = set()
        todo = [unit]
        while todo:
            current = todo.pop()
            for parent in self._parents(current):
                if parent not in seen:
                    seen.add(parent)
                    todo.append(parent)
        return seen

    def _parents(self, unit: str) -> Iterable[str]:
        if unit in self.releases:
            # Its own Kustomization is not Ready before it (it waits for it): what that one waits for is.
            yield from self.releases[unit].depends_on
            yield from self._parents(self.applied_by[unit])
            return
        for parent in self.kustomizations[unit].depends_on:
            if self.kustomizations.get(parent) is not None and self.kustomizations[parent].waits:
                yield parent
                # Ready means what it applied is Ready: its HelmReleases too.
                yield from (r for r, k in self.applied_by.items() if k == parent)

    def problems(self, crds: Mapping[tuple[str, str], str]) -> list[str]:
        """``crds``: (group, kind) → the HelmRelease whose chart installs that CRD."""
        found = self._dangling()
        if found:
            return found
        for graph in (self.kustomizations, self.releases):
            try:
                tuple(TopologicalSorter({n: u.depends_on for n, u in graph.items()}).static_order())
            except CycleError as cycle:
                found.append(f"dependsOn cycle: {' -> '.join(cycle.args[1])}")
        if found:
            return found
        namespaces = self._applied("Namespace")
        runtime_classes = self._applied("RuntimeClass")
        for name, unit in [*self.kustomizations.items(), *self.releases.items()]:
            ready = self.before(name)
            for obj in unit.objects:
                found += self._crd_order(name, unit, obj, crds, ready)
                namespace = obj["metadata"].get("namespace") or (unit.namespace if obj["kind"] != "Namespace" else None)
                found += self._namespace_order(name, unit, obj, namespace, namespaces, ready)
            if unit.namespace:
                found += self._namespace_order(name, unit, None, unit.namespace, namespaces, ready)
            found += self._runtime_class_order(name, unit, runtime_classes, ready)
        return found

    def _applied(self, kind: str) -> dict[str, str]:
        """Name → the Kustomization that applies the object of ``kind`` of that name."""
        return {o["metadata"]["name"]: k for k, u in self.kustomizations.items() for o in u.objects if o["kind"] == kind}

    def _runtime_class_order(self, name: str, unit: Unit, runtime_classes: Mapping[str, str],
                             ready: set[str]) -> list[str]:
        """A pod naming a RuntimeClass the stack applies is refused until it exists: after it."""
        found = []
        for obj in unit.objects:
            wanted = (pod_security.pod_spec(obj) or {}).get("runtimeClassName")
            creator = runtime_classes.get(wanted or "")
            if creator and creator not in ready and creator != name:
                found.append(f"{obj['kind']} {obj['metadata']['name']} (applied by {name}) names RuntimeClass "
                             f"{wanted}, which {creator} applies, not before it")
        return found

    def _dangling(self) -> list[str]:
        found = []
        for graph in (self.kustomizations, self.releases):
            for name, unit in graph.items():
                found += [f"{name} dependsOn {d}, which does not exist" for d in unit.depends_on if d not in graph]
        return found

    def _crd_order(self, name: str, unit: Unit, obj: Mapping[str, Any], crds: Mapping[tuple[str, str], str],
                   ready: set[str]) -> list[str]:
        if builtin(obj["apiVersion"]) or obj["kind"] == "CustomResourceDefinition":
            return []
        installer = crds.get(kind_of(obj))
        what = f"{obj['kind']} {obj['metadata']['name']} (applied by {name})"
        if installer is None:
            return [f"{what}: no release of the stack installs its CRD"]
        if installer == name or installer in ready:  # Helm installs a chart's CRDs before its templates
            return []
        return [f"{what} is not applied after {installer}, which installs its CRD"]

    def _namespace_order(self, name: str, unit: Unit, obj: Mapping[str, Any] | None, namespace: str | None,
                         namespaces: Mapping[str, str], ready: set[str]) -> list[str]:
        if not namespace or namespace in BUILTIN_NAMESPACES | self.bootstrapped:
            return []
        creator = namespaces.get(namespace)
        what = f"{obj['kind']} {obj['metadata']['name']}" if obj else "its release"
        if creator is None:
            return [f"{name}: {what} is in namespace {namespace}, which no Kustomization applies"]
        if creator in ready or (creator == name and name in self.kustomizations):  # kustomize applies Namespaces first
            return []
        return [f"{name}: {what} is in namespace {namespace}, which {creator} applies, not before it"]


def load(folder: Path, stack_path: str, chart_objects: Mapping[str, list[dict[str, Any]]]) -> Graph:
    """The graph of a rendered stack ``folder`` kept at ``stack_path`` in its repository;
    ``chart_objects``: HelmRelease name → what its chart renders (``helm template``)."""
    entry = [doc for path in sorted((folder / "flux").glob("*.yaml")) for doc in documents(path)]
    kustomizations: dict[str, Unit] = {}
    releases: dict[str, Unit] = {}
    applied_by: dict[str, str] = {}
    for k in (doc for doc in entry if doc["kind"] == "Kustomization"):
        path = k["spec"]["path"].removeprefix("./")
        assert path.startswith(f"{stack_path}/"), f"{k['metadata']['name']} applies {path}, outside the stack"
        objects = [doc for file in folder_files(folder / path.removeprefix(f"{stack_path}/")) for doc in documents(file)]
        name = k["metadata"]["name"]
        kustomizations[name] = Unit(
            name, [o for o in objects if o["kind"] != "HelmRelease"],
            [d["name"] for d in k["spec"].get("dependsOn", [])],
            waits=bool(k["spec"].get("wait") or k["spec"].get("healthChecks")),
        )
        for release in (o for o in objects if o["kind"] == "HelmRelease"):
            releases[release["metadata"]["name"]] = Unit(
                release["metadata"]["name"], list(chart_objects.get(release["metadata"]["name"], [])),
                [d["name"] for d in release["spec"].get("dependsOn", [])],
                namespace=release["spec"].get("targetNamespace"),
            )
            applied_by[release["metadata"]["name"]] = name
    bootstrapped = frozenset(doc["metadata"]["namespace"] for doc in entry)
    return Graph(kustomizations, releases, applied_by, bootstrapped)


def folder_files(folder: Path) -> list[Path]:
    """What kustomize builds from a folder: the files its kustomization.yaml lists."""
    listed = documents(folder / "kustomization.yaml")[0]["resources"]
    return [folder / name for name in listed]


def crd_installers(chart_objects: Mapping[str, list[dict[str, Any]]]) -> dict[tuple[str, str], str]:
    """(group, kind) → the HelmRelease whose chart installs that CRD."""
    return {
        (crd["spec"]["group"], crd["spec"]["names"]["kind"]): release
        for release, objects in chart_objects.items()
        for crd in objects
        if crd["kind"] == "CustomResourceDefinition"
    }
