"""Seeded scenarios: a spec's GPU pools and the GPU workloads a team would put on them.

``generate(seed)`` is a pure function of the seed: the same seed gives the same scenario on
every machine, so a disagreement is reproduced from its seed alone. A scenario is what both
sides read: the spec (the lint's context, and the nodes the control plane is given, through
``tests.cluster.nodes``) and the workloads (linted as written, applied with the isolation
of ``tests.differential.cluster``).

The draws aim at the rules' edges rather than at realism: selectors on the labels the pools
carry and on ones they do not (another pool's product, NFD's PCI class label, the bare
``nvidia.com/gpu``), tolerations that match a pool's taint, miss its value, or tolerate
everything, requests one GPU under a node's capacity, at it, and over it, MIG profiles the
layout has and has not, time-sliced and HAMi pools, init containers, several containers.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from gpustack.spec.gpu_catalogue import load_catalogue

KUBERNETES = "1.36"  # the control plane's version (tests/differential/base.yaml)
# GPUs drawn for pools: datacenter whole GPUs, MIG-capable ones, a GeForce card (PCI class 0300).
MODELS = ("L4", "T4", "L40S", "A100-80GB-SXM", "H100-80GB-SXM", "A30", "RTX-4090")
TIER_LABEL = "gpustack.test/tier"  # a pool label of the spec's own
HAMI_LABEL = "gpustack.test/hami"  # marks the pool HAMi serves (its device plugin's nodeSelector)
TAINTS = (
    {"key": "nvidia.com/gpu", "effect": "NoSchedule"},
    {"key": "dedicated", "value": "training", "effect": "NoSchedule"},
    {"key": "dedicated", "value": "inference", "effect": "NoExecute"},
    {"key": "gpustack.test/spare", "effect": "PreferNoSchedule"},  # never keeps a pod off
)
IMAGE = "nvcr.io/nvidia/cuda:13.0.1-base-ubuntu24.04"


@dataclass
class Scenario:
    seed: int
    spec: dict[str, Any]
    workloads: list[dict[str, Any]] = field(default_factory=list)
    claims: list[dict[str, Any]] = field(default_factory=list)  # PersistentVolumeClaims, DRA claims (templates)
    family: str = "s"  # s: pods (generate), r: a Deployment's rollout (generate_rollout), d: DRA (dra.py)
    mig: dict[str, dict[str, int]] = field(default_factory=dict)  # DRA: pool -> MIG instances per GPU

    @property
    def name(self) -> str:
        return f"{self.family}{self.seed}"

    def hami_pools(self) -> set[str]:
        return set(self.spec["spec"].get("sharing", {}).get("hami", {}).get("pools", []))


def _catalogue() -> dict[str, Any]:
    return {name: load_catalogue().resolve(name)[1] for name in MODELS}  # type: ignore[index]


def generate(seed: int) -> Scenario:
    rng = random.Random(seed)
    models = _catalogue()
    spec = _spec(rng, seed, models)
    while not _valid(spec):  # a layout over the GPU's slices, say: draw again (still seeded)
        spec = _spec(rng, seed, models)
    pools = spec["spec"]["nodePools"]
    scenario = Scenario(seed, spec)
    hami = sorted(scenario.hami_pools())
    for number in range(rng.randint(1, 4)):
        pod, claim = _pod_spec(rng, pools, models, hami, f"w{number}-cache")
        scenario.workloads.append(_workload(f"w{number}", pod))
        if claim:
            scenario.claims.append(claim)
    return scenario


def generate_rollout(seed: int) -> Scenario:
    """A Deployment on the pools, to be rolled out again: replicas and a GPU request around
    the pools' capacity, and each update strategy (RollingUpdate's defaults, surge only,
    unavailable first, percentages, Recreate). Its own random stream: ``generate``'s seeds
    keep their scenarios."""
    rng = random.Random(f"rollout:{seed}")
    models = _catalogue()
    spec = _spec(rng, seed, models)
    while not _valid(spec):
        spec = _spec(rng, seed, models)
    pools = spec["spec"]["nodePools"]
    target = rng.choice(pools)
    hami = sorted(Scenario(seed, spec).hami_pools())
    pod: dict[str, Any] = {"containers": [_container("serve", _limits(rng, target, models, hami))],
                           "runtimeClassName": "nvidia"}
    if target.get("taints"):
        taint = target["taints"][0]
        pod["tolerations"] = [{"key": taint["key"], "operator": "Exists", "effect": taint["effect"]}]
    if rng.random() < 0.5:
        pod["nodeSelector"] = {"nvidia.com/gpu.product": models[target["gpu"]["model"]].product}
    strategy = rng.choice(STRATEGIES)
    labels = {"app": "serve"}
    deployment = {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d0"},
        "spec": {"replicas": rng.choice((1, 1, 2, 3)), "selector": {"matchLabels": labels},
                 **({"strategy": strategy} if strategy else {}),
                 "template": {"metadata": {"labels": labels}, "spec": pod}},
    }
    return Scenario(seed, spec, [deployment], family="r")


# Update strategies as written (None: the default, RollingUpdate with 25 % / 25 %).
STRATEGIES = (
    None,
    {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
    {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}},
    {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "50%", "maxUnavailable": "50%"}},
    {"type": "Recreate"},
)


def _spec(rng: random.Random, seed: int, models: dict[str, Any]) -> dict[str, Any]:
    pools = [_pool(rng, index, models) for index in range(rng.choice((1, 1, 2, 2, 3)))]
    spec: dict[str, Any] = {
        "apiVersion": "gpustack.io/v1alpha1", "kind": "GpuStack", "metadata": {"name": f"s{seed}"},
        "spec": {"cluster": {"distribution": "k3s", "kubernetesVersion": KUBERNETES},
                 "nodePools": pools, "devicePlugin": {"gfd": {"enabled": True}}},
    }
    plain = [p for p in pools if "mig" not in p and "sharing" not in p]
    if len(pools) > 1 and plain and rng.random() < 0.3:  # HAMi serves one pool, the device plugin the others
        chosen = rng.choice(plain)
        chosen["labels"] = {**chosen.get("labels", {}), HAMI_LABEL: "on"}
        spec["spec"]["sharing"] = {"hami": {"enabled": True, "pools": [chosen["name"]]}}
    return spec


def _valid(spec: dict[str, Any]) -> bool:
    """Whether gpustack's own spec loader takes the spec (its models and cross-field checks)."""
    from pydantic import ValidationError

    from gpustack.spec.checks import check
    from gpustack.spec.models import GpuStack

    try:
        return not list(check(GpuStack.model_validate(spec), render=False))
    except ValidationError:
        return False


def _pool(rng: random.Random, index: int, models: dict[str, Any]) -> dict[str, Any]:
    model = rng.choice(MODELS)
    pool: dict[str, Any] = {"name": f"p{index}", "count": rng.choice((1, 1, 2)),
                            "gpu": {"model": model, "count": rng.choice((1, 2, 4, 8))},
                            "driver": {"source": "host", "version": "595.84"}}
    if rng.random() < 0.4:
        pool["labels"] = {TIER_LABEL: rng.choice(("a", "b"))}
    if rng.random() < 0.5:
        pool["taints"] = [dict(rng.choice(TAINTS))]
    profiles = models[model].migProfiles
    if profiles and rng.random() < 0.5:
        layout = dict.fromkeys(rng.sample(profiles, rng.randint(1, 2)), 1)
        pool["mig"] = {"strategy": "mixed", "layout": layout}
    elif rng.random() < 0.2:
        pool["sharing"] = {"strategy": "timeSlicing", "replicas": rng.choice((2, 4)),
                           "renameByDefault": rng.random() < 0.3}
    return pool


def _pod_spec(rng: random.Random, pools: list[dict[str, Any]], models: dict[str, Any], hami: list[str],
              claim_name: str) -> tuple[dict[str, Any], dict[str, Any] | None]:
    target = rng.choice(pools)
    spec: dict[str, Any] = {"containers": [_container("main", _limits(rng, target, models, hami))]}
    if rng.random() < 0.2:
        spec["containers"].append(_container("sidecar", _limits(rng, target, models, hami)))
    if rng.random() < 0.15:
        spec["initContainers"] = [_container("fetch", _limits(rng, target, models, hami))]
    if rng.random() < 0.6:
        spec["nodeSelector"] = dict([_label_pick(rng, target, models)])
    if rng.random() < 0.35:
        spec["affinity"] = _affinity(rng, target, models)
    tolerations = _tolerations(rng, target)
    if tolerations:
        spec["tolerations"] = tolerations
    if rng.random() < 0.5:
        spec["runtimeClassName"] = "nvidia"  # K3s registers it (tests/cluster/control_plane.py)
    claim = None
    if rng.random() < 0.1:
        spec["volumes"] = [{"name": "cache", "persistentVolumeClaim": {"claimName": claim_name}}]
        spec["containers"][0]["volumeMounts"] = [{"name": "cache", "mountPath": "/cache"}]
        claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": claim_name},
                 "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}}}}
    return spec, claim


def _container(name: str, limits: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "image": IMAGE, "resources": {"limits": limits}}


def _limits(rng: random.Random, pool: dict[str, Any], models: dict[str, Any], hami: list[str]) -> dict[str, Any]:
    """A GPU request around what one node of ``pool`` offers (below, at, above), or a MIG
    profile it has or has not, or HAMi's memory."""
    per_node = pool["gpu"]["count"]
    model = models[pool["gpu"]["model"]]
    if "mig" in pool and rng.random() < 0.8:
        profiles = list(pool["mig"]["layout"]) if rng.random() < 0.6 else list(model.migProfiles or ("1g.10gb",))
        return {f"nvidia.com/mig-{rng.choice(profiles)}": 1}
    if pool["name"] in hami and rng.random() < 0.5:
        # HAMi's memory per vGPU: within a card, or over every card of the node (the
        # per-card fit is HAMi's own scheduler's, which the harness does not run).
        memory = rng.choice((model.memoryMiB // 2, model.memoryMiB * per_node + 1024))
        return {"nvidia.com/gpu": 1, "nvidia.com/gpumem": memory}
    name = "nvidia.com/gpu"
    sharing = pool.get("sharing")
    if sharing:
        per_node *= sharing["replicas"]
        if sharing["renameByDefault"] and rng.random() < 0.8:
            name = "nvidia.com/gpu.shared"
    if pool["name"] in hami:
        # vGPUs: HAMi's scheduler gives each its own card, which kube-scheduler does not know;
        # it sees GPUs × splitCount (10) per node, so draw around that bound only.
        return {name: rng.choice((1, 1, per_node, per_node * 10 + 1))}
    return {name: rng.choice((1, 1, per_node, per_node, per_node + 1, 16))}


def _label_pick(rng: random.Random, target: dict[str, Any], models: dict[str, Any]) -> tuple[str, str]:
    """A node label (key, value): the target pool's, another's, or one no pool carries."""
    model = models[target["gpu"]["model"]]
    choices = [
        ("nvidia.com/gpu.product", model.product),
        ("nvidia.com/gpu.product", models[rng.choice(MODELS)].product),
        ("nvidia.com/gpu.family", model.architecture),
        ("nvidia.com/gpu.count", str(target["gpu"]["count"])),
        ("nvidia.com/mig.capable", "true"),
        ("feature.node.kubernetes.io/pci-10de.present", "true"),
        ("feature.node.kubernetes.io/pci-0300_10de.present", "true"),
        ("feature.node.kubernetes.io/pci-0302_10de.present", "true"),
        ("nvidia.com/gpu.present", "true"),
        ("nvidia.com/gpu", "true"),
        (TIER_LABEL, rng.choice(("a", "b"))),
        ("kubernetes.io/os", "linux"),  # a label the spec does not describe: never judged
    ]
    return rng.choice(choices)


def _affinity(rng: random.Random, target: dict[str, Any], models: dict[str, Any]) -> dict[str, Any]:
    terms = []
    for _ in range(rng.choice((1, 1, 2))):
        expressions = []
        for _ in range(rng.choice((1, 2))):
            key, value = _label_pick(rng, target, models)
            operator = rng.choice(("In", "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"))
            if operator in ("Gt", "Lt"):
                key, value = "nvidia.com/gpu.count", str(rng.choice((1, 2, 4, 8)))
            expression: dict[str, Any] = {"key": key, "operator": operator}
            if operator not in ("Exists", "DoesNotExist"):
                expression["values"] = [value]
            expressions.append(expression)
        terms.append({"matchExpressions": expressions})
    affinity: dict[str, Any] = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}
    if rng.random() < 0.3:  # a preference never blocks
        affinity["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": 10, "preference": {"matchExpressions": [{"key": TIER_LABEL, "operator": "In", "values": ["z"]}]}}]
    return {"nodeAffinity": affinity}


def _tolerations(rng: random.Random, target: dict[str, Any]) -> list[dict[str, Any]]:
    taint = (target.get("taints") or [rng.choice(TAINTS)])[0]
    draw = rng.random()
    if draw < 0.25:
        return []
    if draw < 0.5:  # exactly the taint
        return [{k: v for k, v in {"key": taint["key"], "operator": "Equal" if "value" in taint else "Exists",
                                   "value": taint.get("value"), "effect": taint["effect"]}.items() if v is not None}]
    if draw < 0.65:  # the key, any value and effect
        return [{"key": taint["key"], "operator": "Exists"}]
    if draw < 0.75:  # the wrong value
        return [{"key": taint["key"], "operator": "Equal", "value": "other", "effect": taint["effect"]}]
    if draw < 0.85:  # the wrong effect
        return [{"key": taint["key"], "operator": "Exists", "effect": "PreferNoSchedule"}]
    if draw < 0.9:  # everything
        return [{"operator": "Exists"}]
    other = rng.choice(TAINTS)  # another pool's taint, or none
    return [{"key": other["key"], "operator": "Exists", "effect": other["effect"]}] if rng.random() < 0.5 else []


def _workload(name: str, pod: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": pod}
