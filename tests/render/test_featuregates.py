"""Feature gates from the per-version table: only what differs from the default, only where read."""

from __future__ import annotations

import pytest
from ruamel.yaml import YAML

from gpustack.render.component import GATE_COMPONENTS
from gpustack.spec import featuregates
from gpustack.spec.featuregates import GATES, component_gates, gate_problems

CAPACITY_CLAIM = {
    "devicePlugin": {"enabled": False},
    "dra": {"enabled": True, "claimTemplates": [{"name": "c", "capacity": {"cores": 30, "memory": "4Gi"}}]},
}
CONSUMABLE = {"apiserver": {"DRAConsumableCapacity": True}, "scheduler": {"DRAConsumableCapacity": True},
              "kubelet": {"DRAConsumableCapacity": True}}


@pytest.mark.parametrize(("minor", "expected"), [(34, CONSUMABLE), (35, CONSUMABLE), (36, {}), (37, {})])
def test_consumable_capacity_only_where_it_is_off_by_default(minor, expected):
    features = ["dra", "dra-consumable-capacity"]
    assert component_gates(minor=minor, user_gates={}, features=features) == expected


def test_user_gates_emit_only_what_differs_from_the_default():
    # Beta and on in 1.35: nothing to pass; alpha and off in 1.35: on its four components.
    gates = component_gates(minor=35, user_gates={"DRAPrioritizedList": True, "DRAExtendedResource": True}, features=[])
    assert gates == {component: {"DRAExtendedResource": True} for component in GATE_COMPONENTS}


def test_user_false_switches_a_default_on_gate_off_on_its_components_only():
    gates = component_gates(minor=36, user_gates={"DRAPartitionableDevices": False}, features=[])
    assert gates == {"apiserver": {"DRAPartitionableDevices": False}, "scheduler": {"DRAPartitionableDevices": False}}


def test_unknown_gates_go_to_every_component_as_given():
    gates = component_gates(minor=36, user_gates={"SomeFutureGate": True}, features=[])
    assert gates == {component: {"SomeFutureGate": True} for component in GATE_COMPONENTS}


def test_minors_past_the_table_use_its_last_row():
    assert GATES["DRAConsumableCapacity"].state(40) == GATES["DRAConsumableCapacity"].state(37)
    assert GATES["DRADeviceTaintRules"].state(34) is None


def test_locked_and_missing_gates_are_problems():
    assert [g for g, _ in gate_problems(minor=35, gates={"DynamicResourceAllocation": False})] == [
        "DynamicResourceAllocation"
    ]
    assert gate_problems(minor=35, gates={"DynamicResourceAllocation": True}) == []
    assert "does not exist" in gate_problems(minor=34, gates={"DRADeviceTaintRules": True})[0][1]
    assert gate_problems(minor=36, gates={"NotInTheTable": False}) == []


def test_the_table_covers_1_34_to_1_37_with_known_components():
    for gate in GATES.values():
        assert set(gate.components) <= set(GATE_COMPONENTS)
        assert set(gate.states) <= {34, 35, 36, 37}
        assert gate.state(37) is not None
    for gates in featuregates.FEATURE_GATES.values():
        assert set(gates) <= set(GATES)


def test_k3s_config_carries_the_gates_per_component(render_spec):
    _, tree = render_spec(cluster={"kubernetesVersion": "1.35"}, **CAPACITY_CLAIM)
    config = YAML(typ="safe").load(tree["cluster/config.yaml"])
    flag = ["feature-gates=DRAConsumableCapacity=true"]
    assert config == {"kube-apiserver-arg": flag, "kube-scheduler-arg": flag, "kubelet-arg": flag}


def test_k3s_1_36_needs_no_gate_for_capacity(render_spec):
    rendered, tree = render_spec(**CAPACITY_CLAIM)
    assert YAML(typ="safe").load(tree["cluster/config.yaml"]) == {}
    assert any("beta and on by default" in note for note in rendered.notes["dra"])


def test_kubeadm_1_34_sets_apiserver_scheduler_and_kubelet(render_spec):
    _, tree = render_spec(cluster={"distribution": "kubeadm", "kubernetesVersion": "1.34"}, **CAPACITY_CLAIM)
    cluster, kubelet = YAML(typ="safe").load_all(tree["cluster/kubeadm-config.yaml"])
    gate = [{"name": "feature-gates", "value": "DRAConsumableCapacity=true"}]
    bind = [{"name": "bind-address", "value": "0.0.0.0"}]  # control-plane metrics (render/control_plane.py)
    # The API server's gates, then its Pod Security defaults (stackfiles/pod_security_admission.py).
    assert cluster["apiServer"]["extraArgs"][:1] == gate and cluster["scheduler"]["extraArgs"] == gate + bind
    assert cluster["controllerManager"]["extraArgs"] == bind
    assert kubelet["featureGates"] == {"DRAConsumableCapacity": True}
