"""Why a required node selection matches none of a spec's node pools, for a message.

GS026 asks it of a GPU pod's own selection, GS062 of a RuntimeClass's ``scheduling.nodeSelector``
(which the RuntimeClass admission controller adds to every pod of the class): the test no pool
passes, with what the pools carry for its label, else the test each pool fails.
"""

from __future__ import annotations

from collections.abc import Sequence

from gpustack.lint.facts.podspec import LabelTest
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


def shown(test: LabelTest) -> str:
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


def no_pool_matches(
    selection: Selection, pools: Sequence[Pool], cluster: ClusterFacts, which: str = "node pool"
) -> tuple[LabelTest, str] | None:
    """None where one of ``pools`` matches ``selection`` (or it tests nothing the spec knows);
    else the test to blame and why no pool passes (``which`` names the pools in the message)."""
    if not selection.tests or any(selection.matches(pool) for pool in pools):
        return None
    alone = [t for t in selection.tests if not any(label_test_holds(t, p.labels) for p in pools)]
    if alone:
        test = alone[0]
        carried = f"{describe_label(test.key, cluster)}{_hint(test.key, cluster)}"
        return test, f"no {which} of the spec carries {shown(test)} ({carried})"
    misses = "; ".join(f"{pool.name} fails {shown(_miss(selection, pool))}" for pool in pools)
    return selection.tests[0], f"no {which} of the spec passes all its tests ({misses})"
