"""GS060: an object of a GPU API group whose kind or version nothing serves.

The API server refuses an object whose kind and version no built-in API and no CRD serves
("no matches for kind"); a GitOps tool keeps the whole sync failing or, with a wave, never gets
past it. GPU stacks meet it where an operator's kind is written at a version its CRD never had
(``ClusterPolicy`` is ``nvidia.com/v1``), where a kind is made up (the MIG manager reads its
layouts from a ConfigMap, no ``MIGConfig``), and where DRA objects keep a ``resource.k8s.io``
version Kubernetes no longer serves (classic DRA's ``v1alpha2`` ended with 1.30). GPU
workloads, GPU node agents and NVIDIA RuntimeClasses are held to the built-in versions
Kubernetes still serves (a device plugin DaemonSet at ``extensions/v1beta1``, removed in 1.16).

The served kinds are data (``data/served-apis.yaml``, through ``facts/servedapis``); a CRD of
the set for the same group and kind wins over it. Errors where the table is certain (a known
kind at a version its CRD does not serve, a kind no NVIDIA project has, a built-in version or
kind Kubernetes never served, or a removed one on the spec's Kubernetes); warnings where the
rule assumes (a kind of a shared group it does not know, a removed version without a spec).
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.lint.context import LintContext
from gpustack.lint.facts.servedapis import Group, groups, set_crds
from gpustack.lint.model import Hit, Resource, Severity
from gpustack.lint.registry import Rule

WHERE = ("apiVersion",)


def check(resource: Resource, ctx: LintContext) -> Iterator[Hit]:
    group_name, _, version = (resource.api_version or "").partition("/")
    group = groups().get(group_name) if version else None
    kind = resource.kind
    if group is None or not kind or (group.gpu_objects and not _judged_gpu_object(resource, ctx, group, version)):
        return
    crds = [served for g, k, served in ctx.set_fact(set_crds) if g == group_name and k == kind]
    if crds:
        if not any(version in served for served in crds):
            versions = ", ".join(sorted({v for served in crds for v in served})) or "no version"
            yield _hit(resource, f"the set's CustomResourceDefinition for {kind} serves {versions}, not {version}",
                       "Write the object at a version its CustomResourceDefinition serves.")
        return
    if group.builtin:
        yield from _builtin(resource, ctx, group, version)
    else:
        yield from _operator(resource, group, version)


def _judged_gpu_object(resource: Resource, ctx: LintContext, group: Group, version: str) -> bool:
    """Whether a group of ``gpu_objects`` judges this object: a kind and version the table
    lists, of a GPU workload, a GPU node agent or a RuntimeClass of an NVIDIA handler. The
    table lists what GPU stacks are made of, not the whole group, so anything else is left
    alone rather than called unserved."""
    listed = group.builtin.get(version)
    if listed is None or resource.kind not in listed.kinds:
        return False
    if resource.kind == "RuntimeClass":
        return "nvidia" in str(resource.get(("handler",)) or "")
    return any(pod.gpu_consumer or pod.system_component for pod in ctx.pods_of(resource))


def _operator(resource: Resource, group: Group, version: str) -> Iterator[Hit]:
    kind = str(resource.kind)
    instead = group.mistaken.get(kind)
    if instead is not None:
        yield _hit(resource, f"no NVIDIA project serves kind {kind} in {group.name}; {instead} configure this",
                   f"Drop the object and use {instead}.")
        return
    known = group.kinds.get(kind)
    if known is None and group.partial:
        return
    if known is None:
        operators = " and ".join(dict.fromkeys(k.by for k in group.kinds.values()))
        yield _hit(resource, f"none of the kinds gpustack knows in {group.name} ({operators}) is {kind}, and the set "
                   "holds no CustomResourceDefinition for it (assumed: none is installed from outside the set)",
                   "Check the kind's name against the operator's CRDs, or add the CRD to the set.",
                   severity=Severity.WARNING)
    elif known.versions and version not in known.versions:
        served = " and ".join(f"{group.name}/{v}" for v in known.versions)
        if version in known.dropped:
            either = " or ".join(f"{group.name}/{v}" for v in known.versions)
            yield _hit(resource, f"{kind} is served at {served} only by current releases of {known.by} (assumed: the "
                       f"cluster runs one; older releases served {group.name}/{version})",
                       f"Write the object at {either}.", severity=Severity.WARNING)
        else:
            yield _hit(resource, f"{kind} is served at {served} only ({known.by})", f"Write `apiVersion: {served}`.")


def _builtin(resource: Resource, ctx: LintContext, group: Group, version: str) -> Iterator[Hit]:
    kind = str(resource.kind)
    served = group.builtin.get(version)
    having = [v for v in group.builtin.values() if kind in v.kinds]
    if served is None or kind not in served.kinds:
        where = ", ".join(f"{v.name} ({_span(v.first, v.last)})" for v in having)
        what = f"{group.name}/{version}" if served is None else f"kind {kind} at {group.name}/{version}"
        yield _hit(resource, f"no Kubernetes release serves {what}" + (f"; {kind} is served at {where}" if where else ""),
                   "Write the object at a version the cluster serves.")
        return
    cluster = ctx.cluster
    newest = served.instead or f"{group.name}/{having[-1].name}"
    span = _span(served.first, served.last)
    if cluster is not None and cluster.minor < served.first:
        yield _hit(resource, f"{group.name}/{version} is served by Kubernetes {span}: the cluster runs "
                   f"{cluster.kubernetes_version}", "Upgrade the cluster, or write the object at a version it serves.")
        return
    if served.last is None or (cluster is not None and cluster.minor <= served.last):
        return
    if cluster is not None:
        yield _hit(resource, f"{group.name}/{version} is served by Kubernetes {span} only: the cluster runs "
                   f"{cluster.kubernetes_version}", f"Write the object at {newest}.")
    else:
        yield _hit(resource, f"{group.name}/{version} is served by Kubernetes {span} only (assumed: the cluster runs a "
                   "later release; the set names no Kubernetes version)",
                   f"Write the object at {newest}.", severity=Severity.WARNING)


def _span(first: int, last: int | None) -> str:
    if last is None:
        return f"1.{first} on"
    return f"1.{first}" if first == last else f"1.{first} to 1.{last}"


def _hit(resource: Resource, why: str, fix: str, severity: Severity | None = None) -> Hit:
    return Hit(resource, WHERE, f"{resource.ref} at {resource.api_version} is served by nothing: {why}; the API server "
               "refuses it", 
               severity=severity, fix=fix)


RULE = Rule("GS060", "object", check, set_fact=set_crds)
