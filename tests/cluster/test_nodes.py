"""The harness's nodes hold only hardware and host facts: what the rendered files give a node when
it registers, never what the spec's partitioning means (no cluster is started here)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.cluster import host, nodes
from tests.cluster.control_plane import REPO
from tests.cluster.spec import load

EXAMPLES = sorted((REPO / "examples").glob("*.yaml"))
# What only agents publish: NFD's, GFD's and the operator's labels, device plugin resources.
AGENT_LABELS = ("feature.node.kubernetes.io/", "nvidia.com/gpu.present", "nvidia.com/gpu.product",
                "nvidia.com/gpu.count", "nvidia.com/gpu.replicas", "nvidia.com/mig.config.state", "nvidia.com/mig-")


def test_the_node_module_reads_nothing_of_the_spec_but_its_inventory() -> None:
    """nodes.py and host.py import neither the spec's partitioning nor its pool checks."""
    for module in (nodes, host):
        tree = ast.parse(Path(module.__file__).read_text())
        imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert not {m for m in imported if m and m.startswith(("gpustack.spec.partitioning", "gpustack.spec.pools",
                                                               "gpustack.render"))}, module.__name__


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_nodes_register_with_host_facts_only(example: Path) -> None:
    stack = load(example)
    found = nodes.stack_nodes(stack, REPO / "output" / example.stem)
    assert len(found) == sum(p.count for p in [*stack.spec.nodePools, *stack.spec.systemPools])
    for node in found:
        assert not [k for k in node.labels if k.startswith(AGENT_LABELS)], node.labels
        assert not [k for k in node.allocatable if k.startswith("nvidia.com/")], node.allocatable
        gpus = [d for d in node.machine.pci if d["vendor"] == "10de" and d["class"].startswith("03")]
        assert len(gpus) == node.machine.gpus


def test_host_facts_come_from_the_rendered_steps() -> None:
    """The driver, the nvidia handler and Fabric Manager as each stack's files install them."""
    def first(example: str, pool: str) -> nodes.FakeNode:
        stack = load(REPO / "examples" / f"{example}.yaml")
        return next(n for n in nodes.stack_nodes(stack, REPO / "output" / example) if n.pool == pool)

    k3s = first("k3s-l4", "g6").host  # K3s finds the toolkit's runtimes
    assert k3s.driver and {"nvidia", "nvidia-cdi"} <= k3s.runtimes and k3s.default_runtime == "runc"
    kubeadm = first("kubeadm-host-driver", "l4").host  # nvidia-ctk runtime configure on GPU nodes only
    assert kubeadm.driver and "nvidia" in kubeadm.runtimes and kubeadm.taints
    assert kubeadm.containerd == "2.2.1" and k3s.containerd is None  # Docker's containerd.io; K3s brings its own
    assert first("kubeadm-host-driver", "system").host.runtimes == {"runc"}
    operator = first("kubeadm-gpu-operator", "a100")  # the operator brings driver and toolkit
    assert not operator.host.driver and operator.host.runtimes == {"runc"} and operator.machine.nvswitches() == 6
    assert first("kubeadm-hgx-h100", "hgx").host.fabric_manager
    talos = first("talos-flux", "l4").host  # extensions, read-only root, patch labels
    assert talos.read_only and talos.driver and "nvidia" in talos.runtimes
    assert talos.labels["nvidia.com/device-plugin.config"] == "l4"
    assert not talos.writable("/usr/local/vgpu") and talos.writable("/var/lib/hami/vgpu")


def test_a_host_step_for_other_pools_does_not_apply(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("## Host steps\n\n### 1. Driver\n\nOn each node of pool `a`:\n\n```bash\n"
                      "sudo apt-get install -y nvidia-driver-pinning-595.84\n"
                      "sudo apt-get install -y nvidia-headless-open\n```\n\n"
                      "### 2. Runtime\n\nOn every node (the nvidia runtime on GPU nodes):\n\n```bash\n"
                      "sudo apt-get install -y 'containerd.io=2.2.1-*'\n# GPU nodes only:\n"
                      "sudo nvidia-ctk runtime configure --runtime=containerd --set-as-default\n```\n\n## Apply order\n")
    a, b, system = (host.host_facts(tmp_path, "kubeadm", pool, gpus) for pool, gpus in
                    (("a", True), ("b", True), ("system", False)))
    assert a.driver and a.default_runtime == "nvidia"
    assert not b.driver and b.default_runtime == "nvidia"
    assert not system.driver and system.runtimes == {"runc"}
    assert a.containerd == b.containerd == system.containerd == "2.2.1"


def test_the_version_lock_alone_installs_no_driver(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("## Host steps\n\n### 1. Driver\n\nOn each node of pool `a`:\n\n```bash\n"
                      "sudo apt-get install -y nvidia-driver-pinning-595\n```\n\n## Apply order\n")
    assert not host.host_facts(tmp_path, "kubeadm", "a", True).driver


def test_k3s_install_flags_register_the_node(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("## Host steps\n\n### 6. K3s server\n\nOn the node:\n\n```bash\n"
                      "curl -sfL https://get.k3s.io | INSTALL_K3S_CHANNEL=v1.36 sh -s - server "
                      "--node-taint gpu=true:NoSchedule --node-label=pool=a\n```\n\n## Apply order\n")
    (tmp_path / "cluster").mkdir()
    (tmp_path / "cluster" / "config.yaml").write_text("{}\n")
    node = host.host_facts(tmp_path, "k3s", "a", True)
    assert node.taints == [{"key": "gpu", "value": "true", "effect": "NoSchedule"}]
    assert node.labels == {"pool": "a"}
