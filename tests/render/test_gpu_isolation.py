"""The node side of NVIDIA_VISIBLE_DEVICES (gpustack/render/gpu_isolation.py): on every stack the
toolkit refuses the variable from unprivileged containers and the device plugins on the NVIDIA
runtime hand GPUs over as volume mounts; nothing of it where the spec opts out; Talos explained."""

from __future__ import annotations

import pytest
from render_helpers import release
from test_host_steps import commands

from gpustack.errors import SpecError
from gpustack.render import gpu_isolation

OPT_OUT = {"acceptVisibleDevicesEnvvar": True}
REFUSE = "accept-nvidia-visible-devices-envvar-when-unprivileged=false"
MOUNTS = "accept-nvidia-visible-devices-as-volume-mounts=true"
OPERATOR_POOL = {"name": "a100", "gpu": {"model": "A100-80GB"}, "driver": {"source": "operator"}}
TALOS = {"distribution": "talos", "talosVersion": "v1.13.0"}
HAMI = {"devicePlugin": {"enabled": False}, "sharing": {"hami": {"enabled": True}}}


def _toolkit_commands(files: dict[str, str]) -> list[str]:
    return [line for line in commands(files["README.md"]) if line.startswith("sudo nvidia-ctk config")]


def _toolkit_env(rendered) -> dict[str, str]:
    return {e["name"]: e["value"] for e in release(rendered, "gpu-operator")["toolkit"]["env"]}


@pytest.mark.parametrize("distribution", ["k3s", "kubeadm"])
def test_host_toolkit_refuses_the_variable_and_takes_the_plugins_mounts(render_spec, distribution):
    rendered, files = render_spec(cluster={"distribution": distribution})
    assert _toolkit_commands(files) == [f"sudo nvidia-ctk config --in-place --set {REFUSE} --set {MOUNTS}"]
    assert release(rendered, "nvidia-device-plugin")["deviceListStrategy"] == "volume-mounts"
    # after the packages that bring nvidia-ctk
    lines = commands(files["README.md"])
    assert lines.index(_toolkit_commands(files)[0]) > next(i for i, l in enumerate(lines) if "nvidia-container-toolkit=" in l
                                                           or l.endswith("install -y nvidia-container-toolkit"))


def test_without_a_plugin_on_the_nvidia_runtime_no_mounts_are_accepted(render_spec):
    """A DRA-only stack: the toolkit refuses the variable, and nothing hands GPUs over as mounts."""
    _, files = render_spec(devicePlugin={"enabled": False})
    assert _toolkit_commands(files) == [f"sudo nvidia-ctk config --in-place --set {REFUSE}"]


def test_hami_plugin_hands_gpus_over_as_volume_mounts(render_spec):
    rendered, files = render_spec(**HAMI)
    assert release(rendered, "hami")["devicePlugin"]["deviceListStrategy"] == "volume-mounts"
    assert MOUNTS in _toolkit_commands(files)[0]


def test_hami_before_the_strategy_value_is_refused(render_spec):
    with pytest.raises(SpecError, match="deviceListStrategy"):
        render_spec(devicePlugin={"enabled": False}, sharing={"hami": {"enabled": True, "version": "2.7.1"}})
    rendered, _ = render_spec(cluster=OPT_OUT, devicePlugin={"enabled": False},
                              sharing={"hami": {"enabled": True, "version": "2.7.1"}})
    assert "deviceListStrategy" not in release(rendered, "hami")["devicePlugin"]


def test_operator_toolkit_refuses_the_variable_and_its_plugin_keeps_cdi(render_spec):
    rendered, files = render_spec(cluster={"distribution": "kubeadm"}, gpuOperator={"enabled": True},
                                  nodePools=[OPERATOR_POOL])
    env = _toolkit_env(rendered)
    assert env["ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED"] == "false"
    assert "ACCEPT_NVIDIA_VISIBLE_DEVICES_AS_VOLUME_MOUNTS" not in env  # its plugin uses CDI (chart v25.10 on)
    assert "env" not in release(rendered, "gpu-operator")["devicePlugin"]
    assert not _toolkit_commands(files)  # no host toolkit
    assert any("ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED=false" in n for n in rendered.notes["gpu-operator"])


def test_operator_before_cdi_gets_a_volume_mount_plugin(render_spec):
    rendered, _ = render_spec(gpuOperator={"enabled": True, "version": "v25.3.4"}, nodePools=[OPERATOR_POOL])
    values = release(rendered, "gpu-operator")
    assert values["devicePlugin"]["env"] == [{"name": "DEVICE_LIST_STRATEGY", "value": "volume-mounts"}]
    assert _toolkit_env(rendered)["ACCEPT_NVIDIA_VISIBLE_DEVICES_AS_VOLUME_MOUNTS"] == "true"


def test_old_plugin_charts_get_the_capability_the_toolkit_counts_as_privileged(render_spec):
    """Charts before 0.16 add CAP_SYS_ADMIN for MIG only: without it the plugin and GFD, whose own
    NVIDIA_VISIBLE_DEVICES=all the toolkit now refuses, would find no GPU."""
    old = release(render_spec(devicePlugin={"version": "0.15.1"})[0], "nvidia-device-plugin")
    assert old["securityContext"] == old["gfd"]["securityContext"] == {"capabilities": {"add": ["SYS_ADMIN"]}}
    current = release(render_spec()[0], "nvidia-device-plugin")
    assert "securityContext" not in current  # the chart's _helpers.tpl adds it (tests/e2e)


def test_opting_out_leaves_the_toolkit_and_plugins_at_their_defaults(render_spec):
    rendered, files = render_spec(cluster=OPT_OUT)
    assert not _toolkit_commands(files)
    assert "deviceListStrategy" not in release(rendered, "nvidia-device-plugin")
    assert "accept-nvidia-visible-devices" not in files["README.md"]
    rendered, _ = render_spec(cluster={"distribution": "kubeadm", **OPT_OUT}, gpuOperator={"enabled": True},
                              nodePools=[OPERATOR_POOL])
    assert not any(name.startswith("ACCEPT_") for name in _toolkit_env(rendered))
    assert not any("ACCEPT_NVIDIA" in n for n in rendered.notes.get("gpu-operator", []))
    rendered, _ = render_spec(cluster=OPT_OUT, **HAMI)
    assert "deviceListStrategy" not in release(rendered, "hami")["devicePlugin"]


def test_talos_keeps_the_envvar_plugin_and_says_what_to_do(render_spec):
    """The extension's toolkit has no config to set: a volume-mount plugin would hand GPUs over in a
    form it ignores, so the plugin keeps envvar and the README says why and what to do instead."""
    rendered, files = render_spec(cluster=TALOS)
    assert "deviceListStrategy" not in release(rendered, "nvidia-device-plugin")
    assert gpu_isolation.talos_note(rendered.ctx.stack) in files["README.md"]
    assert "GS007" in files["README.md"]
    _, files = render_spec(cluster={**TALOS, "nvidiaDefaultRuntime": True})
    assert "any pod on a GPU node (nvidia is the default runtime)" in files["README.md"]
    _, files = render_spec(cluster={**TALOS, **OPT_OUT})
    assert "brings no toolkit config.toml" not in files["README.md"]
