"""Fabric Manager host steps: on NVSwitch boards with a host driver, at the driver's release;
nowhere else (PCIe parts, 4-GPU boards, operator drivers, ``driver.fabricManager: false``)."""

from __future__ import annotations

import subprocess

import pytest
from test_host_steps import assert_in_order, commands, host_section

from gpustack.render.stackfiles.fabric_manager import FABRIC_CHECK

# `nvidia-smi -q` prints a Fabric section per GPU on Hopper and later, State then Status, as the
# Fabric Manager user guide shows it (https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/).
GPU_FABRIC = """    Fabric
        State                             : {state}
        Status                            : {status}
        CliqueId                          : 0
        ClusterUUID                       : 00000000-0000-0000-0000-000000000000
"""


def hgx(**driver):
    return {"name": "hgx", "gpu": {"model": "H100-80GB-SXM", "count": 8}, "driver": {"source": "host", **driver}}


def test_release_pins_the_package_of_its_branch_before_the_hold(render_spec):
    _, files = render_spec(nodePools=[hgx(version="595.84")])
    lines = commands(files["README.md"])
    assert_in_order(
        lines,
        "sudo apt-get install -y nvidia-driver-pinning-595.84",
        "sudo apt-get install -y nvidia-headless-open",
        "sudo apt-get install -y 'nvidia-fabricmanager=595.84-*'",
        "sudo systemctl enable --now nvidia-fabricmanager",
        "systemctl is-active nvidia-fabricmanager",
        FABRIC_CHECK,
        "sudo apt-mark hold",
    )


def test_a_branch_or_no_version_pins_the_release_the_node_runs(render_spec):
    for driver, install in (({"version": "595"}, "sudo apt-get install -y nvidia-driver-pinning-595"),
                            ({}, "sudo apt-get install -y nvidia-headless-open")):
        _, files = render_spec(nodePools=[hgx(**driver)])
        lines = commands(files["README.md"])
        assert install in lines
        assert 'release="$(modinfo -F version nvidia)"' in lines
        assert 'sudo apt-get install -y "nvidia-fabricmanager=${release}-*"' in lines


def test_branches_before_590_name_their_packages(render_spec):
    """NVIDIA's repository drops the branch from its Ubuntu package names from 590 on."""
    for driver, fabric in (({"version": "580"}, '"nvidia-fabricmanager-580=${release}-*"'),
                           ({"version": "580.95"}, "'nvidia-fabricmanager-580=580.95-*'")):
        _, files = render_spec(nodePools=[hgx(**driver)])
        lines = commands(files["README.md"])
        assert_in_order(lines, f"sudo apt-get install -y nvidia-driver-pinning-{driver['version']}",
                        "sudo apt-get install -y nvidia-headless-580-open", f"sudo apt-get install -y {fabric}")


def test_a100_boards_are_checked_by_the_service_not_a_fabric_state(render_spec):
    _, files = render_spec(nodePools=[{"name": "a", "gpu": {"model": "A100-80GB-SXM", "count": 8}}])
    section = host_section(files["README.md"])
    assert "nvidia-fabricmanager" in section and FABRIC_CHECK not in section
    assert "A100 boards report no fabric state" in section


@pytest.mark.parametrize(
    "pool",
    [
        {"name": "l4", "gpu": {"model": "L4", "count": 8}},
        {"name": "pcie", "gpu": {"model": "H100-80GB-PCIE", "count": 8}},
        {"name": "four", "gpu": {"model": "H100-80GB-SXM", "count": 4}},  # HGX 4-GPU: direct NVLink
        hgx(version="595.84", fabricManager=False),
    ],
)
def test_no_fabric_manager_where_none_is_needed_or_wanted(render_spec, pool):
    # fabricManager false renders no GPU pods on the board (no smoke Job): its GPUs wait for yours.
    _, files = render_spec(nodePools=[pool], smokeJobs=False)
    assert "fabricmanager" not in host_section(files["README.md"])
    assert "nvidia-headless-open" in host_section(files["README.md"])  # datacenter parts: compute-only


def test_a_fleet_with_both_gets_each_flavour_on_its_pools(render_spec):
    """Datacenter GPUs, NVSwitch boards or not, take the compute-only driver; a GeForce card the full one."""
    _, files = render_spec(nodePools=[hgx(version="595.84"),
                                      {"name": "l4", "gpu": {"model": "L4"}, "driver": {"version": "595.84"}},
                                      {"name": "rtx", "gpu": {"model": "RTX-4090"}, "driver": {"version": "595.84"}}])
    section = host_section(files["README.md"])
    assert "### 1. NVIDIA driver 595.84\n\nOn each node of pool `rtx`" in section
    assert "### 2. NVIDIA driver 595.84 (compute-only)\n\nOn each node of pools `hgx`, `l4`" in section
    full, headless = (section.split(f"### {n}. ", 1)[1].split("\n### ", 1)[0] for n in (1, 2))
    assert "sudo apt-get install -y nvidia-open\n" in full and "nvidia-headless-open" not in full
    assert "sudo apt-get install -y nvidia-headless-open\n" in headless and "nvidia-open\n" not in headless


def test_operator_pools_are_told_the_driver_container_runs_it(render_spec):
    _, files = render_spec(
        cluster={"distribution": "kubeadm"},
        nodePools=[{**hgx(), "driver": {"source": "operator"}}],
        gpuOperator={"enabled": True},
    )
    section = host_section(files["README.md"])
    assert "apt-get install -y 'nvidia-fabricmanager" not in section
    assert "starts NVIDIA Fabric Manager itself" in section


@pytest.mark.parametrize(
    ("states", "passes"),
    [
        ([("Completed", "Success")] * 8, True),
        ([("Completed", "Success")] * 7 + [("In Progress", "N/A")], False),
        ([("Not Started", "N/A")], False),
        ([], False),  # no Fabric section at all: nothing proves the fabric is up
    ],
)
def test_the_fabric_check_fails_until_every_gpu_reads_completed(tmp_path, states, passes):
    output = "".join(f"GPU 00000000:{i:02X}:00.0\n" + GPU_FABRIC.format(state=s, status=t) for i, (s, t) in enumerate(states))
    smi = tmp_path / "nvidia-smi"
    smi.write_text(f"#!/bin/sh\ncat <<'EOF'\n{output}EOF\n", encoding="utf-8")
    smi.chmod(0o755)
    result = subprocess.run(["bash", "-c", FABRIC_CHECK], env={"PATH": f"{tmp_path}:/usr/bin:/bin"}, check=False)
    assert (result.returncode == 0) is passes
