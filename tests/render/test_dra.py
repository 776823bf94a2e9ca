"""DRA: claim templates, extra DeviceClasses (never the drivers' own), driver root, refusals."""

from __future__ import annotations

import cel
import pytest
from render_helpers import cli, release, write_spec

from gpustack.render.components import dra
from gpustack.spec.component_checks import DRIVER_DEVICE_CLASSES

HAMI_DRA = {"devicePlugin": {"enabled": False}, "dra": {"enabled": True}}
ADA = "device.attributes['hami-core-gpu.project-hami.io'].architecture == 'Ada Lovelace'"


def objects(rendered, kind):
    return [obj for _, obj in rendered.objects() if obj["kind"] == kind]


def spec_templates(rendered):
    """The claim templates of ``dra.claimTemplates`` (the smoke Jobs' own are smoke.py's)."""
    return [obj for obj in rendered.manifests["dra"] if obj["kind"] == "ResourceClaimTemplate"]


def test_the_example_claims_30_percent_and_4gi(examples):
    rendered, _ = examples["dra-hami"]
    [template] = spec_templates(rendered)
    assert template["apiVersion"] == "resource.k8s.io/v1"
    assert template["metadata"] == {"name": "single-gpu", "namespace": "test-dra"}
    [request] = template["spec"]["spec"]["devices"]["requests"]
    assert request["exactly"] == {
        "deviceClassName": "hami-core-gpu.project-hami.io",
        "allocationMode": "ExactCount",
        "count": 1,
        "capacity": {"requests": {"cores": "30", "memory": "4Gi"}},
    }
    assert not objects(rendered, "DeviceClass")  # the driver chart owns hami-core-gpu.project-hami.io
    values = release(rendered, "hami-dra-driver")
    assert values["nvidiaDriverRoot"] == "/"
    [driver] = [r for r in rendered.releases if r.name == "hami-dra-driver"]
    assert driver.path == "chart/hami-dra-driver" and driver.repo.endswith(".git")


def test_extra_device_classes_are_gpustacks_own_and_compile(render_spec):
    rendered, _ = render_spec(
        devicePlugin={"enabled": False},
        dra={"enabled": True, "deviceClasses": [{"name": "ada.gpustack.io", "selectors": [ADA]}],
             "claimTemplates": [{"name": "ada", "deviceClassName": "ada.gpustack.io", "count": 2, "selectors": [ADA]}]},
    )
    [device_class] = objects(rendered, "DeviceClass")
    assert device_class["metadata"]["name"] not in DRIVER_DEVICE_CLASSES
    expressions = [s["cel"]["expression"] for s in device_class["spec"]["selectors"]]
    assert expressions == [
        "device.driver == 'hami-core-gpu.project-hami.io'",
        "device.attributes['hami-core-gpu.project-hami.io'].type == 'hami-gpu'",
        ADA,
    ]
    [template] = spec_templates(rendered)
    exactly = template["spec"]["spec"]["devices"]["requests"][0]["exactly"]
    assert (exactly["deviceClassName"], exactly["count"]) == ("ada.gpustack.io", 2)
    expressions += [s["cel"]["expression"] for s in exactly["selectors"]]
    device = {"driver": "hami-core-gpu.project-hami.io",
              "attributes": {"hami-core-gpu.project-hami.io": {"architecture": "Ada Lovelace", "type": "hami-gpu"}}}
    for expression in expressions:
        assert cel.compile(expression).execute({"device": device}) is True


def test_every_rendered_selector_compiles(examples):
    for rendered, _ in examples.values():
        for obj in objects(rendered, "DeviceClass") + objects(rendered, "ResourceClaimTemplate"):
            for expression in _expressions(obj):
                cel.compile(expression)


def _expressions(obj):
    if obj["kind"] == "DeviceClass":
        yield from (s["cel"]["expression"] for s in obj["spec"]["selectors"])
    else:
        for request in obj["spec"]["spec"]["devices"]["requests"]:
            yield from (s["cel"]["expression"] for s in request["exactly"].get("selectors", []))


def test_operator_driver_root_and_nvidia_values(render_spec):
    rendered, _ = render_spec(
        gpuOperator={"enabled": True},
        devicePlugin={"enabled": False},
        dra={"enabled": True, "driver": "nvidia"},
        nodePools=[{"name": "a", "gpu": {"model": "H100"}, "driver": {"source": "operator"},
                    "taints": [{"key": "dedicated", "effect": "NoSchedule"}]}],
    )
    values = release(rendered, "nvidia-dra-driver-gpu")
    assert values["nvidiaDriverRoot"] == dra.OPERATOR_DRIVER_ROOT
    assert values["gpuResourcesEnabledOverride"] is True
    # NVIDIA's chart selects GPU nodes itself; its own toleration stays next to the pool's.
    assert "affinity" not in values["kubeletPlugin"]
    assert {"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"} in values["kubeletPlugin"]["tolerations"]
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in values["kubeletPlugin"]["tolerations"]


def test_capacity_gates_reach_the_contribution(render_spec):
    rendered, _ = render_spec(
        cluster={"kubernetesVersion": "1.34"},
        devicePlugin={"enabled": False},
        dra={"enabled": True, "claimTemplates": [{"name": "c", "capacity": {"memory": "4Gi"}}]},
    )
    assert rendered.feature_gates["scheduler"] == {"DRAConsumableCapacity": True}
    assert rendered.feature_gates["controller-manager"] == {}


@pytest.mark.parametrize(
    ("spec", "where", "fragment"),
    [
        ({"cluster": {"kubernetesVersion": "1.33"}, **HAMI_DRA}, "spec.cluster.kubernetesVersion", "1.34"),
        ({"devicePlugin": {"enabled": True}, "dra": {"enabled": True}}, "spec.devicePlugin.enabled",
         "device plugin disabled"),
        ({**HAMI_DRA, "sharing": {"hami": {"enabled": True}}}, "spec.sharing.hami.enabled", "same GPUs"),
        ({**HAMI_DRA, "dra": {"enabled": True, "deviceClasses": [{"name": "gpu.nvidia.com", "selectors": ["true"]}]}},
         "spec.dra.deviceClasses[0].name", "created by the DRA driver chart"),
        ({**HAMI_DRA, "gpuOperator": {"enabled": True}, "nodePools": [
            {"name": "a", "gpu": {"model": "L4"}}, {"name": "b", "gpu": {"model": "L4"}, "driver": {"source": "operator"}}]},
         "spec.dra.driver", "one driver root"),
    ],
    ids=["kubernetes-1.33", "device-plugin", "hami-sharing", "driver-class-name", "mixed-driver-roots"],
)
def test_refusals_exit_2(tmp_path, capsys, spec, where, fragment):
    code, _, err = cli(capsys, "validate", write_spec(tmp_path, **spec))
    assert code == 2
    assert where in err and fragment in err


def test_capacity_needs_cores_or_memory(tmp_path, capsys):
    spec = {**HAMI_DRA, "dra": {"enabled": True, "claimTemplates": [{"name": "c", "capacity": {}}]}}
    code, _, err = cli(capsys, "validate", write_spec(tmp_path, **spec))
    assert code == 2 and "capacity needs cores, memory or both" in err


def test_hamis_kubelet_plugin_and_its_init_container_have_requests(render_spec):
    """The chart leaves kubeletPlugin.containers.*.resources empty; NVIDIA's chart is left as it is."""
    containers = release(render_spec(**HAMI_DRA)[0], "hami-dra-driver")["kubeletPlugin"]["containers"]
    assert {name: set(c["resources"]["requests"]) for name, c in containers.items()} == {
        "init": {"cpu", "memory"}, "gpus": {"cpu", "memory"}}
    nvidia = release(render_spec(devicePlugin={"enabled": False}, dra={"enabled": True, "driver": "nvidia"})[0],
                     "nvidia-dra-driver-gpu")
    assert "containers" not in nvidia.get("kubeletPlugin", {})
