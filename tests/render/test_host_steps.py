"""The stack README's host steps: complete, in order, pinned, and every command line parses."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess

import pytest

from gpustack.render.stackfiles import host_steps

BASH_BLOCK = re.compile(r"```bash\n(.*?)```", re.S)


def host_section(readme: str) -> str:
    return readme.split("## Host steps\n", 1)[1].split("\n## Apply order\n", 1)[0]


def host_blocks(readme: str) -> list[str]:
    return BASH_BLOCK.findall(host_section(readme))


def commands(readme: str) -> list[str]:
    return [line for block in host_blocks(readme) for line in block.splitlines() if line.strip()]


def position(lines: list[str], fragment: str) -> int:
    """Index of the first command line holding ``fragment`` (fails the test when none does)."""
    found = [i for i, line in enumerate(lines) if fragment in line]
    assert found, f"no host command holds {fragment!r}"
    return found[0]


def assert_in_order(lines: list[str], *fragments: str) -> None:
    positions = [position(lines, fragment) for fragment in fragments]
    assert positions == sorted(positions), list(zip(fragments, positions, strict=True))


def test_every_command_line_of_every_example_parses(examples):
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash is not installed")
    for name, (_, files) in examples.items():
        blocks = host_blocks(files["README.md"])
        assert blocks, f"{name}: no host commands"
        for block in blocks:
            # Each line stands alone (quotes closed on the line) and the block is valid bash.
            for line in block.splitlines():
                shlex.split(line, comments=True)
            checked = subprocess.run([bash, "-n"], input=block, text=True, capture_output=True, check=False)
            assert checked.returncode == 0, f"{name}: {checked.stderr}\n{block}"


def test_host_commands_name_only_files_of_the_tree(examples):
    for name, (_, files) in examples.items():
        named = set(re.findall(r"\b(?:cluster|talos(?:/pools)?)/[\w.-]+\.yaml\b", "\n".join(commands(files["README.md"]))))
        pools = re.findall(r'for pool in ([\w -]+); do', files["README.md"])
        named |= {f"cluster/join-{pool}.yaml" for group in pools for pool in group.split()}
        named.discard("cluster/join-$pool.yaml")
        assert named, name
        assert named <= set(files), f"{name}: {sorted(named - set(files))}"


def test_k3s_steps_in_order_and_pinned(examples):
    _, files = examples["k3s-l4"]
    readme = files["README.md"]
    lines = commands(readme)
    assert_in_order(
        lines,
        "https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2404/x86_64/cuda-keyring_1.1-1_all.deb",
        "sudo apt-get install -y nvidia-driver-pinning-595.84",
        "sudo apt-get install -y nvidia-headless-open",
        "sudo reboot",
        "https://nvidia.github.io/libnvidia-container/gpgkey",
        "nvidia-container-toolkit.list",
        "nvidia-container-toolkit=1.20.0-1 nvidia-container-toolkit-base=1.20.0-1",
        "sudo apt-mark hold",
        "sudo cp cluster/config.yaml /etc/rancher/k3s/config.yaml",
        "curl -sfL https://get.k3s.io | INSTALL_K3S_VERSION=v1.36.4+k3s1 sh -s - server",
        "sudo grep -A2 nvidia /var/lib/rancher/k3s/agent/etc/containerd/config.toml",
    )
    # Host steps, then the charts; K3s registers the runtime itself, so no nvidia-ctk and no RuntimeClass.
    assert readme.index("## Host steps") < readme.index("## Apply order") < readme.index("helm upgrade --install")
    assert not any("nvidia-ctk runtime configure" in line for line in lines)
    assert not any("containerd.io" in line for line in lines)  # K3s brings its own containerd 2
    assert "manifests/runtime.yaml" not in files


def test_kubeadm_steps_in_order_and_pinned(examples):
    _, files = examples["kubeadm-host-driver"]
    lines = commands(files["README.md"])
    assert_in_order(
        lines,
        "sudo apt-get install -y nvidia-driver-pinning-595.84",
        "sudo apt-get install -y nvidia-headless-open",
        "nvidia-container-toolkit=1.20.0-1",
        "sudo apt-mark hold $(dpkg-query -W -f='${db:Status-Abbrev} ${Package}\\n' '*nvidia*'",
        "'linux-image-*' 'linux-headers-*' 'linux-modules-*'",
        "https://download.docker.com/linux/ubuntu noble stable",
        "sudo apt-get install -y 'containerd.io=2.2.1-*'",
        "sudo apt-mark hold containerd.io",
        "SystemdCgroup = true",
        "grep -q 'SystemdCgroup = true' /etc/containerd/config.toml",
        "sudo nvidia-ctk runtime configure --runtime=containerd",
        "https://pkgs.k8s.io/core:/stable:/v1.35/deb/Release.key",
        "sudo apt-get install -y 'kubelet=1.35.2-*' 'kubeadm=1.35.2-*' 'kubectl=1.35.2-*'",
        "sudo apt-mark hold kubelet kubeadm kubectl",
        # No cluster.controlPlaneEndpoint: the config's variable is filled in first.
        "envsubst '$CONTROL_PLANE_ENDPOINT' < cluster/kubeadm-config.yaml > kubeadm-config.yaml",
        "sudo kubeadm init --config kubeadm-config.yaml",
        "kubeadm token create --print-join-command",
        "sudo kubeadm join --config join-l40s.yaml",
        "sudo kubeadm join --config join-l4.yaml",
        "sudo kubeadm join --config join-system.yaml",
        'kubectl label node "$NODE" gpu-class=training',
        'kubectl taint node "$NODE" nvidia.com/gpu:NoSchedule',
    )
    assert "kubernetesVersion: v1.35.2" in files["cluster/kubeadm-config.yaml"]


def test_join_command_fields_fill_the_join_configuration(examples):
    """`read` takes endpoint, token and hash from the printed `kubeadm join` line into the variables
    the JoinConfiguration names."""
    _, files = examples["kubeadm-host-driver"]
    line = next(line for line in commands(files["README.md"]) if line.startswith("read -r"))
    printed = "kubeadm join 10.0.0.1:6443 --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash sha256:00ff"
    script = line.replace("< <(sudo kubeadm token create --print-join-command)", f"<<< '{printed}'")
    script += '\necho "$CONTROL_PLANE_ENDPOINT $JOIN_TOKEN $CA_CERT_HASH"'
    out = subprocess.run(["bash", "-c", script], text=True, capture_output=True, check=True).stdout.split()
    assert out == ["10.0.0.1:6443", "abcdef.0123456789abcdef", "sha256:00ff"]
    join = files["cluster/join-l40s.yaml"]
    assert all(f"${{{name}}}" in join for name in ("CONTROL_PLANE_ENDPOINT", "JOIN_TOKEN", "CA_CERT_HASH"))


def test_gpu_operator_prerequisites_and_no_host_toolkit(examples):
    rendered, files = examples["kubeadm-gpu-operator"]
    readme = files["README.md"]
    lines = commands(readme)
    assert_in_order(lines, "mokutil --sb-state", "linux-headers-$(uname -r)", "sudo apt-get install -y 'containerd.io=")
    section = host_section(readme)
    assert "Secure Boot must be off" in section and "nvcr.io" in section
    # The README says usePrecompiled is not set: so do the values.
    operator = next(r for r in rendered.releases if r.name == "gpu-operator")
    assert "usePrecompiled" not in operator.values["driver"]
    assert "leaves `driver.usePrecompiled` at the chart's `false`" in section
    # The operator owns toolkit and runtime: nothing of theirs on the host, nothing to hold.
    assert not any("nvidia-container-toolkit" in line or "nvidia-ctk" in line for line in lines)
    assert not any("apt-mark hold $(" in line for line in lines)
    assert "apt-get install -y 'kubelet=1.35.4-*' 'kubeadm=1.35.4-*' 'kubectl=1.35.4-*'" in section
    assert "pkgs.k8s.io/core:/stable:/v1.35/deb/" in section


def test_multi_node_k3s_agents_register_with_their_pool_labels_and_taints(render_spec):
    _, files = render_spec(
        cluster={"serverAddresses": ["10.0.0.5"]},
        nodePools=[
            {
                "name": "gpu",
                "count": 3,
                "gpu": {"model": "L4"},
                "labels": {"gpu-class": "inference"},
                "taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}],
            }
        ],
        systemPools=[{"name": "system"}],
    )
    lines = commands(files["README.md"])
    assert_in_order(
        lines,
        "sudo cp cluster/config.yaml /etc/rancher/k3s/config.yaml",
        "curl -sfL https://get.k3s.io | INSTALL_K3S_CHANNEL=v1.36 sh -s - server",
        "sudo cat /var/lib/rancher/k3s/server/node-token",
        "SERVER=10.0.0.5",
        'K3S_URL="https://$SERVER:6443" K3S_TOKEN="$K3S_TOKEN" INSTALL_K3S_CHANNEL=v1.36 sh -s - agent '
        "--node-label gpu-class=inference --node-taint nvidia.com/gpu:NoSchedule",
        "# nodes of system:",
    )
    system_agent = lines[position(lines, "# nodes of system:") + 1]
    assert system_agent.endswith("sh -s - agent")
    # The server is not one of the pools' nodes: it takes no pool's flags.
    assert lines[position(lines, "sh -s - server")].endswith("sh -s - server")


def test_unpinned_versions_say_how_to_pin(render_spec):
    _, files = render_spec()
    section = host_section(files["README.md"])
    lines = commands(files["README.md"])
    assert "sudo apt-get install -y nvidia-headless-open" in lines and "sudo apt-get install -y nvidia-container-toolkit" in lines
    assert not any("nvidia-driver-pinning" in line for line in lines)  # no version lock without a version
    for field in ("driver.version", "toolkit.version", "cluster.k3sVersion"):
        assert f"`{field}`" in section, field


def test_pools_with_different_toolkit_modes_get_their_own_commands(render_spec):
    _, files = render_spec(
        nodePools=[
            {"name": "a", "gpu": {"model": "L4"}, "toolkit": {"mode": "cdi"}},
            {"name": "b", "gpu": {"model": "L4"}, "toolkit": {"mode": "auto"}},
        ]
    )
    lines = commands(files["README.md"])
    cdi = position(lines, "sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml")
    assert lines[cdi - 1] == "# nodes of a only:"


def test_steps_cover_every_layer_once():
    """One title per layer in a kubeadm stack without the operator: nothing doubled, nothing left out."""
    from gpustack.spec.models import GpuStack

    stack = GpuStack.model_validate(
        {
            "apiVersion": "gpustack.io/v1alpha1",
            "kind": "GpuStack",
            "metadata": {"name": "t"},
            "spec": {
                "cluster": {"distribution": "kubeadm", "kubernetesVersion": "1.35"},
                "nodePools": [{"name": "a", "gpu": {"model": "L4"}, "driver": {"version": "595"}}],
            },
        }
    )
    titles = [step.title for step in host_steps.steps(stack)]
    assert titles == [
        "NVIDIA driver 595 (compute-only)",
        "NVIDIA Container Toolkit",
        "Hold the driver, toolkit and kernel packages",
        "containerd 2.2.1 and its nvidia runtime",
        "kubeadm, kubelet and kubectl v1.35",
        "Control plane",
        "Join the pools",
    ]
    driver = host_steps.steps(stack)[0]
    assert driver.commands[-3:] == ("sudo apt-get install -y nvidia-driver-pinning-595",
                                    "sudo apt-get install -y nvidia-headless-open", "sudo reboot")


def test_the_kernel_is_held_with_the_driver(tmp_path):
    """The hold line holds the installed kernel packages and the running flavour's metapackages, as
    `dpkg-query` lists them (`ii`: installed), and nothing removed or never installed."""
    from gpustack.render.stackfiles.nvidia_driver import HOLD_KERNEL

    listed = ("ii  linux-image-6.8.0-85-generic\nii  linux-headers-6.8.0-85-generic\nii  linux-modules-6.8.0-85-generic\n"
              "ii  linux-generic\nii  linux-image-generic\nrc  linux-image-6.8.0-40-generic\nun  linux-generic-hwe-24.04\n")
    fakes = {
        "uname": 'echo 6.8.0-85-generic',
        "dpkg-query": f'printf "%s\\n" "$@" > "{tmp_path}/patterns"; printf "{listed}"',
        "apt-mark": f'echo "$@" > "{tmp_path}/held"',
        "sudo": '"$@"',
    }
    for name, body in fakes.items():
        (tmp_path / name).write_text(f"#!/bin/bash\n{body}\n", encoding="utf-8")
        (tmp_path / name).chmod(0o755)
    subprocess.run(["bash", "-c", HOLD_KERNEL], env={"PATH": f"{tmp_path}:/usr/bin:/bin"}, check=True)
    assert (tmp_path / "held").read_text().split() == [
        "hold", "linux-image-6.8.0-85-generic", "linux-headers-6.8.0-85-generic", "linux-modules-6.8.0-85-generic",
        "linux-generic", "linux-image-generic"]
    assert "linux-generic*" in (tmp_path / "patterns").read_text().split()[-1:]


def test_the_kernel_hold_is_only_where_a_host_driver_is(render_spec):
    from gpustack.render.stackfiles.nvidia_driver import HOLD_KERNEL

    _, files = render_spec()
    assert HOLD_KERNEL in commands(files["README.md"])
    _, files = render_spec(cluster={"distribution": "kubeadm"}, nodePools=[
        {"name": "a", "gpu": {"model": "L4"}, "driver": {"source": "operator"}}], gpuOperator={"enabled": True})
    assert HOLD_KERNEL not in commands(files["README.md"])
