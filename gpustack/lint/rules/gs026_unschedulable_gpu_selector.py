"""GS026: a GPU workload whose required node selection matches no node pool of the spec.

The labels a pool's nodes carry are known from the spec:
GFD's ``nvidia.com/gpu.product``, ``gpu.family``, ``gpu.memory``, ``gpu.count``, ``gpu.mode``,
``mig.capable``, … from the catalogue facts of the pool's GPU (where GFD is deployed);
``feature.node.kubernetes.io/pci-10de.present`` from gpustack's NFD (``deviceLabelFields:
[vendor]``, so no ``pci-0302_10de``); ``nvidia.com/gpu.present`` only under the GPU Operator;
and the pool's own labels. A selector copied from another cluster (the PCI
class label differs between a GeForce PC and an L4), or one on ``nvidia.com/gpu`` (the
resource name: NFD, GFD and the GPU Operator set ``nvidia.com/gpu.present``, ``.product``,
``.count``, ``.deploy.*``, never the bare key, so only a pool's own labels carry it), then
fails with "didn't match Pod's node affinity/selector" and the pod stays Pending. Labels the
spec does not describe (hostname, zone, …) are never judged. Needs ``--spec``.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.lint.context import LintContext
from gpustack.lint.facts.consumers import is_gpu_workload
from gpustack.lint.facts.podspec import LabelTest, subject
from gpustack.lint.facts.pools import (
    GFD_LABELS,
    GPU,
    GPU_PRESENT_LABEL,
    NFD_GPU_LABEL,
    PCI_LABEL_PREFIX,
    ClusterFacts,
    Pool,
    describe_label,
)
from gpustack.lint.facts.scheduling import Selection, label_test_holds
from gpustack.lint.model import Hit, PodSpec
from gpustack.lint.registry import Rule

FIX = "Select a label the pools carry, e.g. `nvidia.com/gpu.product` with the pool's product, or a pool label."


def _shown(test: LabelTest) -> str:
    values = ", ".join(test.values)
    if test.operator == "In":
        return f"{test.key}={values}" if len(test.values) == 1 else f"{test.key} in ({values})"
    if test.operator == "NotIn":
        return f"{test.key} not in ({values})"
    if test.operator in ("Gt", "Lt"):
        return f"{test.key} {'>' if test.operator == 'Gt' else '<'} {values}"
    return f"{test.key} {'present' if test.operator == 'Exists' else 'absent'}"


def _hint(key: str, cluster: ClusterFacts) -> str:
    if key == GPU:
        return f"; {GPU} is the device plugin's resource name, which no discovery component sets as a node label"
    if key == GPU_PRESENT_LABEL and not cluster.gpu_operator:
        return f"; only the GPU Operator sets {GPU_PRESENT_LABEL}"
    if key.startswith(PCI_LABEL_PREFIX) and key != NFD_GPU_LABEL:
        return f"; the stack's NFD labels NVIDIA GPUs {NFD_GPU_LABEL} (deviceLabelFields: [vendor])"
    if key in GFD_LABELS and not cluster.gfd:
        return "; the spec deploys no GPU Feature Discovery"
    return ""


def _miss(selection: Selection, pool: Pool) -> LabelTest:
    """The first test a pool fails: of the nodeSelector, else of the first affinity term."""
    tests = [t for t in selection.selector if not label_test_holds(t, pool.labels)]
    tests += [t for t in selection.terms[0] if not label_test_holds(t, pool.labels)] if selection.terms else []
    return tests[0]


def check(pod: PodSpec, ctx: LintContext) -> Iterator[Hit]:
    cluster = ctx.cluster
    if cluster is None or not is_gpu_workload(pod):
        return
    selection = Selection.of(pod, cluster)
    if not selection.tests or any(selection.matches(pool) for pool in cluster.pools):
        return
    # Blame the first test no pool passes; else the selection as a whole.
    alone = [t for t in selection.tests if not any(label_test_holds(t, p.labels) for p in cluster.pools)]
    if alone:
        test = alone[0]
        carried = f"{describe_label(test.key, cluster)}{_hint(test.key, cluster)}"
        why = f"no node pool of the spec carries {_shown(test)} ({carried})"
    else:
        test = selection.tests[0]
        misses = "; ".join(f"{pool.name} fails {_shown(_miss(selection, pool))}" for pool in cluster.pools)
        why = f"no node pool of the spec passes all its tests ({misses})"
    yield Hit(
        pod.resource,
        test.path,
        f"{subject(pod)} asks for GPU nodes by label, but {why}: it stays Pending",
        fix=FIX,
    )


RULE = Rule("GS026", "pod", check)
