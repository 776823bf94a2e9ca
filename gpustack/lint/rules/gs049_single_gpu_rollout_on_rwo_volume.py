"""GS049: a one-replica whole-GPU Deployment whose RollingUpdate waits on a ReadWriteOnce volume.

With the default strategy a one-replica Deployment starts the new pod before it stops the old
one (``facts.rollout``). A ReadWriteOnce volume is attached to one node at a time, so the new
pod can only run on the old pod's node, and there it needs a GPU besides the one the old pod
keeps; on a node whose GPUs are all taken (one-GPU nodes, most often) it stays Pending and the
rollout never completes. A ReadWriteOncePod volume blocks the new pod on any node.

Claims are resolved against the PersistentVolumeClaims of the set (one that is not in the set
is not judged). With a spec, GS005 weighs the node's GPUs itself and this rule stays quiet;
shared GPUs are GS005's too.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from gpustack.lint.context import LintContext
from gpustack.lint.facts.consumers import is_gpu_workload
from gpustack.lint.facts.podspec import subject
from gpustack.lint.facts.quantities import whole_gpu_asks
from gpustack.lint.facts.rollout import ROLLED_OUT_KINDS, surge_first
from gpustack.lint.model import Hit, PodSpec
from gpustack.lint.registry import Rule

TEMPLATE = ("spec", "template", "spec")
SINGLE_NODE = ("ReadWriteOnce", "ReadWriteOncePod")
FIX = "Set `strategy.type: Recreate` (and remove `rollingUpdate`): the old pod frees its GPU and volume first."

# (namespace, claim name) -> access modes, for the set's PersistentVolumeClaims.
Claims = tuple[tuple[str | None, str, tuple[str, ...]], ...]


def claim_access_modes(ctx: LintContext) -> Claims:
    found = []
    for claim in ctx.of_kind("PersistentVolumeClaim"):
        modes = claim.get(("spec", "accessModes"))
        if claim.ref.name and isinstance(modes, list):
            found.append((claim.ref.namespace, claim.ref.name, tuple(str(mode) for mode in modes)))
    return tuple(found)


def _single_node_mode(name: str, namespace: str | None, claims: Claims) -> str | None:
    """The claim's single-node access mode, when every claim of that name the set holds (a
    namespace left unset matches: kustomize may set it) is single-node only."""
    modes = [found for ns, claim, found in claims if claim == name and (ns == namespace or None in (ns, namespace))]
    if not modes or not all(mode and set(mode) <= set(SINGLE_NODE) for mode in modes):
        return None
    return "ReadWriteOncePod" if any("ReadWriteOncePod" in mode for mode in modes) else "ReadWriteOnce"


def _claims(pod: PodSpec) -> Iterator[str]:
    volumes = pod.spec.get("volumes")
    for volume in volumes if isinstance(volumes, list) else ():
        source = volume.get("persistentVolumeClaim") if isinstance(volume, Mapping) else None
        if isinstance(source, Mapping) and isinstance(source.get("claimName"), str) and source.get("readOnly") is not True:
            yield source["claimName"]


def check(pod: PodSpec, ctx: LintContext) -> Iterator[Hit]:
    if pod.resource.kind not in ROLLED_OUT_KINDS or pod.path != TEMPLATE or ctx.cluster is not None:
        return
    if not is_gpu_workload(pod) or not (gpus := whole_gpu_asks(pod)):
        return
    rollout = surge_first(pod)
    if rollout is None or rollout.replicas != 1:
        return
    claims = ctx.set_fact(claim_access_modes)
    for name in _claims(pod):
        mode = _single_node_mode(name, pod.resource.ref.namespace, claims)
        if mode is None:
            continue
        asks = ", ".join(f"{resource} {amount}" for resource, amount in sorted(gpus.items()))
        stuck = (
            "the new pod cannot mount it while the old pod runs, on any node"
            if mode == "ReadWriteOncePod"
            else "the new pod can only start on the old pod's node, where the volume is attached, and needs "
            "a free GPU there besides the old pod's; where the node's GPUs are all taken it stays Pending"
        )
        yield Hit(
            pod.resource,
            rollout.path,
            f"{subject(pod)} holds a whole GPU ({asks}) and the {mode} claim {name}, and rolls out with "
            f"{rollout.strategy} ({rollout.describe()}): {stuck}, so the rollout never completes",
            fix=FIX,
            edits=rollout.recreate,
        )
        return


RULE = Rule("GS049", "pod", check, ROLLED_OUT_KINDS, set_fact=claim_access_modes)
