"""``gpustack doctor`` and ``gpustack discover`` end to end: stdout, stderr and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from nodetree import NodeTree

from gpustack.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_:
        main(list(argv))
    out, err = capsys.readouterr()
    return int(exit_.value.code or 0), out, err


def test_doctor_healthy_node_exits_0(geforce_pc: NodeTree, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "doctor", "--root", str(geforce_pc.base))
    lines = out.splitlines()
    assert code == 0
    assert len(lines) == 12  # one per layer, then the verdict
    assert lines[0] == "ok       pci             1 NVIDIA GPU: 0000:01:00.0 [10de:2705] class 0300"
    assert lines[5] == f"n/a      nvml            NVML asks the running driver: skipped with --root {geforce_pc.root.base}"
    assert lines[-1] == "every applicable layer is ok"


def test_doctor_problems_exit_1(nouveau_node: NodeTree, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "doctor", "--root", str(nouveau_node.base))
    assert code == 1
    assert "problem  nouveau         the open-source nouveau driver is loaded and holds the GPU → install" in out
    assert out.splitlines()[-1] == "6 problem(s): nouveau, driver, device-nodes, toolkit, containerd, device-plugin"


def test_doctor_json(k3s_without_nvidia: NodeTree, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "doctor", "--root", str(k3s_without_nvidia.base), "--format", "json")
    document = json.loads(out)
    assert code == 1
    assert set(document) == {"root", "healthy", "layers"}
    assert document["root"] == str(k3s_without_nvidia.base.resolve())
    assert document["healthy"] is False
    containerd = next(layer for layer in document["layers"] if layer["layer"] == "containerd")
    assert containerd == {
        "layer": "containerd",
        "status": "problem",
        "detail": "no nvidia runtime in /var/lib/rancher/k3s/agent/etc/containerd/config.toml",
        "fix": "install the NVIDIA Container Toolkit, then `systemctl restart k3s` (k3s-agent on agents)",
        "docs": "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html"
        "#configuring-containerd-for-kubernetes",
    }
    assert {layer["status"] for layer in document["layers"]} == {"ok", "problem", "n/a"}


@pytest.mark.parametrize("command", ["doctor", "discover"])
def test_bad_root_is_a_usage_error(command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "missing"
    code, out, err = run(capsys, command, "--root", str(missing))
    assert (code, out) == (2, "")
    assert err == f"error: --root {missing}: not a folder (give / or the root of a node's filesystem)\n"


def test_doctor_rejects_an_unknown_format(geforce_pc: NodeTree, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, _ = run(capsys, "doctor", "--root", str(geforce_pc.base), "--format", "yaml")
    assert code == 2


def test_discover_prints_the_snippet(l4_vm: NodeTree, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "discover", "--root", str(l4_vm.base))
    assert code == 0
    assert "  gpu:\n    model: L4\n    count: 1\n" in out


def test_discover_without_gpu_exits_2(tree: NodeTree, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "discover", "--root", str(tree.base))
    assert (code, out) == (2, "")
    assert err.startswith("error: no NVIDIA GPU on the PCI bus under ")


def test_discover_with_a_broken_toolkit_config_exits_2(l4_vm: NodeTree, capsys: pytest.CaptureFixture[str]) -> None:
    l4_vm.file("/etc/nvidia-container-runtime/config.toml", "mode = \n")
    code, _, err = run(capsys, "discover", "--root", str(l4_vm.base))
    assert code == 2
    assert err.startswith("error: /etc/nvidia-container-runtime/config.toml: ")
