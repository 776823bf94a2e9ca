"""The harness's model of the NVIDIA Container Toolkit (tests/cluster/toolkit.py) on nodes built
from the rendered stacks' host facts, no cluster started: the toolkit config comes from the host
steps, and a container sees the GPUs the toolkit takes from the plugin's answer and its own env."""

from __future__ import annotations

from typing import Any

import pytest

from tests.cluster import nodes, refusals, toolkit
from tests.cluster.agents.world import Published
from tests.cluster.control_plane import REPO
from tests.cluster.spec import load

ALL = [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}]


def _node(example: str, pool: str, published: Published) -> refusals.Node:
    stack = load(REPO / "examples" / f"{example}.yaml")
    fake = next(n for n in nodes.stack_nodes(stack, REPO / "output" / example) if n.pool == pool)
    return refusals.Node(fake, published, {"nvidia": "nvidia"}, {}, {})


def _pod(gpus: int, **container: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    main = {"name": "main", "image": "cuda", **container}
    if gpus:
        main["resources"] = {"limits": {"nvidia.com/gpu": gpus}}
    return {"metadata": {"namespace": "x"}, "spec": {"runtimeClassName": "nvidia", "containers": [main]}}, main


def test_the_rendered_host_steps_refuse_the_variable_and_take_the_mounts() -> None:
    node = _node("kubeadm-host-driver", "l40s", Published(injection={"volume-mounts"}))
    assert toolkit.config(node) == {toolkit.ENVVAR_KEY: False, toolkit.MOUNTS_KEY: True}
    pod, main = _pod(1, env=ALL)
    assert toolkit.visible(pod, main, node) == ["GPU-l40s-0-0"]
    pod, main = _pod(0, env=ALL)
    assert toolkit.visible(pod, main, node) == []
    # the plugin's own container: CAP_SYS_ADMIN, which the toolkit counts as privileged
    pod, main = _pod(0, env=ALL, securityContext={"capabilities": {"add": ["SYS_ADMIN"]}})
    assert len(toolkit.visible(pod, main, node)) == 4
    # GFD: privileged, its variable from the plugin image's config
    pod, main = _pod(0, image="nvcr.io/nvidia/k8s-device-plugin:v0.20.0", securityContext={"privileged": True})
    assert len(toolkit.visible(pod, main, node)) == 4


def test_a_toolkit_with_its_defaults_lets_the_variable_win() -> None:
    """Talos's extension keeps the defaults: the pod's own variable comes after the plugin's."""
    node = _node("talos-flux", "l40s", Published(injection={"envvar"}))
    assert toolkit.config(node) == {toolkit.ENVVAR_KEY: True, toolkit.MOUNTS_KEY: False}
    pod, main = _pod(1, env=ALL)
    assert len(toolkit.visible(pod, main, node)) == node.fake.machine.gpus > 1
    pod, main = _pod(1)
    assert toolkit.visible(pod, main, node) == ["GPU-l40s-0-0"]


def test_a_mismatch_leaves_gpu_pods_without_devices() -> None:
    """An envvar plugin on a toolkit that refuses the variable: the pod gets nothing, and fails."""
    node = _node("kubeadm-host-driver", "l40s", Published(injection={"envvar"}))
    pod, main = _pod(1)
    assert toolkit.visible(pod, main, node) == []
    end = refusals.run(pod, main, node, lambda *_: None)
    assert end is not None and "no CUDA-capable device" in end.message


def test_the_operators_toolkit_env_is_its_config_and_cdi_needs_no_variable() -> None:
    node = _node("kubeadm-gpu-operator", "a100", Published(injection={"cdi"}, runtimes={"nvidia"},
                                                           toolkit={toolkit.ENVVAR_KEY: "false"}))
    assert toolkit.config(node)[toolkit.ENVVAR_KEY] is False
    pod, main = _pod(1, env=ALL)
    assert toolkit.visible(pod, main, node) == ["GPU-a100-0-0"]
    pod, main = _pod(0, env=ALL)
    assert toolkit.visible(pod, main, node) == []


@pytest.mark.parametrize(("command", "lines"), [("nvidia-smi -L > /dev/termination-log", 1), ("nvidia-smi -L", None)])
def test_nvidia_smi_lists_what_the_container_sees_into_its_termination_log(command: str, lines: int | None) -> None:
    node = _node("kubeadm-host-driver", "l40s", Published(injection={"volume-mounts"}))
    pod, main = _pod(1, env=ALL, command=["sh", "-c", command])
    end = refusals.run(pod, main, node, lambda *_: None)
    if lines is None:
        assert end is None
    else:
        assert end is not None and end.code == 0 and len(end.termination.splitlines()) == lines
