"""Kubernetes feature gates as data: stage and default per minor version, and who reads them.

The table is upstream's (``kubernetes/kubernetes:pkg/features/kube_features.go`` for
the stages, the KEPs' ``kep.yaml`` for the components). ``component_gates`` turns the
cluster's version, the user's ``cluster.featureGates`` and the features a spec uses into the
``--feature-gates`` each component needs: only gates whose wanted value differs from that
version's default, and only on the components that read them.
``DRAConsumableCapacity`` for capacity claims is therefore set on apiserver, scheduler and
kubelet for 1.34 and 1.35, and on nothing from 1.36, where it is beta and on.

Component names are ``gpustack.render.component.GATE_COMPONENTS``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

Stage = Literal["alpha", "beta", "ga"]
Feature = Literal["dra", "dra-consumable-capacity"]

APISERVER, CONTROLLER_MANAGER, SCHEDULER, KUBELET = "apiserver", "controller-manager", "scheduler", "kubelet"
ALL_COMPONENTS = (APISERVER, CONTROLLER_MANAGER, SCHEDULER, KUBELET)


@dataclass(frozen=True)
class GateState:
    """A gate in one Kubernetes minor: its stage, its default, and whether it is locked."""

    stage: Stage
    default: bool
    locked: bool = False


@dataclass(frozen=True)
class Gate:
    name: str
    components: tuple[str, ...]
    states: Mapping[int, GateState]  # Kubernetes minor → state; absent: the gate does not exist

    def state(self, minor: int) -> GateState | None:
        """The state in ``minor``; past the table's last minor, the last known state."""
        if minor in self.states:
            return self.states[minor]
        if minor > max(self.states):
            return self.states[max(self.states)]
        return None


ALPHA_OFF = GateState("alpha", False)
BETA_ON = GateState("beta", True)
BETA_OFF = GateState("beta", False)
GA_ON = GateState("ga", True)
GA_LOCKED = GateState("ga", True, locked=True)

_DRA_CORE = (APISERVER, CONTROLLER_MANAGER, SCHEDULER)

# Stages per minor version (see the module docstring); 1.37 is the newest minor it covers.
GATES: Mapping[str, Gate] = {
    gate.name: gate
    for gate in (
        # GA and on in 1.34, locked from 1.35; read by every DRA component.
        Gate("DynamicResourceAllocation", ALL_COMPONENTS, {34: GA_ON, 35: GA_LOCKED, 36: GA_LOCKED, 37: GA_LOCKED}),
        Gate("DRAPrioritizedList", _DRA_CORE, {34: BETA_ON, 35: BETA_ON, 36: GA_ON, 37: GA_LOCKED}),
        Gate("DRAAdminAccess", _DRA_CORE, {34: BETA_ON, 35: BETA_ON, 36: GA_LOCKED, 37: GA_LOCKED}),
        Gate(
            "DRAConsumableCapacity",
            (APISERVER, SCHEDULER, KUBELET),
            {34: ALPHA_OFF, 35: ALPHA_OFF, 36: BETA_ON, 37: BETA_ON},
        ),
        Gate("DRAExtendedResource", ALL_COMPONENTS, {34: ALPHA_OFF, 35: ALPHA_OFF, 36: BETA_ON, 37: GA_ON}),
        Gate(
            "DRAPartitionableDevices",
            (APISERVER, SCHEDULER),
            {34: ALPHA_OFF, 35: ALPHA_OFF, 36: BETA_ON, 37: BETA_ON},
        ),
        Gate("DRADeviceTaints", _DRA_CORE, {34: ALPHA_OFF, 35: ALPHA_OFF, 36: BETA_ON, 37: GA_ON}),
        Gate("DRADeviceTaintRules", _DRA_CORE, {35: ALPHA_OFF, 36: BETA_OFF, 37: GA_ON}),
    )
}

# What each spec feature needs switched on.
FEATURE_GATES: Mapping[Feature, tuple[str, ...]] = {
    "dra": ("DynamicResourceAllocation",),
    "dra-consumable-capacity": ("DRAConsumableCapacity",),
}


def gate_problems(*, minor: int, gates: Mapping[str, bool]) -> list[tuple[str, str]]:
    """``(gate, message)`` for each known gate the components of ``1.<minor>`` would refuse."""
    problems = []
    for name, wanted in gates.items():
        gate = GATES.get(name)
        if gate is None:
            continue
        state = gate.state(minor)
        if state is None:
            problems.append((name, f"feature gate {name} does not exist in Kubernetes 1.{minor}"))
        elif state.locked and wanted != state.default:
            locked_to, given = str(state.default).lower(), str(wanted).lower()
            problems.append(
                (
                    name,
                    f"feature gate {name} is {state.stage.upper()} and locked to {locked_to} in "
                    f"Kubernetes 1.{minor}: the components refuse to start with {name}={given}",
                )
            )
    return problems


def component_gates(
    *, minor: int, user_gates: Mapping[str, bool], features: Iterable[Feature]
) -> dict[str, dict[str, bool]]:
    """Per component, the gates to pass: wanted values that differ from the version's default.

    ``user_gates`` (``cluster.featureGates``) win over what ``features`` need (the cross-field
    checks refuse a user ``false`` for a gate the spec needs). Gates the table does not know are
    passed as given, on every component: gpustack cannot know their default, and every
    component shares Kubernetes' gate registry.
    """
    wanted: dict[str, bool] = {name: True for feature in features for name in FEATURE_GATES[feature]}
    wanted.update(user_gates)
    result: dict[str, dict[str, bool]] = {}
    for name, value in sorted(wanted.items()):
        gate = GATES.get(name)
        state = gate.state(minor) if gate else None
        if state is not None and state.default == value:
            continue
        for component in gate.components if gate else ALL_COMPONENTS:
            result.setdefault(component, {})[name] = value
    return {component: result[component] for component in ALL_COMPONENTS if component in result}
