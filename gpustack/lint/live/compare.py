"""The spec and the live cluster together: the spec for what is planned, the cluster for what
is there. The rules see the spec's pools (with the labels their nodes carry beyond the spec's)
and, beside them, the cluster's GPU nodes that no spec pool describes; everything else the spec
decides (it knows flags the API does not show: feature gates, containerd's default runtime). Where the two differ, a note says how: they are
facts about the cluster, not findings about a workload.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from gpustack.lint.context import RUNTIME_CLASS_DISTRIBUTIONS
from gpustack.lint.facts.pools import ClusterFacts, Pool
from gpustack.lint.live.client import Snapshot


def combined(spec: ClusterFacts | None, live: ClusterFacts) -> tuple[ClusterFacts, list[str]]:
    """The facts the rules judge by, and the differences as notes."""
    if spec is None:
        return live, []
    notes = list(_version_notes(spec, live))
    matched: dict[str, list[Pool]] = {pool.name: [] for pool in spec.pools}
    extra: list[Pool] = []
    for pool in live.pools:
        planned = next((p for p in spec.pools if describes(p, pool, spec.label_keys)), None)
        (matched[planned.name] if planned else extra).append(pool)
    for planned in spec.pools:
        notes += _pool_notes(planned, matched[planned.name], live, spec.label_keys)
    notes += [f"{live.spec_file} has {pool} on {pool.nodes} node(s) that no pool of {spec.spec_file} describes"
              for pool in extra]
    pools = tuple(_with_labels_found(planned, matched[planned.name]) for planned in spec.pools) + tuple(extra)
    return replace(spec, pools=pools, label_keys=spec.label_keys | live.label_keys), notes


def _with_labels_found(planned: Pool, present: list[Pool]) -> Pool:
    """The planned pool with the labels every one of its nodes carries beyond the spec's (a
    team's label, a zone): a selector for them finds the pool, as the scheduler would."""
    if not present:
        return planned
    found = {k: v for k, v in present[0].labels.items() if k not in planned.labels}
    common = {k: v for k, v in found.items() if all(pool.labels.get(k) == v for pool in present)}
    return replace(planned, labels={**planned.labels, **common}) if common else planned


def describes(planned: Pool, present: Pool, own_labels: frozenset[str]) -> bool:
    """Whether nodes of ``present`` are nodes of the ``planned`` pool: the same GPU product and
    taints, and no label of the pool's own (``own_labels``: the spec's ``labels``) with
    another value. The labels the discovery agents add are compared by ``_pool_notes``: a
    cluster without them is the planned cluster, not yet converged."""
    own = all(
        present.labels.get(key, value) == value
        for key, value in planned.labels.items()
        if key in own_labels and value is not None
    )
    return own and planned.gpu.product == present.gpu.product and set(planned.taints) == set(present.taints)


def _version_notes(spec: ClusterFacts, live: ClusterFacts) -> Iterator[str]:
    if spec.minor != live.minor:
        yield (f"{spec.spec_file} plans Kubernetes 1.{spec.minor}; {live.spec_file} runs 1.{live.minor} "
               f"(the rules judge by the spec's 1.{spec.minor})")
    if live.distribution and live.distribution != spec.distribution:
        yield f"{spec.spec_file} plans {spec.distribution}; {live.spec_file} runs {live.distribution}"


def _pool_notes(planned: Pool, present: list[Pool], live: ClusterFacts, own_labels: frozenset[str]) -> Iterator[str]:
    where = f"{live.spec_file}"
    if not present:
        yield f"pool {planned.name} of the spec has no nodes in {where} yet"
        return
    nodes = sum(pool.nodes for pool in present)
    if nodes != planned.nodes:
        yield f"pool {planned.name}: the spec plans {planned.nodes} node(s), {where} has {nodes}"
    for pool in present:
        if pool.gpus != planned.gpus:
            yield f"pool {planned.name}: the spec plans {planned.gpus} GPU(s) a node, {pool.name} has {pool.gpus}"
        if pool.resources != planned.resources:
            yield (f"pool {planned.name}: the spec's nodes advertise {', '.join(sorted(planned.resources)) or 'no GPU'}, "
                   f"{pool.name} {', '.join(sorted(pool.resources)) or 'no GPU resource'}")
        absent = sorted(key for key in planned.labels if key in own_labels and key not in pool.labels)
        if absent:
            yield f"pool {planned.name}: {pool.name} lacks the spec's labels {', '.join(absent)}"
        if pool.sharing.strategy != planned.sharing.strategy:
            yield (f"pool {planned.name}: the spec shares its GPUs by {planned.sharing.strategy}, "
                   f"{pool.name} by {pool.sharing.strategy}")


def inventory(snapshot: Snapshot, facts: ClusterFacts) -> list[str]:
    """What was read, in a note (names, so a reader sees the context the rules had), and what
    the cluster lacks that the stack needs: a RuntimeClass where the distribution wants one,
    a DeviceClass where DRA is on."""
    def names(kind: str) -> str:
        found = sorted(str((item.get("metadata") or {}).get("name")) for item in snapshot.of(kind))
        return ", ".join(found) if found else "none"

    releases = sorted({str(((s.get("metadata") or {}).get("labels") or {}).get("name")) for s in snapshot.of("Secret")})
    nodes = len(snapshot.of("Node"))
    pools = "; ".join(f"{pool} × {pool.nodes}" for pool in facts.pools) or "no GPU node"
    notes = [
        f"read {snapshot.where} (Kubernetes {snapshot.version.get('gitVersion', '?')}): {nodes} node(s); "
        f"GPU pools: {pools}; RuntimeClasses: {names('RuntimeClass')}; DeviceClasses: {names('DeviceClass')}; "
        f"{len(snapshot.of('CustomResourceDefinition'))} CRD(s); Helm releases: {', '.join(releases) or 'none'}",
        *(f"not read: {missing}" for missing in snapshot.missing),
    ]
    if facts.distribution in RUNTIME_CLASS_DISTRIBUTIONS and not facts.nvidia_default_runtime:
        handlers = {str(item.get("handler")) for item in snapshot.of("RuntimeClass")}
        if "nvidia" not in handlers:
            notes.append(f"{snapshot.where} has no RuntimeClass with handler nvidia, which GPU pods on "
                         f"{facts.distribution} name (GS004)")
    if snapshot.of("ResourceSlice") and not snapshot.of("DeviceClass"):
        notes.append(f"{snapshot.where} publishes DRA devices but has no DeviceClass: no claim can be allocated")
    return notes
