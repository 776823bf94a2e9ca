"""The pre-commit hook, run by the real pre-commit (``try-repo``) from a temporary git
repository: it installs gpustack into its own environment (needs the package index; the test
skips when it cannot be reached), runs on a staged YAML change, lints the whole set, and fails
on broken YAML."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pre_commit")

CLAIM = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: gpu, namespace: ml}
spec:
  devices:
    requests: [{name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}]
"""
POD = """\
apiVersion: v1
kind: Pod
metadata: {name: train, namespace: ml}
spec:
  runtimeClassName: nvidia
  containers:
    - name: train
      image: trainer:1.0
      resources: {claims: [{name: gpu}]}
      securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
  resourceClaims: [{name: gpu, resourceClaimName: gpu}]
"""
OFFLINE = ("NewConnectionError", "Temporary failure in name resolution", "No matching distribution found")


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
def test_hook_lints_the_whole_set_and_fails_on_broken_yaml(repo: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q")
    git(project, "config", "user.email", "test@example.invalid")
    git(project, "config", "user.name", "test")
    (project / "pod.yaml").write_text(POD)
    (project / "claim.yaml").write_text(CLAIM)
    git(project, "add", ".")
    git(project, "commit", "-q", "-m", "manifests")
    # Only the claim and a broken file are staged; the pod that uses the claim is not.
    (project / "claim.yaml").write_text(CLAIM.replace("namespace: ml}", "namespace: ml, labels: {a: b}}"))
    (project / "broken.yaml").write_text("kind: [\n")
    git(project, "add", ".")

    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache"), "PRE_COMMIT_COLOR": "never"}
    result = subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(repo), "gpustack-lint"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    output = result.stdout + result.stderr
    if result.returncode != 1 and any(sign in output for sign in OFFLINE):
        pytest.skip("the hook environment cannot be installed without the package index")
    assert result.returncode == 1, output
    assert "gpustack lint" in output and "Failed" in output
    assert "broken.yaml:2:1: error: invalid YAML" in output
    assert "GS012" not in output  # the unchanged pod.yaml was linted too: the claim is used
    assert "2 files, 2 objects: no findings, 1 input error" in output
