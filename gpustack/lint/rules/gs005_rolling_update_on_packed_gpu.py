"""GS005: a Deployment on packed GPUs whose RollingUpdate cannot make progress.

A RollingUpdate whose effective maxUnavailable is 0 starts each new pod before it stops an
old one. The old pods keep their GPU memory; when the GPU is packed, the new pods stay
Pending (HAMi: ``CardInsufficientMemory``), never become Ready, and the rollout deadlocks.
maxUnavailable rounds down and maxSurge up: the default 25 % is 0 unavailable
and 1 surge for up to 3 replicas.

With a spec: per pool the Deployment can run on, the pool's GPUs (whole, HAMi
vGPU memory/cores/slots, time slices) minus its old pods and the other long-running GPU
workloads of the set that can only run on those pools; an error with the numbers when one
new pod does not fit, no finding when it does. The sums are the best case for the
scheduler, so an error is a sure deadlock. MIG instances count per profile, from the pools'
own MIG layouts. Without a spec: a warning for shared GPUs (HAMi memory/cores, time-sliced
``*.shared``), info for whole GPUs (whether the cluster has a spare GPU is unknown), none where
``nvidia.com/gpu`` is time-sliced without a rename and one GPU's slices have room for the new
pod (as below; per-node configs may leave other nodes whole, so no more is said), none where the
set adds GPU nodes on demand (a Karpenter GPU NodePool, a cloud GPU pool with autoscaling:
``facts/node_groups.autoscaled_gpu_nodes``). A shared GPU is no finding where the set's own
sharing config shows room on a single GPU: its time-slicing or MPS shares per GPU
(``facts/sharingconfigs``) hold every share the set's long-running workloads and node agents ask
for plus one new pod's. An OpenShift
DeploymentConfig's ``Rolling`` strategy is judged as a RollingUpdate.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

from gpustack.lint.context import LintContext
from gpustack.lint.facts.consumers import is_gpu_workload
from gpustack.lint.facts.node_groups import autoscaled_gpu_nodes
from gpustack.lint.facts.podspec import subject
from gpustack.lint.facts.sharingconfigs import shares_per_gpu
from gpustack.lint.facts.pools import ClusterFacts, Pool
from gpustack.lint.facts.quantities import gpu_amounts, is_shared_gpu_resource, whole_gpu_asks
from gpustack.lint.facts.rollout import ROLLED_OUT_KINDS, Rollout, replica_count, surge_first
from gpustack.lint.facts.scheduling import (
    Usage,
    capacity,
    container_asks,
    least,
    mig_profile,
    number_text,
    placeable_pools,
    pod_total,
    usage,
    usage_key,
)
from gpustack.lint.model import Hit, PodSpec, Severity
from gpustack.lint.registry import Rule

TEMPLATE = ("spec", "template", "spec")
FIX = "Set `strategy.type: Recreate` (and remove `rollingUpdate`): old pods free their GPU share first."
# Workloads whose pods hold their GPUs for good, with where their replica count is.
LONG_RUNNING = {"Deployment": TEMPLATE, "StatefulSet": TEMPLATE, "ReplicaSet": TEMPLATE, "Pod": ("spec",)}


def check(pod: PodSpec, ctx: LintContext) -> Iterator[Hit]:
    if pod.resource.kind not in ROLLED_OUT_KINDS or pod.path != TEMPLATE:
        return
    rollout = surge_first(pod)
    if rollout is None:
        return
    if ctx.cluster is not None:
        judged = _judge(pod, rollout, ctx)
        if judged is not None:
            yield from judged
            return
    capacity, autoscaled = ctx.set_fact(set_facts) if ctx.cluster is None else ((), None)
    shares = _share_amounts(pod)
    if not shares:
        if ctx.cluster is None:  # under a spec the pools say the capacity, where they can be compared
            # nvidia.com/gpu time-sliced without a rename: slices, where one GPU has room for the new pod's
            sliced = _share_amounts(pod, frozenset(name for name, _, _ in capacity))
            if autoscaled is None and not (sliced and _room_on_one_gpu(sliced, capacity)):
                yield from _whole_without_capacity(pod, rollout)
        return
    if ctx.cluster is None and _room_on_one_gpu(shares, capacity):
        return
    share = ", ".join(f"{name} {number_text(value)}" for name, value in sorted(shares.items()))
    yield Hit(
        pod.resource,
        rollout.path,
        f"{subject(pod)} shares a GPU ({share}) and rolls out with {rollout.strategy} "
        f"({rollout.describe()}): new pods need their share while the old ones keep theirs, so on a "
        "packed GPU they stay Pending and the rollout deadlocks",
        fix=FIX,
        edits=rollout.recreate,
    )


def _room_on_one_gpu(shares: dict[str, Fraction], capacity: tuple[tuple[str, int, str | None], ...]) -> bool:
    """Whether every share the pod asks for fits one GPU's shares (the set's sharing configs)
    beside all the set's long-running asks for it: the rollout's new pod then finds a share."""
    per_name = {name: (per_gpu, held) for name, per_gpu, held in capacity}
    for name, amount in shares.items():
        per_gpu, held = per_name.get(name, (0, None))
        if held is None or Fraction(held) + amount > per_gpu:
            return False
    return True


def set_facts(ctx: LintContext) -> tuple[tuple[tuple[str, int, str | None], ...], str | None]:
    """What the check reads of the whole set without a spec: the shared capacity, and what adds
    GPU nodes on demand (a new pod that finds no free GPU gets a node there)."""
    return shared_capacity(ctx), autoscaled_gpu_nodes(ctx)


def shared_capacity(ctx: LintContext) -> tuple[tuple[str, int, str | None], ...]:
    """Each shared resource the set's sharing configs advertise: its shares per GPU, and the
    shares the set's long-running pods hold (plain data for the lint cache's keys; None where
    a replica count is not a plain number)."""
    found = []
    shared = frozenset(shares_per_gpu(ctx))
    for name, per_gpu in sorted(shares_per_gpu(ctx).items()):
        held = _held_shares(name, ctx, shared)
        found.append((name, per_gpu, None if held is None else str(held)))
    return tuple(found)


def _share_amounts(pod: PodSpec, shared: frozenset[str] = frozenset()) -> dict[str, Fraction]:
    """The shared GPU resources the pod's containers get, summed over its containers: shares by
    name (HAMi's, ``*.shared``), and ``shared``, the resources the set's sharing configs time-slice
    without renaming them (``nvidia.com/gpu`` itself)."""
    amounts: dict[str, Fraction] = {}
    for container in pod.containers(include_init=False):
        for name, amount in gpu_amounts(container).items():
            if is_shared_gpu_resource(name) or name in shared:
                amounts[name] = amounts.get(name, Fraction(0)) + amount
    return amounts


def _held_shares(name: str, ctx: LintContext, shared: frozenset[str]) -> Fraction | None:
    """The shares of ``name`` the set's long-running pods hold at once (a DaemonSet's pod counts
    once: one GPU's node), None where a replica count is not a plain number."""
    held = Fraction(0)
    for other in ctx.pod_specs:
        kind = other.resource.kind
        if kind != "DaemonSet" and LONG_RUNNING.get(str(kind)) != other.path:
            continue
        if kind == "Pod" and other.spec.get("restartPolicy", "Always") != "Always":
            continue  # runs to completion: holds its share while it runs, not for good
        amount = _share_amounts(other, shared).get(name)
        if not amount:
            continue
        count = 1 if kind == "DaemonSet" else replica_count(other)
        if count is None:
            return None
        held += amount * count
    return held


def _whole_without_capacity(pod: PodSpec, rollout: Rollout) -> Iterator[Hit]:
    """Info for whole GPUs where nothing tells the capacity: each rollout needs free GPUs beside
    those the old pods hold, which a one-GPU node or a node group sized to the workload lacks.
    Info, not a warning, and no autofix: a cluster with a spare GPU rolls out fine."""
    whole = whole_gpu_asks(pod)
    if not is_gpu_workload(pod) or not whole:
        return
    asks = ", ".join(f"{name} {number_text(amount)}" for name, amount in sorted(whole.items()))
    yield Hit(
        pod.resource,
        rollout.path,
        f"{subject(pod)} holds whole GPUs ({asks} a pod) and rolls out with {rollout.strategy} ({rollout.describe()}): "
        "each new pod needs free GPUs beside those its old pods keep, so where they fill their nodes (a one-GPU "
        "node, a node group sized to the workload) the new pod stays Pending and the rollout deadlocks "
        "(assumed: no spare GPU; the set does not say how many its nodes have)",
        severity=Severity.INFO,
        fix=FIX,
    )


def _judge(pod: PodSpec, rollout: Rollout, ctx: LintContext) -> list[Hit] | None:
    """The finding with capacity context: [] when the rollout fits or the Deployment cannot
    run at all (GS026–GS028 say why); None when the pools cannot be compared."""
    cluster: ClusterFacts = ctx.cluster
    pools = placeable_pools(pod, cluster)
    if not pools:
        return []
    if len({pool.sharing.hami for pool in pools}) > 1:
        return None  # HAMi and whole-GPU pools count in different units
    mig = _mig_deadlock(pod, rollout, pools)
    if mig is not None:
        return [mig]
    names = frozenset(pool.name for pool in pools)
    need = least(usage(pod, pool) for pool in pools)
    held = need * rollout.replicas + _held_by_others(pod, pools, names, need, ctx)
    total = ctx.memo(("GS005 capacity", names), lambda: sum((capacity(pool) for pool in pools), Usage()))
    lacking = _lacking(need, total - held, total, pools[0].sharing.hami, pools[0].gpu_resource)
    if not lacking:
        return []
    holders, count = _holders(pod, rollout, names, ctx)
    return [
        Hit(
            pod.resource,
            rollout.path,
            f"{subject(pod)} rolls out with {rollout.strategy} ({rollout.describe()}): a new pod needs {lacking[0]} "
            f"on {_where(pools, total)}{''.join(f'; needs {part}' for part in lacking[1:])}, while "
            f"{_listed(holders, count)} {'holds' if count == 1 and rollout.replicas == 1 else 'hold'} the rest, "
            "so it stays Pending and the rollout deadlocks",
            severity=Severity.ERROR,
            fix=FIX,
            edits=rollout.recreate,
        )
    ]


def _mig_deadlock(pod: PodSpec, rollout: Rollout, pools: tuple[Pool, ...]) -> Hit | None:
    """The finding for MIG instances, which ``Usage`` does not count: for each profile the pod
    asks for, the instances the pools' own layouts give (``Pool.mig_per_node``) less its old
    pods'. None when they leave room, or a pool's layout is not the spec's (unknown counts).
    Other workloads are left out, so a finding is surer still."""
    regular, _ = container_asks(pod)
    for name in sorted({name for ask in regular for name in ask.amounts if mig_profile(name)}):
        counts = [pool.mig_per_node(mig_profile(name) or "") for pool in pools]
        if any(count is None for count in counts):
            return None
        total = sum(count * pool.nodes for count, pool in zip(counts, pools) if count is not None)
        need = pod_total(pod, name)
        free = total - need * rollout.replicas
        if need > free:
            return Hit(
                pod.resource,
                rollout.path,
                f"{subject(pod)} rolls out with {rollout.strategy} ({rollout.describe()}): a new pod needs "
                f"{number_text(need)} more {name}, {number_text(max(Fraction(0), free))} of {total} free in the MIG "
                f"layouts of pool{'s' if len(pools) > 1 else ''} {', '.join(pool.name for pool in pools)}, while its "
                "old pods hold the rest, so it stays Pending and the rollout deadlocks",
                severity=Severity.ERROR,
                fix=FIX,
                edits=rollout.recreate,
            )
    return None


def _holders(pod: PodSpec, rollout: Rollout, names: frozenset[str], ctx: LintContext) -> tuple[list[str], int]:
    """Who holds the pools ``names``, for the message: the Deployment's old pods, then the
    other long-running GPU workloads that can only run there, in input order; the first four
    named (all ``_listed`` shows) and how many there are. Naming them all was quadratic: a
    set of thousands pinned to a few pools names thousands in each of thousands of findings."""
    pinned, members = ctx.memo(("GS005 pinned on", names), lambda: _pinned_on(names, ctx))
    others = (other for other in pinned if other is not pod)
    named = [str(other.resource.ref) for _, other in zip(range(3), others)]
    own = "its old pod" if rollout.replicas == 1 else f"its {rollout.replicas} old pods"
    return [own, *named], 1 + len(pinned) - (id(pod) in members)


def _pinned_on(names: frozenset[str], ctx: LintContext) -> tuple[list[PodSpec], set[int]]:
    """The long-running GPU workloads that can only run on the pools ``names``, in input
    order, and their ids."""
    matched = sorted(
        (item for pools, items in _pinned_by_pools(ctx).items() if pools <= names for item in items),
        key=lambda item: item[0],
    )
    pinned = [other for _, other, _ in matched]
    return pinned, {id(other) for other in pinned}


def _held_by_others(pod: PodSpec, pools: tuple[Pool, ...], names: frozenset[str], need: Usage, ctx: LintContext) -> Usage:
    """What the other pinned workloads hold of ``pools``: what all of them hold (the groups
    of workloads by the pools they can run on, within ``pools``) is computed once per run and
    pool set (``names``), not per Deployment."""
    groups = _pinned_by_pools(ctx)
    held = ctx.memo(
        ("GS005 held", names),
        lambda: sum((_group_usage(items, pools) for group, items in groups.items() if group <= names), Usage()),
    )
    # The Deployment itself sits in the group of exactly its pools; its replicas count apart.
    own_replicas = replica_count(pod)
    if names in groups and own_replicas and is_gpu_workload(pod):
        held -= need * own_replicas
    return held


def _group_usage(items: list[tuple[int, PodSpec, int]], pools: tuple[Pool, ...]) -> Usage:
    """What the workloads ``items`` hold of ``pools`` at least: worked out once per distinct
    ask (``usage_key``), as thousands of pods ask for a few amounts."""
    replicas: Counter[Any] = Counter()
    least_of: dict[Any, Usage] = {}
    for _, other, count in items:
        key = usage_key(other)
        replicas[key] += count
        if key not in least_of:
            least_of[key] = least(usage(other, pool) for pool in pools)
    return sum((least_of[key] * count for key, count in replicas.items()), Usage())


def _pinned_by_pools(ctx: LintContext) -> dict[frozenset[str], list[tuple[int, PodSpec, int]]]:
    """Long-running GPU workloads grouped by the pools they can run on (built once per run:
    judging each Deployment against every other pod spec was quadratic)."""
    return ctx.memo("GS005 pinned workloads", lambda: _group_pinned(ctx))


def _group_pinned(ctx: LintContext) -> dict[frozenset[str], list[tuple[int, PodSpec, int]]]:
    groups: dict[frozenset[str], list[tuple[int, PodSpec, int]]] = {}
    for index, other in enumerate(ctx.pod_specs):
        if not is_gpu_workload(other) or LONG_RUNNING.get(other.resource.kind or "") != other.path:
            continue
        count = replica_count(other)
        pools = placeable_pools(other, ctx.cluster) if count else ()
        if pools:
            groups.setdefault(frozenset(pool.name for pool in pools), []).append((index, other, count))
    return groups


def _lacking(need: Usage, free: Usage, total: Usage, hami: bool, resource: str) -> list[str]:
    """``8000 MiB more, 7034 MiB free`` for each part of the pools a new pod does not find."""
    parts = (
        [
            (need.memory_mib, free.memory_mib, "{} MiB more, {} MiB free"),
            (need.cores, free.cores, "{} % more cores, {} % free"),
            (need.units, free.units, "{} more vGPU(s), {} of " + number_text(total.units) + " free"),
        ]
        if hami
        else [(need.units, free.units, "{} more " + resource + ", {} of " + number_text(total.units) + " free")]
    )
    return [
        template.format(number_text(wanted), number_text(Fraction(max(0, math.floor(left)))))
        for wanted, left, template in parts
        if wanted > left
    ]


def _where(pools: tuple[Pool, ...], total: Usage) -> str:
    """``NVIDIA-L4 (23034 MiB)``, or the GPUs and pools when there are more."""
    gpus = sum(pool.nodes * pool.gpus for pool in pools)
    memory = f" ({number_text(total.memory_mib)} MiB)" if pools[0].sharing.hami else ""
    if gpus == 1:
        return f"{pools[0].gpu.product}{memory}"
    cards = " + ".join(f"{pool.nodes * pool.gpus} × {pool.gpu.product}" for pool in pools)
    names = ", ".join(pool.name for pool in pools)
    return f"{cards}{memory} in pool{'s' if len(pools) > 1 else ''} {names}"


def _listed(items: list[str], total: int) -> str:
    """``a, b, c, d and 3 more``: the first four of ``total`` things, ``items`` naming them."""
    shown = items[:4] + ([f"{total - 4} more"] if total > 4 else [])
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]


# With a spec, what other workloads pinned to the same pools hold (``_held_by_others``) is read
# from the whole set.
RULE = Rule("GS005", "pod", check, ROLLED_OUT_KINDS, reads_set=lambda ctx: ctx.cluster is not None,
            set_fact=set_facts)
