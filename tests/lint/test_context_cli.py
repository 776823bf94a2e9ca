"""``gpustack lint --spec``: the L4 and HAMi scenarios end to end, with the shipped rules and the
repository's example specs as cluster context."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from lint_support import gpustack

REPO = Path(__file__).resolve().parents[2]
HAMI_L4 = REPO / "examples" / "hami-vllm.yaml"  # one 23034 MiB L4 shared by HAMi
L4 = REPO / "examples" / "k3s-l4.yaml"  # the L4 on K3s 1.36 with the device plugin
KUBEADM_135 = REPO / "examples" / "kubeadm-gpu-operator.yaml"  # Kubernetes 1.35
DRA_136 = REPO / "examples" / "dra-hami.yaml"  # Kubernetes 1.36

QWEN = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{ name: vllm-hami-{name}, namespace: vllm }}
spec:{strategy}
  selector: {{ matchLabels: {{ app: vllm-hami-{name} }} }}
  template:
    metadata: {{ labels: {{ app: vllm-hami-{name} }} }}
    spec:
      runtimeClassName: nvidia
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.0
          args: [s3://models/Qwen2.5-1.5B-Instruct, --served-model-name=qwen-{name}, --gpu-memory-utilization=0.80]
          readinessProbe: {{ httpGet: {{ path: /health, port: 8000 }} }}
          resources:
            limits: {{ nvidia.com/gpu: 1, nvidia.com/gpumem: 8000, nvidia.com/gpucores: 40 }}
"""
CAPACITY_CLAIM = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: { name: single-gpu-0, namespace: test-dra }
spec:
  devices:
    requests:
      - name: single-gpu
        exactly:
          deviceClassName: hami-core-gpu.project-hami.io
          allocationMode: ExactCount
          count: 1
          capacity:
            requests: { cores: "30", memory: 4Gi }
"""
MIG_POD = """\
apiVersion: v1
kind: Pod
metadata: { name: mig-test }
spec:
  runtimeClassName: nvidia
  containers:
    - name: cuda
      image: nvcr.io/nvidia/cuda:13.0.1-base-ubuntu24.04
      resources: { limits: { nvidia.com/mig-1g.10gb: 1 } }
"""


@pytest.fixture(autouse=True)
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path




def rule_lines(out: str, rule: str) -> list[str]:
    return [line for line in out.splitlines() if f" {rule} " in line]


def qwen(strategy: str = "") -> str:
    return "---\n".join(QWEN.format(name=name, strategy=strategy) for name in ("a", "b"))


def test_seed_rolling_update_deadlocks_with_the_numbers(capsys: pytest.CaptureFixture[str]) -> None:
    Path("qwen.yaml").write_text(qwen())
    code, out, _ = gpustack(capsys, "lint", "qwen.yaml", "--spec", str(HAMI_L4))
    assert code == 1
    assert rule_lines(out, "GS005") == [
        "qwen.yaml:4:1: error GS005 rolling-update-on-packed-gpu: Deployment vllm/vllm-hami-a rolls out with "
        "RollingUpdate (maxUnavailable 25% of 1 replica = 0): a new pod needs 8000 MiB more, 7034 MiB free on "
        "NVIDIA-L4 (23034 MiB); needs 40 % more cores, 20 % free, while its old pod and Deployment "
        "vllm/vllm-hami-b hold the rest, so it stays Pending and the rollout deadlocks",
        "qwen.yaml:21:1: error GS005 rolling-update-on-packed-gpu: Deployment vllm/vllm-hami-b rolls out with "
        "RollingUpdate (maxUnavailable 25% of 1 replica = 0): a new pod needs 8000 MiB more, 7034 MiB free on "
        "NVIDIA-L4 (23034 MiB); needs 40 % more cores, 20 % free, while its old pod and Deployment "
        "vllm/vllm-hami-a hold the rest, so it stays Pending and the rollout deadlocks",
    ]


def test_seed_recreate_is_clean(capsys: pytest.CaptureFixture[str]) -> None:
    Path("qwen.yaml").write_text(qwen("\n  strategy: { type: Recreate }"))
    code, out, _ = gpustack(capsys, "lint", "qwen.yaml", "--spec", str(HAMI_L4), "--fail-on", "warning")
    assert rule_lines(out, "GS005") == []
    assert code == 0, out


def test_without_a_spec_the_rollout_is_a_warning(capsys: pytest.CaptureFixture[str]) -> None:
    Path("qwen.yaml").write_text(qwen())
    _, out, _ = gpustack(capsys, "lint", "qwen.yaml")
    assert [line.split(" GS005")[0].split(": ")[1] for line in rule_lines(out, "GS005")] == ["warning", "warning"]


def test_mig_slice_on_the_l4_pool_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    Path("mig.yaml").write_text(MIG_POD)
    code, out, _ = gpustack(capsys, "lint", "mig.yaml", "--spec", str(L4))
    assert code == 1
    assert rule_lines(out, "GS024") == [
        "mig.yaml:9:30: error GS024 mig-on-non-mig-gpu: Pod mig-test, container cuda asks for "
        "nvidia.com/mig-1g.10gb: no pool it can run on has a GPU with that profile "
        "(g6: NVIDIA-L4 cannot do MIG), so it stays Pending"
    ]


def test_capacity_claim_needs_the_gate_on_1_35_and_not_on_1_36(capsys: pytest.CaptureFixture[str]) -> None:
    Path("claim.yaml").write_text(CAPACITY_CLAIM)
    code, out, _ = gpustack(capsys, "lint", "claim.yaml", "--spec", str(KUBEADM_135))
    assert code == 1
    assert rule_lines(out, "GS013") == [
        "claim.yaml:12:11: error GS013 dra-feature-gate: ResourceClaim test-dra/single-gpu-0 asks for consumable "
        "capacity (cores, memory), which needs feature gate DRAConsumableCapacity: it is alpha and off by "
        "default in Kubernetes 1.35, and the spec does not turn it on"
    ]
    assert "or run Kubernetes 1.36, where it is on by default" in out
    code, out, _ = gpustack(capsys, "lint", "claim.yaml", "--spec", str(DRA_136))
    assert (code, rule_lines(out, "GS013")) == (0, [])


def test_spec_in_the_config_is_relative_to_it(capsys: pytest.CaptureFixture[str]) -> None:
    Path("cluster").mkdir()
    Path("cluster/gpustack.yaml").write_text(L4.read_text())
    Path("cluster/.gpustack.yaml").write_text("spec: gpustack.yaml\n")
    Path("mig.yaml").write_text(MIG_POD)
    code, out, _ = gpustack(capsys, "lint", "mig.yaml", "--config", "cluster/.gpustack.yaml")
    assert code == 1 and len(rule_lines(out, "GS024")) == 1


def test_the_spec_gives_the_distribution_and_the_flag_wins(capsys: pytest.CaptureFixture[str]) -> None:
    Path("pod.yaml").write_text(MIG_POD.replace("  runtimeClassName: nvidia\n", ""))
    _, out, _ = gpustack(capsys, "lint", "pod.yaml", "--spec", str(L4))
    assert "error GS004" in out and "on k3s" in out
    _, out, _ = gpustack(capsys, "lint", "pod.yaml", "--spec", str(L4), "--distribution", "gke")
    assert rule_lines(out, "GS004") == []


def test_a_bad_spec_exits_2_located(capsys: pytest.CaptureFixture[str]) -> None:
    Path("bad.yaml").write_text(L4.read_text().replace('kubernetesVersion: "1.36"', "kubernetesVersion: 1.36"))
    Path("pod.yaml").write_text(MIG_POD)
    code, out, err = gpustack(capsys, "lint", "pod.yaml", "--spec", "bad.yaml")
    assert (code, out) == (2, "")
    assert err.startswith("error: bad.yaml:13:5: spec.cluster.kubernetesVersion: must be a string: quote it")


def _imported_after(code: str) -> list[str]:
    probe = f"import sys\n{code}\nprint(sorted(m for m in sys.modules if m.split('.')[0] in {WATCHED!r}))\n"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return [m for m in result.stdout.splitlines()[-1].strip("[]").replace("'", "").split(", ") if m]


WATCHED = ("pydantic", "ruamel", "jsonschema", "cdk8s", "jsii", "gpustack")


def test_lint_without_a_spec_reads_no_spec_models(tmp_path: Path) -> None:
    """The linter never needs pydantic, ruamel.yaml or jsonschema without --spec (or --fix): not
    the engine, not the command; the spec's models and the renderer stay unloaded too."""
    manifest = tmp_path / "set.yaml"
    manifest.write_text(qwen() + "---\n" + CAPACITY_CLAIM + "---\n" + MIG_POD)
    engine = (
        "from gpustack.lint.engine import lint\n"
        "from gpustack.lint.input.discover import read_inputs\n"
        "from gpustack.lint.input.load import load_inputs\n"
        f"report = lint(load_inputs(read_inputs([{str(manifest)!r}])))\n"
        "assert report.findings and not report.errors\n"
    )
    loaded = _imported_after(engine)
    assert not [m for m in loaded if not m.startswith("gpustack")], loaded
    # Every rule's fixtures too: the rules that read tables (GS030, GS039-GS041) among them.
    fixtures = REPO / "tests" / "rules" / "fixtures"
    cache = tmp_path / "cache"
    command = (
        "from gpustack.cli import main\n"
        f"try:\n    main(['lint', '--cache-dir', {str(cache)!r}, {str(manifest)!r}, {str(fixtures)!r}])\n"
        "except SystemExit:\n    pass"
    )
    loaded = _imported_after(command)
    assert not [m for m in loaded if not m.startswith("gpustack")], loaded
    # The gate table and the relabel pace (GS021) are plain data.
    spec_free = {"gpustack.spec", "gpustack.spec.featuregates", "gpustack.spec.labelling"}
    heavy = ("cdk8s", "jsii", "gpustack.spec.", "gpustack.render")
    assert not [m for m in loaded if m.startswith(heavy) and m not in spec_free], loaded


def test_a_stored_report_is_printed_without_the_engine(tmp_path: Path) -> None:
    """A second run over unchanged files prints what the first printed: the engine, the rules
    and what they read stay unloaded."""
    manifest = tmp_path / "set.yaml"
    manifest.write_text(qwen() + "---\n" + MIG_POD)
    cache = tmp_path / "cache"
    command = (
        "from gpustack.cli import main\n"
        f"try:\n    main(['lint', '--cache-dir', {str(cache)!r}, {str(manifest)!r}])\n"
        "except SystemExit:\n    pass"
    )
    first = _imported_after(command)
    assert "gpustack.lint.engine" in first and "gpustack.lint.rules" in first
    second = _imported_after(command)
    assert not [m for m in second if m.startswith(("gpustack.lint.engine", "gpustack.lint.rules"))], second
