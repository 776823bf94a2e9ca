"""GPU Operator values: the operator owns toolkit, device plugin and GFD; one NFD; driver per pool."""

from __future__ import annotations

import pytest
from render_helpers import release
from ruamel.yaml import YAML

from gpustack.cli import main
from gpustack.errors import GpustackError, SpecError
from gpustack.render import write
from gpustack.render.components import gpu_operator
from gpustack.render.requests import REQUESTS
from gpustack.spec.pools import SKIP_DRIVER_LABEL as SKIP

OPERATOR_POOL = {"name": "a100", "gpu": {"model": "A100-80GB"}, "driver": {"source": "operator"}}
HOST_POOL = {"name": "l4", "gpu": {"model": "L4"}, "labels": {"pool": "l4"}}


def test_operator_replaces_the_standalone_device_plugin(examples):
    rendered, files = examples["kubeadm-gpu-operator"]
    names = {r.name for r in rendered.releases}
    assert {"gpu-operator", "node-feature-discovery"} <= names
    assert "nvidia-device-plugin" not in names
    values = release(rendered, "gpu-operator")
    assert values["nfd"] == {"enabled": False}  # gpustack's NFD release is the only one
    assert values["driver"]["enabled"] is True
    assert values["devicePlugin"]["enabled"] is True
    assert values["toolkit"]["enabled"] is True
    assert values["mig"] == {"strategy": "none"}
    assert "RuntimeClass" not in files["manifests/kustomization.yaml"] + "".join(
        text for path, text in files.items() if path.startswith("manifests/")
    )


def test_k3s_toolkit_env_points_at_k3s_containerd(render_spec):
    rendered, _ = render_spec(gpuOperator={"enabled": True}, nodePools=[OPERATOR_POOL])
    env = {e["name"]: e["value"] for e in release(rendered, "gpu-operator")["toolkit"]["env"]}
    assert env == {
        "CONTAINERD_CONFIG": "/var/lib/rancher/k3s/agent/etc/containerd/config.toml",
        "CONTAINERD_SOCKET": "/run/k3s/containerd/containerd.sock",
        "CONTAINERD_SET_AS_DEFAULT": "false",
        "ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED": "false",
    }


LABELLED_HOST_POOL = {**HOST_POOL, "labels": {"pool": "l4", SKIP: "false"}}


def test_host_driver_pools_are_labelled_out(render_spec):
    rendered, _ = render_spec(gpuOperator={"enabled": True}, nodePools=[OPERATOR_POOL, LABELLED_HOST_POOL])
    assert release(rendered, "gpu-operator")["driver"]["enabled"] is True
    note = next(n for n in rendered.notes["gpu-operator"] if "gpu.deploy.driver=false" in n)
    assert f"`-l {SKIP}=false,pool=l4`" in note


def test_a_host_pool_without_the_label_is_refused(render_spec):
    """Rendered, it would lint with GS035: validate refuses it with what to add."""
    with pytest.raises(SpecError, match="nvidia.com/gpu.deploy.driver"):
        render_spec(gpuOperator={"enabled": True}, nodePools=[OPERATOR_POOL, HOST_POOL])


def test_only_host_drivers_disable_the_driver_container(render_spec):
    rendered, _ = render_spec(gpuOperator={"enabled": True}, nodePools=[HOST_POOL])
    assert release(rendered, "gpu-operator")["driver"] == {"enabled": False}


def test_sharing_config_goes_to_the_operator(render_spec):
    rendered, _ = render_spec(
        gpuOperator={"enabled": True},
        nodePools=[OPERATOR_POOL],
        devicePlugin={"sharing": {"strategy": "timeSlicing", "replicas": 2}},
    )
    config = release(rendered, "gpu-operator")["devicePlugin"]["config"]
    assert config["create"] is True and config["default"] == "default"
    shared = YAML(typ="safe").load(config["data"]["default"])["sharing"]["timeSlicing"]
    assert shared["resources"] == [{"name": "nvidia.com/gpu", "replicas": 2}]


def test_one_driver_version_per_chart(render_spec):
    pools = [
        {**OPERATOR_POOL, "driver": {"source": "operator", "version": "595.91.07"}},
        {**OPERATOR_POOL, "name": "b", "driver": {"source": "operator", "version": "580.95.05"}},
    ]
    with pytest.raises(GpustackError, match="one driver version"):
        render_spec(gpuOperator={"enabled": True}, nodePools=pools)


@pytest.mark.parametrize("pools", [[HOST_POOL], [OPERATOR_POOL, LABELLED_HOST_POOL]], ids=["host-only", "mixed"])
def test_what_validate_accepts_lints_without_gs035(render_spec, tmp_path, capsys, pools):
    rendered, tree = render_spec(gpuOperator={"enabled": True}, nodePools=pools)
    write.write_tree(tree, tmp_path / "out")
    with pytest.raises(SystemExit) as exit_info:
        main(["lint", str(tmp_path / "out"), "--spec", rendered.ctx.spec_file, "--select", "GS035"])
    out = capsys.readouterr().out
    assert exit_info.value.code == 0 and "GS035" not in out, out


def test_every_operand_the_chart_runs_has_requests(render_spec):
    values = release(render_spec(gpuOperator={"enabled": True}, nodePools=[OPERATOR_POOL])[0], "gpu-operator")
    for section, pod in gpu_operator.OPERAND_REQUESTS.items():
        assert values[section]["resources"] == {"requests": REQUESTS[pod]}, section
    # A driver container that does not run needs none.
    values = release(render_spec(gpuOperator={"enabled": True}, nodePools=[HOST_POOL])[0], "gpu-operator")
    assert values["driver"] == {"enabled": False}


def test_the_driver_upgrade_waits_for_jobs_and_evicts_what_holds_gpus(render_spec):
    """The operator's driver gets an upgradePolicy: one node at a time, Jobs' pods finish first,
    and GPU pods with an emptyDir (vLLM's /dev/shm) are evicted rather than failing the node."""
    policy = release(render_spec(gpuOperator={"enabled": True}, nodePools=[OPERATOR_POOL])[0], "gpu-operator")["driver"][
        "upgradePolicy"
    ]
    assert policy == {
        "autoUpgrade": True,
        "maxParallelUpgrades": 1,
        "waitForCompletion": {"podSelector": "batch.kubernetes.io/job-name", "timeoutSeconds": 0},
        "gpuPodDeletion": {"deleteEmptyDir": True},
    }


def test_the_upgrade_waits_for_the_unprefixed_job_label_before_kubernetes_1_27(render_spec):
    rendered, _ = render_spec(cluster={"kubernetesVersion": "1.26"}, gpuOperator={"enabled": True}, nodePools=[OPERATOR_POOL])
    assert release(rendered, "gpu-operator")["driver"]["upgradePolicy"]["waitForCompletion"]["podSelector"] == "job-name"


def test_under_dra_the_upgrade_also_drains_the_node(render_spec):
    """Pods holding DRA claims carry no nvidia.com/gpu resource, which the operator's pod deletion looks for."""
    rendered, files = render_spec(
        gpuOperator={"enabled": True},
        nodePools=[OPERATOR_POOL],
        devicePlugin={"enabled": False},
        dra={"enabled": True, "driver": "nvidia"},
    )
    policy = release(rendered, "gpu-operator")["driver"]["upgradePolicy"]
    assert policy["drain"] == {"enable": True, "deleteEmptyDir": True}
    assert "drains the node" in files["README.md"]


def test_the_upgrade_policy_is_the_operators_driver_only_and_can_be_left_to_the_chart(render_spec):
    host = release(render_spec(gpuOperator={"enabled": True}, nodePools=[HOST_POOL])[0], "gpu-operator")
    assert "upgradePolicy" not in host["driver"]
    rendered, files = render_spec(
        gpuOperator={"enabled": True, "driverUpgrade": {"enabled": False}}, nodePools=[OPERATOR_POOL]
    )
    assert "upgradePolicy" not in release(rendered, "gpu-operator")["driver"]
    assert "gpu-driver-upgrade-state" not in files["README.md"]
    rendered, files = render_spec(
        gpuOperator={"enabled": True, "driverUpgrade": {"jobTimeoutSeconds": 3600}}, nodePools=[OPERATOR_POOL]
    )
    assert release(rendered, "gpu-operator")["driver"]["upgradePolicy"]["waitForCompletion"]["timeoutSeconds"] == 3600
    assert "at most 3600 s" in files["README.md"]


def test_geforce_pools_under_the_operator_are_named_in_the_readme(examples, render_spec):
    """Not on the operator's supported platforms: the README says so for GeForce pools only."""
    _, files = examples["kubeadm-mig-fleet"]
    assert "Pool `rtx4090` (NVIDIA-GeForce-RTX-4090) is a GeForce card" in files["README.md"]
    assert "Pool `h100`" not in files["README.md"]
    geforce = {"name": "g", "gpu": {"model": "RTX-4090"}, "driver": {"source": "operator"}}
    _, files = render_spec(gpuOperator={"enabled": True}, nodePools=[geforce])
    assert "the operator also installs its driver there" in files["README.md"]
    _, files = render_spec(gpuOperator={"enabled": True}, nodePools=[OPERATOR_POOL])
    assert "is a GeForce card" not in files["README.md"]
