"""The spec's DeviceClasses select exactly what they mean, by CEL evaluation on devices shaped as
NVIDIA's DRA driver publishes them (a whole GPU and its MIG devices, which carry the parent's
productName: https://github.com/NVIDIA/k8s-dra-driver-gpu/blob/main/cmd/gpu-kubelet-plugin/deviceinfo.go).
A whole-GPU class never admits a MIG device, a MIG class only MIG devices of its profile, and
GS045 is quiet on both and fires on the class without its type."""

from __future__ import annotations

import cel
import pytest

from gpustack.lint.engine import lint
from gpustack.lint.facts import dradevices
from gpustack.lint.input.load import load_text
from gpustack.lint.policy.config import Config
from gpustack.yamlio import dump

H100 = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'"
CLASSES = [
    {"name": "h100.gpustack.io", "selectors": [H100]},
    {"name": "h100-1g.gpustack.io", "selectors": [H100], "migProfile": "1g.10gb"},
]


def device(kind: str, profile: str | None = None) -> dict:
    attributes = {"type": kind, "uuid": f"{kind}-0", "productName": "NVIDIA H100 80GB HBM3", "brand": "Nvidia",
                  "architecture": "Hopper"}
    if profile:
        attributes |= {"profile": profile, "parentUUID": "GPU-0"}
    return {"driver": "gpu.nvidia.com", "attributes": {"gpu.nvidia.com": attributes}, "capacity": {"gpu.nvidia.com": {}}}


def admitted(obj: dict, candidate: dict) -> bool:
    return all(cel.evaluate(s["cel"]["expression"], {"device": candidate}) is True for s in obj["spec"]["selectors"])


@pytest.fixture
def classes(render_spec) -> dict[str, dict]:
    rendered, _ = render_spec(
        devicePlugin={"enabled": False},
        nodePools=[{"name": "h100", "gpu": {"model": "H100-80GB-SXM"}}],
        dra={"enabled": True, "driver": "nvidia", "deviceClasses": CLASSES},
    )
    return {obj["metadata"]["name"]: obj for _, obj in rendered.objects() if obj["kind"] == "DeviceClass"}


def test_the_whole_gpu_class_admits_whole_gpus_only(classes):
    whole = classes["h100.gpustack.io"]
    assert admitted(whole, device("gpu"))
    for profile in ("1g.10gb", "3g.40gb", "7g.80gb"):
        # a MIG device has no attribute the type selector lets through: CEL stops at type == 'gpu'
        assert not admitted(whole, device("mig", profile))


def test_the_mig_class_admits_its_profile_only(classes):
    mig = classes["h100-1g.gpustack.io"]
    assert admitted(mig, device("mig", "1g.10gb"))
    assert not admitted(mig, device("mig", "3g.40gb"))
    assert not admitted(mig, device("gpu"))  # `type == 'mig'` fails before `profile` is read


def test_gs045_is_quiet_on_the_rendered_classes_and_fires_without_the_type(classes):
    untyped = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "untyped"},
               "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com'"}},
                                      {"cel": {"expression": H100}}]}}
    text = "---\n".join(dump(obj) for obj in [*classes.values(), untyped])
    report = lint(load_text("classes.yaml", text), Config())
    assert [(f.rule, f.message.split(" admits")[0]) for f in report.findings if f.rule == "GS045"] == [
        ("GS045", "DeviceClass untyped")
    ]


def test_witnesses_take_the_selectors_literals():
    gpu, mig = dradevices.witnesses([H100, "device.attributes['gpu.nvidia.com'].profile == '2g.20gb'"])
    assert gpu["attributes"]["gpu.nvidia.com"]["productName"] == "NVIDIA H100 80GB HBM3"
    assert (mig["attributes"]["gpu.nvidia.com"]["type"], mig["attributes"]["gpu.nvidia.com"]["profile"]) == ("mig", "2g.20gb")
    # semver comparisons cannot be evaluated here: no verdict rather than a wrong one
    assert dradevices.admits(["device.attributes['gpu.nvidia.com'].driverVersion.isGreaterThan(semver('550.0.0'))"], gpu) is None
