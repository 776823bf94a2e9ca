"""The harness's command line, as a developer uses it: `up --install` installs the rendered stack
and prints the kubeconfig last, the node is Ready with the labels and resources its agents
published, a GPU pod runs, `down` leaves nothing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cluster.control_plane import REPO
from tests.cluster.support import WAIT_SECONDS, require, wait_for

pytestmark = pytest.mark.cluster

SPEC = REPO / "examples" / "k3s-l4.yaml"
GPU_POD = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "cuda", "namespace": "default"},
    "spec": {"runtimeClassName": "nvidia", "containers": [{"name": "cuda", "image": "nvcr.io/nvidia/cuda:13.0.1-base-ubuntu24.04",
                             "resources": {"limits": {"nvidia.com/gpu": 1}}}]},
}


def harness(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tests.cluster", *args], cwd=REPO, capture_output=True,
                          text=True, check=False, timeout=600)


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its parent to reap it does not)."""
    try:
        return "State:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False


def test_up_then_down_from_the_command_line(tmp_path: Path) -> None:
    kubectl = str(require("1.36") / "kubectl")
    state = tmp_path / "state"
    started = harness("up", "--spec", str(SPEC), "--state", str(state), "--install")
    try:
        assert started.returncode == 0, started.stderr
        kubeconfig = started.stdout.splitlines()[-1]
        assert Path(kubeconfig) == state.resolve() / "kubeconfig"

        def kubectl_json(*args: str) -> dict:
            done = subprocess.run([kubectl, f"--kubeconfig={kubeconfig}", *args, "-o", "json"],
                                  capture_output=True, text=True, check=True)
            return json.loads(done.stdout)

        (node,) = kubectl_json("get", "nodes")["items"]
        ready = {c["type"]: c["status"] for c in node["status"]["conditions"]}["Ready"]
        assert ready == "True"
        assert node["metadata"]["labels"]["nvidia.com/gpu.product"] == "NVIDIA-L4"
        assert node["metadata"]["labels"]["feature.node.kubernetes.io/pci-10de.present"] == "true"
        assert node["status"]["allocatable"]["nvidia.com/gpu"] == "1"

        subprocess.run([kubectl, f"--kubeconfig={kubeconfig}", "apply", "-f", "-"], input=json.dumps(GPU_POD),
                       text=True, check=True, capture_output=True)
        wait_for(lambda: all(c["ready"] for c in kubectl_json("get", "pod", "cuda")["status"].get("containerStatuses", [{"ready": False}])), WAIT_SECONDS,
                 lambda: json.dumps(kubectl_json("get", "pod", "cuda")["status"]))
        pids = json.loads((state / "cluster.json").read_text())["pids"]
    finally:
        stopped = harness("down", "--state", str(state))
    assert stopped.returncode == 0, stopped.stderr
    assert not state.exists()
    wait_for(lambda: not any(alive(pid) for pid in pids.values()), 10, lambda: f"still running: {pids}")
