"""Placements: required node selection, when two cannot share a node, pools they reach."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gpustack.lint.facts.from_spec import load_cluster
from gpustack.lint.facts.placement import Placement
from gpustack.lint.model import PodSpec, Resource

SPECS = Path(__file__).parent / "specs"


def placement(**spec: Any) -> Placement:
    return Placement.of_pod(PodSpec(Resource("x.yaml", {}, lambda path: (1, 1)), (), spec, {}, False, False))


def affinity(*terms: list[dict[str, Any]]) -> dict[str, Any]:
    required = {"nodeSelectorTerms": [{"matchExpressions": term} for term in terms]}
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}}


def expression(key: str, operator: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": operator, "values": list(values)}


HAMI = placement(nodeSelector={"gpu-sharing": "hami"})
NOT_HAMI = expression("gpu-sharing", "NotIn", "hami")


@pytest.mark.parametrize(
    ("other", "disjoint"),
    [
        (placement(nodeSelector={"gpu-sharing": "none"}), True),
        (placement(affinity=affinity([expression("gpu-sharing", "NotIn", "hami", "x")])), True),
        (placement(affinity=affinity([expression("gpu-sharing", "DoesNotExist")])), True),
        (placement(affinity=affinity([NOT_HAMI], [expression("pool", "In", "a")])), False),  # the 2nd term
        (placement(affinity=affinity([expression("gpu-sharing", "In", "hami", "none")])), False),
        (placement(), False),
    ],
)
def test_disjoint_when_every_term_contradicts(other: Placement, disjoint: bool) -> None:
    assert HAMI.disjoint(other) is disjoint
    assert other.disjoint(HAMI) is disjoint


def test_the_node_selector_is_part_of_every_term() -> None:
    both = placement(
        nodeSelector={"gpu-sharing": "none"},
        affinity=affinity([expression("a", "Exists")], [expression("b", "Exists")]),
    )
    assert [[t.key for t in term] for term in both.terms] == [["gpu-sharing", "a"], ["gpu-sharing", "b"]]
    assert HAMI.disjoint(both)


def test_pools_reached_with_a_spec() -> None:
    cluster = load_cluster(str(SPECS / "hami-subset.yaml"))
    shared, whole = cluster.pools
    assert HAMI.reaches(shared, cluster) and not HAMI.reaches(whole, cluster)
    unknown = placement(nodeSelector={"zone": "a"})  # a label the spec does not know stays open
    assert unknown.reaches(shared, cluster) and unknown.reaches(whole, cluster)
