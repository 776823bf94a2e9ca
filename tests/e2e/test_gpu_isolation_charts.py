"""The rendered isolation values through the real charts (gpustack/render/gpu_isolation.py): the
plugins' containers get the volume-mount strategy and keep the capability the toolkit counts as
privileged (their own NVIDIA_VISIBLE_DEVICES=all must still reach every GPU); the GPU Operator's
ClusterPolicy hands the toolkit container the refusal; nothing of it when the spec opts out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from real_charts import Helm, objects
from render_helpers import render_file, spec_document

from gpustack.yamlio import dump

pytestmark = pytest.mark.e2e

OPT_OUT = {"acceptVisibleDevicesEnvvar": True}
OPERATOR_POOL = {"name": "a100", "gpu": {"model": "A100-80GB"}, "driver": {"source": "operator"}}
HAMI = {"devicePlugin": {"enabled": False}, "sharing": {"hami": {"enabled": True}}}


def chart_output(helm_binary: str, tmp_path: Path, release_name: str, **spec: Any) -> list[dict[str, Any]]:
    file = tmp_path / "spec.yaml"
    file.write_text(dump(spec_document(**spec)), encoding="utf-8")
    rendered, _ = render_file(file)
    [release] = [r for r in rendered.releases if r.name == release_name]
    return objects(Helm(helm_binary, rendered.ctx.stack.spec.cluster.minor).template(release, release.values, tmp_path))


def containers(objs: list[dict[str, Any]], kind: str = "DaemonSet") -> dict[str, dict[str, Any]]:
    return {c["name"]: c for o in objs if o["kind"] == kind for c in o["spec"]["template"]["spec"]["containers"]}


def env(container: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: str(e.get("value")) for e in container.get("env", [])}


def sys_admin(container: dict[str, Any]) -> bool:
    """What the toolkit counts as privileged: CAP_SYS_ADMIN (privileged containers have every capability)."""
    context = container.get("securityContext") or {}
    return context.get("privileged") is True or "SYS_ADMIN" in (context.get("capabilities") or {}).get("add", [])


@pytest.mark.parametrize("version", ["0.20.0", "0.15.1"])
def test_device_plugin_hands_over_mounts_and_keeps_its_own_gpus(helm_binary, tmp_path, version):
    objs = chart_output(helm_binary, tmp_path, "nvidia-device-plugin", devicePlugin={"version": version})
    ctrs = containers(objs)
    plugin, gfd = ctrs["nvidia-device-plugin-ctr"], ctrs["gpu-feature-discovery-ctr"]
    assert env(plugin)["DEVICE_LIST_STRATEGY"] == "volume-mounts"
    assert env(plugin)["NVIDIA_VISIBLE_DEVICES"] == "all" and sys_admin(plugin)
    assert sys_admin(gfd)


def test_opted_out_device_plugin_stays_on_the_variable(helm_binary, tmp_path):
    ctrs = containers(chart_output(helm_binary, tmp_path, "nvidia-device-plugin", cluster=OPT_OUT))
    plugin = ctrs["nvidia-device-plugin-ctr"]
    assert "DEVICE_LIST_STRATEGY" not in env(plugin) and not sys_admin(plugin)


def test_hami_plugin_hands_over_mounts_and_its_containers_keep_their_gpus(helm_binary, tmp_path):
    ctrs = containers(chart_output(helm_binary, tmp_path, "hami", **HAMI))
    assert env(ctrs["device-plugin"])["DEVICE_LIST_STRATEGY"] == "volume-mounts"
    assert sys_admin(ctrs["device-plugin"]) and sys_admin(ctrs["vgpu-monitor"])
    opted_out = containers(chart_output(helm_binary, tmp_path, "hami", cluster=OPT_OUT, **HAMI))
    assert env(opted_out["device-plugin"])["DEVICE_LIST_STRATEGY"] == "envvar"  # the chart's default


def _policy(objs: list[dict[str, Any]]) -> dict[str, Any]:
    return next(o for o in objs if o["kind"] == "ClusterPolicy")["spec"]


def test_operator_toolkit_gets_the_refusal(helm_binary, tmp_path):
    spec = _policy(chart_output(helm_binary, tmp_path, "gpu-operator", cluster={"distribution": "kubeadm"},
                                gpuOperator={"enabled": True}, nodePools=[OPERATOR_POOL]))
    assert env(spec["toolkit"])["ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED"] == "false"
    assert spec["cdi"]["enabled"] is True  # its plugin: cdi-annotations,cdi-cri
    opted_out = _policy(chart_output(helm_binary, tmp_path, "gpu-operator", cluster={"distribution": "kubeadm", **OPT_OUT},
                                     gpuOperator={"enabled": True}, nodePools=[OPERATOR_POOL]))
    assert not any(name.startswith("ACCEPT_") for name in env(opted_out["toolkit"]))


def test_operator_before_cdi_gets_a_volume_mount_plugin(helm_binary, tmp_path):
    spec = _policy(chart_output(helm_binary, tmp_path, "gpu-operator", gpuOperator={"enabled": True, "version": "v25.3.4"},
                                nodePools=[OPERATOR_POOL]))
    assert spec["cdi"]["enabled"] is False
    assert env(spec["devicePlugin"])["DEVICE_LIST_STRATEGY"] == "volume-mounts"
    assert env(spec["toolkit"])["ACCEPT_NVIDIA_VISIBLE_DEVICES_AS_VOLUME_MOUNTS"] == "true"
