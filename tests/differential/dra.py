"""DRA scenarios: pools whose GPUs NVIDIA's DRA driver publishes, and pods that claim them.

The driver publishes one device per whole GPU (type ``gpu``) and, for a GPU split into MIG
instances, one device per instance instead (type ``mig``, with its ``profile`` and its parent's
``productName``): https://github.com/NVIDIA/k8s-dra-driver-gpu/blob/main/cmd/gpu-kubelet-plugin/deviceinfo.go
(``GpuInfo.GetDevice``, ``MigDeviceInfo.GetDevice``). gpustack's spec has no MIG layout for a
DRA pool (the layout is the device plugin's), so the MIG partitions of a scenario are drawn
here and published beside the spec's whole GPUs, the way tests/cluster/test_dra_classes.py
publishes them. The partitions are not checked against the GPU's slices (the scheduler never
reads them): one or two profiles, one or two instances each, per GPU of the pool.

The classes: the driver chart's own ``gpu.nvidia.com`` (type gpu) and ``mig.nvidia.com``
(type mig), deployments/helm/dra-driver-nvidia-gpu/templates/deviceclass-*.yaml of
https://github.com/NVIDIA/k8s-dra-driver-gpu, without their ``extendedResourceName`` (the
other scenarios' pods ask for ``nvidia.com/gpu`` from the device plugin), and the spec's
classes rendered as gpustack renders them (gpustack/render/components/dra.py), with CEL
selectors on ``productName`` and, through ``migProfile``, ``type`` and ``profile``.

The pods ask, through a ResourceClaimTemplate or a ResourceClaim, for 1..N devices of a class,
with or without a selector of their own: at, under and over what one node has, a product or a
MIG profile some node has, or none has.
"""

from __future__ import annotations

import random
from typing import Any

from gpustack import charts
from gpustack.render.components import dra
from gpustack.spec.models import GpuStack
from gpustack.spec.models.components import DeviceClassSpec
from tests.differential.declared import DeclaredNode
from tests.differential.scenarios import IMAGE, KUBERNETES, MODELS, TAINTS, Scenario, _catalogue

DRIVER = "gpu.nvidia.com"
MIG_CLASS = "mig.nvidia.com"
ATTRIBUTES = f"device.attributes['{DRIVER}']"
DRIVER_CLASSES = [
    {"apiVersion": dra.API_VERSION, "kind": "DeviceClass", "metadata": {"name": DRIVER},
     "spec": {"selectors": [{"cel": {"expression": f"device.driver == '{DRIVER}' && {ATTRIBUTES}.type == 'gpu'"}}]}},
    {"apiVersion": dra.API_VERSION, "kind": "DeviceClass", "metadata": {"name": MIG_CLASS},
     "spec": {"selectors": [{"cel": {"expression": f"device.driver == '{DRIVER}' && {ATTRIBUTES}.type == 'mig'"}}]}},
]


def generate_dra(seed: int) -> Scenario:
    """A DRA scenario; its own random stream (``generate``'s seeds keep their scenarios)."""
    rng = random.Random(f"dra:{seed}")
    models = _catalogue()
    pools = [_pool(rng, index) for index in range(rng.choice((1, 1, 2)))]
    mig = {}
    for pool in pools:
        profiles = models[pool["gpu"]["model"]].migProfiles
        if profiles and rng.random() < 0.5:
            mig[pool["name"]] = dict.fromkeys(rng.sample(profiles, rng.randint(1, 2)), rng.choice((1, 2)))
    name = f"d{seed}"
    classes = [_class(rng, f"{name}-c{n}.gpustack.io", pools, models) for n in range(rng.choice((0, 1, 2)))]
    spec = {
        "apiVersion": "gpustack.io/v1alpha1", "kind": "GpuStack", "metadata": {"name": name},
        "spec": {"cluster": {"distribution": "k3s", "kubernetesVersion": KUBERNETES}, "nodePools": pools,
                 "devicePlugin": {"enabled": False},
                 "dra": {"enabled": True, "driver": "nvidia", "deviceClasses": classes}},
    }
    scenario = Scenario(seed, spec, family="d", mig=mig)
    typos = random.Random(f"dra-typo:{seed}")  # its own stream: the draws above keep their values
    for number in range(rng.randint(1, 3)):
        pod, claim = _pod(rng, f"w{number}", pools, mig, classes, models)
        if typos.random() < 0.1:
            _misspell(claim)
        scenario.workloads.append(pod)
        scenario.claims.append(claim)
    return scenario


def _misspell(claim: dict[str, Any]) -> None:
    """A selector that reads ``productNam``: the driver publishes no such attribute, so its
    evaluation fails on every device (what GS030 says)."""
    spec = claim["spec"]["spec"] if claim["kind"] == "ResourceClaimTemplate" else claim["spec"]
    exactly = spec["devices"]["requests"][0]["exactly"]
    typo = {"cel": {"expression": f"{ATTRIBUTES}.productNam.startsWith('NVIDIA')"}}
    exactly["selectors"] = [*exactly.get("selectors", []), typo]


def _pool(rng: random.Random, index: int) -> dict[str, Any]:
    pool: dict[str, Any] = {"name": f"p{index}", "count": rng.choice((1, 1, 2)),
                            "gpu": {"model": rng.choice(MODELS), "count": rng.choice((1, 2, 4))},
                            "driver": {"source": "host", "version": "595.84"}}
    if rng.random() < 0.3:
        pool["taints"] = [dict(rng.choice(TAINTS))]
    return pool


def _product(models: dict[str, Any], model: str) -> str:
    return str(models[model].product).replace("-", " ")  # as the driver publishes it (tests/cluster/agents/dra.py)


def _class(rng: random.Random, name: str, pools: list[dict[str, Any]], models: dict[str, Any]) -> dict[str, Any]:
    """A spec class: a pool's product or any, whole GPUs or a MIG profile of the product."""
    model = rng.choice(pools)["gpu"]["model"] if rng.random() < 0.7 else rng.choice(MODELS)
    found: dict[str, Any] = {"name": name, "selectors": [f"{ATTRIBUTES}.productName == '{_product(models, model)}'"]}
    profiles = models[model].migProfiles
    if profiles and rng.random() < 0.4:
        found["migProfile"] = rng.choice(profiles)
    return found


def _pod(rng: random.Random, name: str, pools: list[dict[str, Any]], mig: dict[str, dict[str, int]],
         classes: list[dict[str, Any]], models: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A pod and the template (or claim) it names: ``count`` devices of a class, maybe narrowed."""
    target = rng.choice(pools)
    model = target["gpu"]["model"]
    per_node = target["gpu"]["count"]
    kind = rng.random()
    selectors: list[str] = []
    if target["name"] in mig and kind < 0.35:
        device_class = MIG_CLASS
        profiles = [*mig[target["name"]], *(models[model].migProfiles or ())]
        profile = rng.choice(profiles)
        selectors.append(f"{ATTRIBUTES}.profile == '{profile}'")
        per_node *= mig[target["name"]].get(profile, 1)
    elif classes and kind < 0.7:
        device_class = rng.choice(classes)["name"]
    else:
        device_class = DRIVER
    if rng.random() < 0.35:
        other = model if rng.random() < 0.6 else rng.choice(MODELS)
        selectors.append(f"{ATTRIBUTES}.productName == '{_product(models, other)}'")
    exactly: dict[str, Any] = {"deviceClassName": device_class, "allocationMode": "ExactCount",
                               "count": rng.choice((1, 1, per_node, per_node + 1))}
    if selectors:
        exactly["selectors"] = [{"cel": {"expression": expression}} for expression in selectors]
    claim_name = f"{name}-gpu"
    devices = {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}
    if rng.random() < 0.7:
        claim = {"apiVersion": dra.API_VERSION, "kind": "ResourceClaimTemplate", "metadata": {"name": claim_name},
                 "spec": {"spec": devices}}
        reference = {"name": "gpu", "resourceClaimTemplateName": claim_name}
    else:
        claim = {"apiVersion": dra.API_VERSION, "kind": "ResourceClaim", "metadata": {"name": claim_name},
                 "spec": devices}
        reference = {"name": "gpu", "resourceClaimName": claim_name}
    spec: dict[str, Any] = {"resourceClaims": [reference],
                            "containers": [{"name": "main", "image": IMAGE, "resources": {"claims": [{"name": "gpu"}]}}]}
    if target.get("taints"):
        taint = target["taints"][0]
        spec["tolerations"] = [{"key": taint["key"], "operator": "Exists", "effect": taint["effect"]}]
    if rng.random() < 0.2:
        spec["nodeSelector"] = {"nvidia.com/gpu.product": models[rng.choice(MODELS)].product}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}, claim


def device_classes(scenario: Scenario) -> list[dict[str, Any]]:
    """The DeviceClasses the scenario's claims may name: the driver's, then the spec's."""
    if scenario.family != "d":
        return []
    stack = GpuStack.model_validate(scenario.spec)
    chart = charts.dra_driver_chart("nvidia")
    spec_classes = [dra.device_class(DeviceClassSpec.model_validate(c), chart) for c in stack.spec.dra.deviceClasses]
    return [*DRIVER_CLASSES, *spec_classes]


def with_mig_devices(scenario: Scenario, node: DeclaredNode) -> list[dict[str, Any]]:
    """The node's devices as the driver publishes them: a GPU of a MIG pool as its instances."""
    layout = scenario.mig.get(node.pool)
    if not layout:
        return node.gpus
    devices = []
    for gpu in node.gpus:
        parent = gpu["attributes"]
        number = 0
        for profile, count in layout.items():
            for _ in range(count):
                name = f"{gpu['name']}-mig-{number}"
                attributes = {**{k: v for k, v in parent.items() if k not in ("index", "minor")},
                              "type": {"string": "mig"}, "uuid": {"string": f"MIG-{name}-{node.name}"},
                              "parentUUID": parent["uuid"], "profile": {"string": profile}}
                memory = profile.split(".")[1].removesuffix("gb")
                devices.append({"name": name, "attributes": attributes, "capacity": {"memory": {"value": f"{memory}Gi"}}})
                number += 1
    return devices


def fits_on_a_node(scenario: Scenario, workload: dict[str, Any], own: list[DeclaredNode]) -> bool:
    """Whether one of the scenario's nodes, empty, has the devices the workload's claim asks for:
    as many as ``count`` that its class's and its own selectors admit (evaluated with the CEL
    library the lint uses). A Pending pod that fits one is waiting for devices its scenario's
    other pods hold."""
    from gpustack.lint.facts.dradevices import admits

    reference = workload["spec"]["resourceClaims"][0]
    name = reference.get("resourceClaimTemplateName") or reference.get("resourceClaimName")
    claim = next(c for c in scenario.claims if c["metadata"]["name"] == name)
    devices = claim["spec"]["spec"]["devices"] if claim["kind"] == "ResourceClaimTemplate" else claim["spec"]["devices"]
    exactly = devices["requests"][0]["exactly"]
    classes = {c["metadata"]["name"]: c for c in device_classes(scenario)}
    expressions = [s["cel"]["expression"] for s in classes[exactly["deviceClassName"]]["spec"]["selectors"]]
    expressions += [s["cel"]["expression"] for s in exactly.get("selectors", [])]

    def admitted(device: dict[str, Any]) -> bool:
        values = {key: next(iter(value.values())) for key, value in device["attributes"].items()}
        return admits(expressions, {"driver": DRIVER, "attributes": {DRIVER: values}, "capacity": {DRIVER: {}}}) is True

    return any(sum(map(admitted, node.gpus)) >= exactly["count"] for node in own)
