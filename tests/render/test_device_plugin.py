"""Device plugin and GFD values: runtime class, affinity, sharing config, MIG, tolerations."""

from __future__ import annotations

from render_helpers import release
from ruamel.yaml import YAML

from gpustack.render.components import nfd

SAFE = YAML(typ="safe")


def test_defaults_follow_seed_001(render_spec):
    rendered, _ = render_spec()
    values = release(rendered, "nvidia-device-plugin")
    assert values["runtimeClassName"] == "nvidia"
    assert values["gfd"] == {"enabled": True}
    # the keys the chart's GFD template reads: top level, not under gfd (its values.yaml's place)
    assert (values["sleepInterval"], values["noTimestamp"]) == ("60s", True)
    assert values["nfd"] == {"enabled": False}
    assert values["migStrategy"] == "none"
    assert "config" not in values
    assert "tolerations" not in values
    # One resources value for the plugin, GFD and the MPS daemon: requests only.
    assert set(values["resources"]) == {"requests"}
    by_name = {r.name: r for r in rendered.releases}
    assert (by_name["nvidia-device-plugin"].namespace, by_name["nvidia-device-plugin"].version) == ("kube-system", "0.20.0")


def test_affinity_matches_the_label_our_nfd_makes(render_spec):
    rendered, _ = render_spec()
    terms = release(rendered, "nvidia-device-plugin")["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]["nodeSelectorTerms"]
    keys = [term["matchExpressions"][0]["key"] for term in terms]
    assert keys == [nfd.GPU_LABEL, nfd.GPU_PRESENT_LABEL]
    pci = release(rendered, "node-feature-discovery")["worker"]["config"]["sources"]["pci"]
    assert pci["deviceLabelFields"] == ["vendor"]  # makes pci-10de.present, not pci-0302_10de.present
    assert {"0300", "0302"} <= set(pci["deviceClassWhitelist"])


def test_time_slicing_config(render_spec):
    rendered, _ = render_spec(devicePlugin={"sharing": {"strategy": "timeSlicing", "replicas": 4}})
    config = release(rendered, "nvidia-device-plugin")["config"]
    assert config["default"] == "default"
    assert SAFE.load(config["map"]["default"]) == {
        "version": "v1",
        "sharing": {
            "timeSlicing": {
                "renameByDefault": False,
                "failRequestsGreaterThanOne": True,
                "resources": [{"name": "nvidia.com/gpu", "replicas": 4}],
            }
        },
    }
    assert any("4 × `nvidia.com/gpu`" in note for note in rendered.notes["device-plugin"])


def test_mps_config_with_renamed_resource(render_spec):
    rendered, _ = render_spec(devicePlugin={"sharing": {"strategy": "mps", "replicas": 3, "renameByDefault": True}})
    config = SAFE.load(release(rendered, "nvidia-device-plugin")["config"]["map"]["default"])
    assert config["sharing"] == {
        "mps": {"renameByDefault": True, "resources": [{"name": "nvidia.com/gpu", "replicas": 3}]}
    }
    assert any("`nvidia.com/gpu.shared`" in note for note in rendered.notes["device-plugin"])


def test_mig_strategy_and_gfd_off(render_spec):
    rendered, _ = render_spec(
        nodePools=[{"name": "h100", "gpu": {"model": "H100"}}],
        devicePlugin={"migStrategy": "mixed", "gfd": {"enabled": False}},
    )
    values = release(rendered, "nvidia-device-plugin")
    assert values["migStrategy"] == "mixed"
    assert values["gfd"] == {"enabled": False}


def test_pool_taints_extend_the_chart_tolerations(render_spec):
    taint = {"key": "dedicated", "value": "gpu", "effect": "NoExecute"}
    rendered, _ = render_spec(nodePools=[{"name": "gpu", "gpu": {"model": "L4"}, "taints": [taint]}])
    tolerations = release(rendered, "nvidia-device-plugin")["tolerations"]
    assert tolerations[:2] == [
        {"key": "CriticalAddonsOnly", "operator": "Exists"},
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
    ]
    assert tolerations[2:] == [{"key": "dedicated", "operator": "Exists", "effect": "NoExecute"}]
    assert release(rendered, "node-feature-discovery")["worker"]["tolerations"] == tolerations[2:]


def test_disabled_device_plugin_renders_no_release(render_spec):
    rendered, _ = render_spec(devicePlugin={"enabled": False})
    assert "nvidia-device-plugin" not in {r.name for r in rendered.releases}
