"""Which GPU API kinds and versions something serves: the operators' CRDs and the built-in
groups by Kubernetes minor (``data/served-apis.yaml``), and the CRDs of the linted set, which
win over the table for their group and kind."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from gpustack.lint.context import LintContext
from gpustack.shipped import lint_data

CRD_KIND = "CustomResourceDefinition"
CrdVersions = tuple[tuple[str, str, tuple[str, ...]], ...]  # (group, kind, served versions)


@dataclass(frozen=True)
class OperatorKind:
    name: str
    versions: tuple[str, ...]  # empty: any version
    by: str
    dropped: tuple[str, ...] = ()  # versions older releases of the operator served


@dataclass(frozen=True)
class BuiltinVersion:
    name: str
    first: int  # the first Kubernetes minor that serves it
    last: int | None  # the last one; None: still served
    kinds: frozenset[str]
    instead: str | None = None  # the group/version that replaced it, where another group's


@dataclass(frozen=True)
class Group:
    name: str
    kinds: Mapping[str, OperatorKind]
    mistaken: Mapping[str, str]
    builtin: Mapping[str, BuiltinVersion]
    gpu_objects: bool = False  # a built-in group judged for GPU objects only, at the listed kinds and versions
    partial: bool = False  # an operator group whose unlisted kinds are not judged (the group holds others)


@cache
def groups() -> Mapping[str, Group]:
    data = lint_data("served-apis.yaml")["groups"]
    return {name: _group(name, item) for name, item in data.items()}


def _group(name: str, item: Mapping[str, Any]) -> Group:
    kinds = {
        kind: OperatorKind(kind, tuple(spec.get("versions", ())), spec["by"], tuple(spec.get("dropped", ())))
        for kind, spec in item.get("kinds", {}).items()
    }
    builtin = {
        version: BuiltinVersion(version, spec["from"], spec.get("until"), frozenset(spec["kinds"]), spec.get("instead"))
        for version, spec in item.get("versions", {}).items()
    }
    return Group(name, kinds, item.get("mistaken", {}), builtin, bool(item.get("gpu_objects")), bool(item.get("partial")))


def set_crds(ctx: LintContext) -> CrdVersions:
    """The CRDs of the set, by group and kind, with the versions they serve (plain data: a rule's
    ``set_fact``)."""
    found = []
    for crd in ctx.of_kind(CRD_KIND):
        group, kind = crd.get(("spec", "group")), crd.get(("spec", "names", "kind"))
        versions = crd.get(("spec", "versions"))
        if not isinstance(group, str) or not isinstance(kind, str) or not isinstance(versions, list):
            continue
        served = tuple(
            str(v["name"]) for v in versions if isinstance(v, Mapping) and "name" in v and v.get("served", True) is not False
        )
        found.append((group, kind, served))
    return tuple(found)


@cache
def scheduler_config_last_minor(kind: str, api_version: str) -> tuple[bool, int | None]:
    """Whether kube-scheduler's config kind at this version is listed, and the last Kubernetes
    minor that reads it (None: still read)."""
    versions = lint_data("served-apis.yaml")["scheduler_configs"].get(kind, {})
    if api_version not in versions:
        return False, None
    return True, versions[api_version].get("until")
