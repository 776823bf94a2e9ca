"""Cluster facts from a spec, and the pod-on-pool helpers the context rules share."""

from __future__ import annotations

import marshal
from fractions import Fraction
from pathlib import Path

import pytest

from gpustack.lint.facts.from_spec import load_cluster
from gpustack.lint.facts.podspec import LabelTest, extract_pod_specs
from gpustack.lint.facts.pools import NFD_GPU_LABEL, ClusterFacts, Taint
from gpustack.lint.facts.scheduling import (
    Usage,
    capacity,
    label_test_holds,
    placeable_pools,
    reachable_pools,
    shortfall,
    usage,
)
from gpustack.lint.input.cache import Cache
from gpustack.lint.input.load import load_text

SPECS = Path(__file__).parent / "specs"


def pod(text: str):  # type: ignore[no-untyped-def]
    (resource,) = load_text("pod.yaml", text).resources
    (found,) = extract_pod_specs(resource)
    return found


def gpu_pod(resources: str, extra: str = "") -> str:
    return (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n" + extra
        + f"  containers:\n    - {{name: c, image: x, resources: {{limits: {resources}}}}}\n"
    )


def test_facts_of_the_seed_l4_with_hami() -> None:
    cluster = load_cluster(str(SPECS / "l4-hami.yaml"))
    (pool,) = cluster.pools
    assert (cluster.distribution, cluster.minor, cluster.nodes) == ("k3s", 36, 1)
    assert (pool.gpu.product, pool.gpu.memory_mib, pool.gpu.mig_capable) == ("NVIDIA-L4", 23034, False)
    assert (pool.sharing.strategy, pool.sharing.replicas) == ("hami", 10)
    assert "nvidia.com/gpumem" in pool.resources
    # No device plugin, so no GFD: only NFD's vendor label (deviceLabelFields: [vendor]).
    assert pool.labels == {NFD_GPU_LABEL: "true"}
    assert cluster.gates["DRAConsumableCapacity"] is True  # beta and on in 1.36


def test_gates_follow_version_defaults_then_the_spec() -> None:
    default_135 = load_cluster(str(SPECS / "kubeadm-1.35.yaml"))
    assert default_135.gates["DRAConsumableCapacity"] is False
    assert default_135.gates["DRAAdminAccess"] is True
    gated = load_cluster(str(SPECS / "k3s-1.35-gates.yaml"))
    assert (gated.gates["DRAConsumableCapacity"], gated.gates["DRAAdminAccess"]) == (True, False)
    assert load_cluster(str(SPECS / "k3s-1.33.yaml")).gate("DRAExtendedResource") is False


def test_gfd_labels_under_the_operator_and_time_slicing() -> None:
    a100, l40s = load_cluster(str(SPECS / "kubeadm-1.35.yaml")).pools
    assert a100.labels["nvidia.com/gpu.product"] == "NVIDIA-A100-SXM4-80GB"
    assert a100.labels["nvidia.com/gpu.present"] == "true"
    assert (a100.labels["nvidia.com/gpu.count"], a100.labels["nvidia.com/mig.capable"]) == ("8", "true")
    assert a100.labels["nvidia.com/gpu.machine"] is None  # present, value unknown
    assert l40s.labels["team"] == "inference"
    (fleet,) = load_cluster(str(SPECS / "time-slicing-fleet.yaml")).pools
    assert fleet.resources == {"nvidia.com/gpu.shared"}
    assert fleet.labels["nvidia.com/gpu.sharing-strategy"] == "time-slicing"
    assert capacity(fleet) == Usage(units=Fraction(600))


@pytest.mark.parametrize(
    ("operator", "values", "labels", "holds"),
    [
        ("In", ("NVIDIA-L4",), {"k": "NVIDIA-L4"}, True),
        ("In", ("NVIDIA-L4",), {}, False),
        ("In", ("x",), {"k": None}, True),  # unknown value: may match
        ("NotIn", ("x",), {}, True),
        ("NotIn", ("x",), {"k": "x"}, False),
        ("Exists", (), {"k": None}, True),
        ("DoesNotExist", (), {"k": "y"}, False),
        ("Gt", ("20000",), {"k": "23034"}, True),
        ("Lt", ("20000",), {"k": "23034"}, False),
        ("Gt", ("1",), {"k": "many"}, False),
    ],
)
def test_label_tests(operator: str, values: tuple[str, ...], labels: dict[str, str | None], holds: bool) -> None:
    test = LabelTest("k", operator, values, (), None, True)
    assert label_test_holds(test, labels) is holds


@pytest.mark.parametrize(
    ("toleration", "tolerated"),
    [
        ({"key": "nvidia.com/gpu", "operator": "Exists"}, True),
        ({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoExecute"}, False),
        ({"operator": "Exists"}, True),
        ({"key": "nvidia.com/gpu", "value": "present"}, True),  # Equal is the default operator
        ({"key": "nvidia.com/gpu", "operator": "Equal", "value": "other"}, False),
        ({"key": "other", "operator": "Exists"}, False),
    ],
)
def test_taint_toleration(toleration: dict[str, str], tolerated: bool) -> None:
    assert Taint("nvidia.com/gpu", "present", "NoSchedule").tolerated_by(toleration) is tolerated


def test_pools_a_pod_reaches_and_fits() -> None:
    cluster = load_cluster(str(SPECS / "kubeadm-1.35.yaml"))
    tolerant = "  tolerations: [{operator: Exists}]\n"
    assert reachable_pools(pod(gpu_pod("{nvidia.com/gpu: 1}")), cluster) == ()
    one, eight = pod(gpu_pod("{nvidia.com/gpu: 1}", tolerant)), pod(gpu_pod("{nvidia.com/gpu: 8}", tolerant))
    assert [p.name for p in reachable_pools(one, cluster)] == ["a100", "l40s"]
    assert [p.name for p in placeable_pools(eight, cluster)] == ["a100"]  # 4 L40S per node


def test_pods_that_ask_alike_share_a_placement_but_not_its_places() -> None:
    """Placements are worked out once per node selection, tolerations and asks (the cluster's
    and pools' memos): pods that differ only in where they write an ask keep their own paths."""
    cluster = load_cluster(str(SPECS / "kubeadm-1.35.yaml"))
    tolerant = "  tolerations: [{operator: Exists}]\n"
    first = pod(gpu_pod("{nvidia.com/gpu: 8}", tolerant))
    second = pod(gpu_pod("{nvidia.com/gpu: 8}", tolerant + "  initContainers: [{name: i, image: x}]\n").replace(
        "    - {name: c,", "    - {name: side, image: y}\n    - {name: c,"
    ))
    l40s = next(pool for pool in cluster.pools if pool.name == "l40s")
    assert reachable_pools(first, cluster) == reachable_pools(second, cluster) == tuple(
        pool for pool in cluster.pools if pool.name in ("a100", "l40s")
    )
    assert shortfall(first, l40s).path == ("spec", "containers", 0, "resources", "limits", "nvidia.com/gpu")
    assert shortfall(second, l40s).path == ("spec", "containers", 1, "resources", "limits", "nvidia.com/gpu")
    assert reachable_pools(pod(gpu_pod("{nvidia.com/gpu: 8}")), cluster) == ()  # no toleration: none


def test_hami_usage_defaults_to_the_whole_card() -> None:
    (pool,) = load_cluster(str(SPECS / "l4-hami.yaml")).pools
    share = pod(gpu_pod("{nvidia.com/gpu: 1, nvidia.com/gpumem: 8000, nvidia.com/gpucores: 40}"))
    assert usage(share, pool) == Usage(Fraction(1), Fraction(8000), Fraction(40))
    assert usage(pod(gpu_pod("{nvidia.com/gpu: 1}")), pool) == Usage(Fraction(1), Fraction(23034), Fraction(0))
    assert usage(pod(gpu_pod("{nvidia.com/gpumem-percentage: 50}")), pool).memory_mib == Fraction(11517)


@pytest.mark.parametrize("spec", sorted(SPECS.glob("*.yaml")), ids=lambda path: path.stem)
def test_cluster_facts_as_plain_data_and_back(spec: Path) -> None:
    facts = load_cluster(str(spec))
    assert ClusterFacts.from_plain(marshal.loads(marshal.dumps(facts.plain()))) == facts


def test_the_cache_keeps_a_specs_facts_by_its_content(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A second lint with the same spec takes its facts from the cache, without the spec
    loader; an edited spec, or an entry of another shape, is read again."""
    import gpustack.spec.load as spec_load

    spec = tmp_path / "spec.yaml"
    spec.write_text((SPECS / "kubeadm-1.35.yaml").read_text())
    first = Cache(tmp_path / "cache")
    facts = load_cluster(str(spec), first)
    first.close()
    read = []
    real = spec_load.load_spec
    monkeypatch.setattr(spec_load, "load_spec", lambda *args, **kwargs: read.append(args) or real(*args, **kwargs))
    assert load_cluster(str(spec), Cache(tmp_path / "cache")) == facts and read == []
    spec.write_text((SPECS / "l4.yaml").read_text())
    assert load_cluster(str(spec), Cache(tmp_path / "cache")) != facts and len(read) == 1
    damaged = Cache(tmp_path / "cache")
    damaged.put("cluster", damaged.cluster_key(str(spec)), ("not", "facts"))
    damaged.close()
    assert load_cluster(str(spec), Cache(tmp_path / "cache")) == load_cluster(str(spec)) and len(read) == 3
