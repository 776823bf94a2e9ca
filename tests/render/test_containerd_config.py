"""The kubeadm host steps' containerd configuration, run for real: the README's commands against the
containerd release they install (its ``config default``, config version 3) and the toolkit release
they pin (``nvidia-ctk runtime configure``), then containerd's own ``config dump`` of the result.

The cluster tier reads the same commands (tests/cluster/host.py): its handlers and default for a
node must be the ones containerd's dump shows for that node's commands.
"""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

import pytest
from host_tools import containerd, nvidia_ctk
from test_host_steps import host_blocks

from tests.cluster import host

CONTAINERD_RELEASE = re.compile(r"'containerd\.io=(\d+\.\d+\.\d+)-\*'")
TOOLKIT_RELEASE = re.compile(r"\bnvidia-container-toolkit=(\d+\.\d+\.\d+)-1\b")
RUN_HERE = ("sudo mkdir -p /etc/containerd", "containerd config default", "sudo sed -i", "grep -q",
            "sudo nvidia-ctk runtime configure")


def containerd_block(readme: str) -> list[str]:
    block = next(b for b in host_blocks(readme) if "containerd config default" in b)
    return [line for line in block.splitlines() if line.strip()]


def run_on_node(lines: list[str], etc: Path, tools: Path) -> None:
    """The configuration commands of ``lines`` with /etc/containerd at ``etc`` (no root, no apt,
    no systemd): nvidia-ctk is told the paths it would take by default."""
    script = []
    for line in lines:
        if not line.startswith(RUN_HERE):
            continue
        line = line.replace("sudo ", "").replace("/etc/containerd", str(etc))
        if line.startswith("nvidia-ctk runtime configure"):
            line += f" --config={etc}/config.toml --drop-in-config={etc}/conf.d/99-nvidia.toml"
        script.append(line)
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", "\n".join(script)], text=True, capture_output=True,
                          env={"PATH": f"{tools}:/usr/bin:/bin"}, check=False)
    assert done.returncode == 0, f"{script}\n{done.stderr}"


def dump(binary: Path, etc: Path) -> dict:
    done = subprocess.run([str(binary), "--config", str(etc / "config.toml"), "config", "dump"], text=True,
                          capture_output=True, check=True)
    return tomllib.loads(done.stdout)


@pytest.fixture(scope="module")
def tools(examples, tmp_path_factory) -> tuple[Path, Path]:
    readme = examples["kubeadm-host-driver"][1]["README.md"]
    folder = tmp_path_factory.mktemp("tools")
    ctr = containerd(CONTAINERD_RELEASE.search(readme).group(1))
    ctk = nvidia_ctk(TOOLKIT_RELEASE.search(readme).group(1))
    for binary in (ctr, ctk):
        (folder / binary.name).symlink_to(binary)
    return folder, ctr


@pytest.mark.parametrize("default_runtime", [False, True])
def test_the_steps_give_containerd_2_systemd_cgroups_and_the_nvidia_runtime(render_spec, tools, tmp_path,
                                                                            default_runtime):
    folder, ctr = tools
    _, files = render_spec(cluster={"distribution": "kubeadm", "nvidiaDefaultRuntime": default_runtime},
                           nodePools=[{"name": "gpu", "gpu": {"model": "L4"}, "driver": {"version": "595.84"},
                                       "toolkit": {"version": "1.20.0"}}],
                           systemPools=[{"name": "system"}])
    readme = files["README.md"]
    tree = _tree(tmp_path / "tree", readme)
    lines = containerd_block(readme)
    for pool, gpus in (("gpu", True), ("system", False)):
        etc = tmp_path / pool
        etc.mkdir()
        run_on_node([c for c in host.pool_commands(tree / "README.md", pool, gpus) if c in lines], etc, folder)
        config = dump(ctr, etc)
        assert config["version"] == 3
        cri = config["plugins"]["io.containerd.cri.v1.runtime"]
        runtimes = cri["containerd"]["runtimes"]
        assert runtimes["runc"]["options"]["SystemdCgroup"] is True
        assert cri["enable_cdi"] is True
        facts = host.host_facts(tree, "kubeadm", pool, gpus)
        assert set(runtimes) == facts.runtimes  # the cluster tier's handlers are containerd's
        assert cri["containerd"]["default_runtime_name"] == facts.default_runtime
        assert facts.containerd == CONTAINERD_RELEASE.search(readme).group(1)
        if gpus:
            assert runtimes["nvidia"]["options"]["BinaryName"].endswith("nvidia-container-runtime")
            assert runtimes["nvidia"]["options"]["SystemdCgroup"] is True  # copied from runc's
            assert facts.default_runtime == ("nvidia" if default_runtime else "runc")
        else:
            assert set(runtimes) == {"runc"}


def test_the_check_fails_where_the_sed_would_miss(tools, tmp_path):
    """containerd 2.0 and early 2.1 printed runc's options without SystemdCgroup (containerd#12101):
    the grep stops the block there instead of starting a cgroupfs runc under a systemd kubelet."""
    folder, ctr = tools
    default = subprocess.run([str(ctr), "config", "default"], text=True, capture_output=True, check=True).stdout
    config = tmp_path / "config.toml"
    config.write_text(default.replace("SystemdCgroup = false\n", ""), encoding="utf-8")
    sed = subprocess.run(["sed", "-i", "s/SystemdCgroup = false/SystemdCgroup = true/", str(config)], check=False)
    check = subprocess.run(["grep", "-q", "SystemdCgroup = true", str(config)], check=False)
    assert sed.returncode == 0 and check.returncode == 1


@pytest.mark.parametrize(("release", "reads_version_3"), [("1.17.3", False), ("1.17.4", True)])
def test_nvidia_ctk_reads_config_version_3_from_1_17_4(tools, tmp_path, release, reads_version_3):
    """The minimum the spec's check asks of a kubeadm pool's toolkit.version."""
    _, ctr = tools
    config = tmp_path / "config.toml"
    config.write_text(subprocess.run([str(ctr), "config", "default"], text=True, capture_output=True,
                                     check=True).stdout, encoding="utf-8")
    done = subprocess.run([str(nvidia_ctk(release)), "runtime", "configure", "--runtime=containerd",
                           f"--config={config}", "--dry-run"], text=True, capture_output=True, check=False)
    assert (done.returncode == 0) is reads_version_3, done.stderr
    if reads_version_3:
        assert "io.containerd.cri.v1.runtime" in done.stdout
    else:
        assert "unsupported config version: 3" in done.stderr


def _tree(folder: Path, readme: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "README.md").write_text(readme, encoding="utf-8")
    return folder
