"""Real kubeadm reads every rendered kubeadm file: ``kubeadm config validate`` (kubeadm of the
release the harness pins for the stack's minor, tests/cluster/build.py) on the ClusterConfiguration
with its KubeletConfiguration (and the InitConfiguration of a highly available control plane)
and on each JoinConfiguration, their variables filled in as the README's steps do."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.cluster import build
from tests.cluster.control_plane import REPO, render
from tests.cluster.spec import load
from tests.cluster.support import require

pytestmark = pytest.mark.cluster

KUBEADM_EXAMPLES = [p for p in sorted((REPO / "examples").glob("*.yaml")) if load(p).spec.cluster.distribution == "kubeadm"]
HA_SPEC = REPO / "tests" / "render" / "specs" / "kubeadm-ha.yaml"


def filled_in(kubeadm: Path, minor: str) -> dict[str, str]:
    """The README's variables: a token and certificate key kubeadm makes, the CA hash in its format."""
    def run(*args: str) -> str:
        return subprocess.run([str(kubeadm), *args], capture_output=True, text=True, check=True).stdout.strip()
    return {
        "KUBERNETES_VERSION": build.RELEASES[minor],
        "CONTROL_PLANE_ENDPOINT": "api.example.internal:6443",
        "JOIN_TOKEN": run("token", "generate"),
        "CA_CERT_HASH": "sha256:" + "0" * 64,
        "CERTIFICATE_KEY": run("certs", "certificate-key"),
    }


def validate(kubeadm: Path, file: Path, minor: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    values = filled_in(kubeadm, minor)
    filled = tmp_path / file.name
    filled.write_text(re.sub(r"\$\{(\w+)\}", lambda m: values[m.group(1)], file.read_text()))
    return subprocess.run([str(kubeadm), "config", "validate", "--config", str(filled)],
                          capture_output=True, text=True, check=False, timeout=120)


@pytest.mark.parametrize("spec", [*KUBEADM_EXAMPLES, HA_SPEC], ids=[p.stem for p in [*KUBEADM_EXAMPLES, HA_SPEC]])
def test_kubeadm_accepts_the_rendered_files(spec: Path, tmp_path: Path) -> None:
    minor = load(spec).spec.cluster.kubernetesVersion
    require(minor)
    kubeadm = build.kubeadm(minor)
    folder = render(spec, tmp_path / "stack")
    files = sorted((folder / "cluster").glob("*.yaml"))
    assert folder / "cluster" / "kubeadm-config.yaml" in files
    for file in files:
        if file.name == "pod-security.yaml":
            continue  # the API server's AdmissionConfiguration: the harness's API server starts with it
        done = validate(kubeadm, file, minor, tmp_path)
        assert done.returncode == 0, f"{file.name}: {done.stderr}"


def test_kubeadm_refuses_a_document_of_comments_alone(tmp_path: Path) -> None:
    """Why the header of kubeadm-config.yaml belongs to its first document (cluster_config.kubeadm_config)."""
    require("1.36")
    file = tmp_path / "kubeadm-config.yaml"
    file.write_text("# a comment\n---\napiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\n")
    (tmp_path / "filled").mkdir()
    done = validate(build.kubeadm("1.36"), file, "1.36", tmp_path / "filled")
    assert done.returncode and "kind and apiVersion is mandatory" in done.stderr
