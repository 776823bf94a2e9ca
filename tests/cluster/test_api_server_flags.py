"""The harness's API server takes the flags a rendered kubeadm stack gives kube-apiserver, with the
files its host steps install (tests/cluster/api_server.py): read from the files, refused when the
file would be missing on the node."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gpustack.render.stackfiles import pod_security_admission
from tests.cluster import api_server
from tests.cluster.control_plane import REPO

KUBEADM = REPO / "output" / "kubeadm-host-driver"


def test_kubeadm_admission_configuration_is_the_rendered_file():
    assert api_server.flags(KUBEADM) == [
        f"--admission-control-config-file={(KUBEADM / pod_security_admission.PATH).resolve()}"]


def test_other_distributions_pass_nothing():
    assert api_server.flags(REPO / "output" / "k3s-l4") == []
    assert api_server.flags(REPO / "output" / "talos-flux") == []


def test_a_file_no_host_step_installs_stops_the_api_server(tmp_path: Path):
    folder = tmp_path / "stack"
    shutil.copytree(KUBEADM, folder)
    readme = folder / "README.md"
    readme.write_text("\n".join(line for line in readme.read_text().splitlines()
                                if not line.startswith("sudo install -D -m 0644 cluster/pod-security.yaml")))
    with pytest.raises(RuntimeError, match="which no host step of the README installs"):
        api_server.flags(folder)
