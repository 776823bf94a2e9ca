"""Per-pool GPU partitioning: device plugin configs per pool, MIG layouts, node labels."""

from __future__ import annotations

from render_helpers import release
from ruamel.yaml import YAML

from gpustack.lint.facts.from_spec import facts_of
from gpustack.render.components import partitioning
from gpustack.spec.gpu_catalogue import load_catalogue
from gpustack.spec.partitioning import mig_slices

yaml = YAML(typ="safe")

H100_MIG = {
    "name": "h100",
    "gpu": {"model": "H100-80GB-SXM", "count": 8},
    "mig": {"strategy": "mixed", "layout": {"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1}},
}
DESK_SLICED = {"name": "desk", "gpu": {"model": "RTX-4090", "count": 2}, "sharing": {"strategy": "timeSlicing", "replicas": 4}}


def test_the_fleet_example_partitions_each_pool_through_the_operator(examples):
    rendered, tree = examples["kubeadm-mig-fleet"]
    values = release(rendered, "gpu-operator")
    config = values["devicePlugin"]["config"]
    assert config["default"] == "default" and config["create"] is True
    data = {name: yaml.load(text) for name, text in config["data"].items()}
    assert data["h100"] == {"version": "v1", "flags": {"migStrategy": "mixed"}}
    assert data["rtx4090"]["sharing"]["timeSlicing"]["resources"] == [{"name": "nvidia.com/gpu", "replicas": 4}]
    assert data["default"] == {"version": "v1", "flags": {"migStrategy": "none"}}
    assert values["mig"] == {"strategy": "mixed"}
    mig = values["migManager"]["config"]
    assert (mig["create"], mig["default"]) == (True, "all-disabled")
    parted = yaml.load(mig["data"]["config.yaml"])
    assert parted["mig-configs"]["h100"] == [
        {"devices": "all", "mig-enabled": True, "mig-devices": {"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1}}
    ]
    assert parted["mig-configs"]["all-disabled"] == [{"devices": "all", "mig-enabled": False}]
    # The pools register with the selecting labels (their JoinConfigurations); the README says so.
    assert "value: gpustack.io/pool=h100,nvidia.com/device-plugin.config=h100,nvidia.com/mig.config=h100" in tree[
        "cluster/join-h100.yaml"
    ]
    assert "Nodes of pool `h100` register with `nvidia.com/device-plugin.config=h100 nvidia.com/mig.config=h100`" in tree[
        "README.md"
    ]


def test_the_standalone_plugin_takes_the_strategy_from_each_config(render_spec):
    rendered, tree = render_spec(nodePools=[H100_MIG, DESK_SLICED])
    values = release(rendered, "nvidia-device-plugin")
    # The chart's migStrategy value becomes an env var that overrides every config file.
    assert "migStrategy" not in values
    configs = {name: yaml.load(text) for name, text in values["config"]["map"].items()}
    assert set(configs) == {"default", "h100", "desk"} and values["config"]["default"] == "default"
    assert configs["h100"]["flags"] == {"migStrategy": "mixed"}
    assert configs["desk"]["flags"] == {"migStrategy": "none"}
    parted = yaml.load(tree[partitioning.MIG_PARTED_FILE])
    assert parted["mig-configs"]["h100"][0]["mig-devices"] == H100_MIG["mig"]["layout"]
    readme = tree["README.md"]
    assert "nvidia-mig-parted apply -f mig/config.yaml -c h100" in readme
    # Labels the spec does not list are rendered into each pool's registration (K3s flags).
    assert "--node-label nvidia.com/device-plugin.config=desk" in readme
    assert "--node-label nvidia.com/device-plugin.config=h100" in readme


def test_without_pool_settings_the_values_stay_cluster_wide(render_spec):
    values = release(render_spec(devicePlugin={"sharing": {"strategy": "timeSlicing", "replicas": 2}})[0], "nvidia-device-plugin")
    assert values["migStrategy"] == "none"
    assert set(values["config"]["map"]) == {"default"}
    assert "flags" not in yaml.load(values["config"]["map"]["default"])


def test_lint_sees_what_each_pool_advertises(examples):
    rendered, _ = examples["kubeadm-mig-fleet"]
    pools = {pool.name: pool for pool in facts_of(rendered.ctx.stack, "fleet.yaml").pools}
    assert pools["h100"].resources == {"nvidia.com/mig-1g.10gb", "nvidia.com/mig-2g.20gb", "nvidia.com/mig-3g.40gb"}
    assert pools["rtx4090"].resources == {"nvidia.com/gpu"}
    assert pools["rtx4090"].units_per_node() == 8  # 2 GPUs × 4 time slices


def test_mig_slices_follow_the_catalogue():
    catalogue = load_catalogue()
    h100 = catalogue.resolve("H100-80GB-SXM")[1]
    a100 = catalogue.resolve("A100-40GB-SXM")[1]
    h200 = catalogue.resolve("H200-141GB-SXM")[1]
    assert [mig_slices(p, h100) for p in ("1g.10gb", "1g.20gb", "3g.40gb", "7g.80gb")] == [(1, 1), (1, 2), (3, 4), (7, 8)]
    assert [mig_slices(p, a100) for p in ("1g.5gb", "2g.10gb", "4g.20gb")] == [(1, 1), (2, 2), (4, 4)]
    assert mig_slices("1g.18gb", h200) == (1, 1) and mig_slices("3g.71gb", h200) == (3, 4)
    assert mig_slices("1g.5gb", h100) is None
