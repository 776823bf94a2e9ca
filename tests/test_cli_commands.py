"""What a finished CLI offers, end to end through ``gpustack.cli.main``: --version, completion,
init, gpus, explain by name, did-you-mean, colour, help text, the JSON lint summary."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from gpustack.cli import main

RED_ERROR = "\x1b[1;31merror\x1b[0m"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_:
        main(list(argv))
    out, err = capsys.readouterr()
    return int(exit_.value.code or 0), out, err


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version_names_the_distribution(flag: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, flag) == (0, f"kube-gpustack {version('kube-gpustack')}\n", "")


def test_completion_script(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHELL", "/bin/bash")
    code, out, _ = run(capsys, "--show-completion", "bash")
    assert code == 0
    assert "_GPUSTACK_COMPLETE" in out and "complete " in out


def test_command_list_keeps_whole_summaries(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--help")
    text = " ".join(out.split())
    assert code == 0
    assert "Render a GPU stack: cluster/, manifests/, helm/<release>.values.yaml and README.md." in text
    assert "..." not in out.split("Commands:")[1]


@pytest.mark.parametrize(
    ("command", "usage"),
    [
        ("validate", "Usage: gpustack validate [OPTIONS] SPEC..."),
        ("lint", "Usage: gpustack lint [OPTIONS] [PATH...]"),
        ("render", "Usage: gpustack render [OPTIONS] SPEC"),
        ("init", "Usage: gpustack init [OPTIONS] [FILE]"),
    ],
)
def test_usage_names_arguments(command: str, usage: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, command, "--help")
    assert (code, out.splitlines()[0]) == (0, usage)


# --- init ---------------------------------------------------------------------------------


def test_init_from_options_validates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "prod-gpus.yaml"
    code, _, err = run(capsys, "init", str(spec), "--gpu", "rtx 4090", "--count", "2", "--distribution", "kubeadm")
    assert code == 0, err
    assert "written and valid" in err
    text = spec.read_text(encoding="utf-8")
    assert "name: prod-gpus\n" in text and "model: RTX-4090\n" in text and "distribution: kubeadm\n" in text
    assert run(capsys, "validate", str(spec))[:2] == (0, f"{spec}: ok\n")


def test_init_talos_pins_a_release(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "talos.yaml"
    code, _, err = run(capsys, "init", str(spec), "--gpu", "L40S", "--distribution", "talos")
    assert code == 0, err
    assert "distribution: talos" in spec.read_text() and "talosVersion: v1.13.0" in spec.read_text()


def test_init_refuses_to_overwrite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "gpustack.yaml"
    spec.write_text("mine\n", encoding="utf-8")
    code, _, err = run(capsys, "init", str(spec), "--gpu", "L4")
    assert (code, spec.read_text(encoding="utf-8")) == (2, "mine\n")
    assert "exists: init does not overwrite a spec (--force replaces it)" in err
    assert run(capsys, "init", str(spec), "--gpu", "L4", "--force")[0] == 0
    assert "model: L4" in spec.read_text(encoding="utf-8")


def test_init_needs_a_gpu_when_it_cannot_ask(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "init", str(tmp_path / "s.yaml"))
    assert code == 2 and "--gpu MODEL is needed" in err
    assert not (tmp_path / "s.yaml").exists()


def test_init_unknown_gpu_suggests(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "init", str(tmp_path / "s.yaml"), "--gpu", "H100-80G")
    assert code == 2
    assert "unknown GPU model 'H100-80G'; did you mean H100-80GB-SXM" in err


def test_init_asks_in_a_terminal(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    answers = iter(["kubeadm", "A100", "A100-80GB", 4])
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    monkeypatch.setattr("typer.prompt", lambda *args, **kwargs: next(answers))
    spec = tmp_path / "asked.yaml"
    code, _, err = run(capsys, "init", str(spec))
    assert code == 0, err
    assert "did you mean A100-40GB-SXM, A100-80GB-SXM or A100-80GB-PCIE?" in err  # "A100" is three GPUs
    text = spec.read_text(encoding="utf-8")
    assert "model: A100-80GB-SXM\n" in text and "count: 4\n" in text and "distribution: kubeadm" in text


def test_init_from_discover(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    discovered = tmp_path / "node.yaml"
    discovered.write_text(
        "# gpustack discover: 1 × NVIDIA-L4 [10de:27b8] class 0302\n"
        "cluster:\n  distribution: k3s\nnodePools:\n- name: l4\n  gpu:\n    model: L4\n    count: 1\n"
        "  driver:\n    source: host\n    version: '595.84'\n",
        encoding="utf-8",
    )
    spec = tmp_path / "from-node.yaml"
    code, _, err = run(capsys, "init", str(spec), "--from-discover", str(discovered), "--kubernetes-version", "1.35")
    assert code == 0, err
    text = spec.read_text(encoding="utf-8")
    assert "kubernetesVersion: '1.35'" in text and "version: '595.84'" in text
    assert run(capsys, "validate", str(spec))[0] == 0


def test_init_from_something_else(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "pod.yaml"
    other.write_text("apiVersion: v1\nkind: Pod\n", encoding="utf-8")
    code, _, err = run(capsys, "init", str(tmp_path / "s.yaml"), "--from-discover", str(other))
    assert code == 2 and "not what `gpustack discover` prints" in err


# --- gpus ---------------------------------------------------------------------------------


def test_gpus_lists_models_and_aliases(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "gpus")
    rows = {line.split()[0]: line for line in out.splitlines()[1:]}
    assert code == 0
    assert out.startswith("MODEL")
    assert "H100-80GB" in rows["H100-80GB-SXM"] and "GeForce-RTX-4090" in rows["RTX-4090"]
    assert {"B200", "GB200", "H20", "A10", "A30", "A40", "L40", "RTX-6000-ADA", "RTX-PRO-6000"} <= set(rows)


def test_gpus_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "gpus", "--format", "json")
    document = json.loads(out)
    assert code == 0
    assert document["L4"]["pciDevice"] == "27b8" and document["A30"]["migProfiles"] == ["1g.6gb", "2g.12gb", "4g.24gb"]


# --- explain ------------------------------------------------------------------------------


def test_explain_by_name(capsys: pytest.CaptureFixture[str]) -> None:
    by_name, by_id = run(capsys, "explain", "pci-0300-selector"), run(capsys, "explain", "gs001")
    assert by_name == by_id and by_name[0] == 0
    assert by_name[1].startswith("# GS001 pci-0300-selector")


@pytest.mark.parametrize(
    ("typed", "suggestion"),
    [
        ("pci-0300-selectr", "pci-0300-selector"),
        ("GS0001", "GS001"),
        ("gs1", "GS001"),  # zero-padding, not the GS041 that spelling distance prefers
        ("GS4", "GS004"),
        ("privileged-pod", None),
    ],
)
def test_explain_unknown_rule_suggests(typed: str, suggestion: str | None, capsys) -> None:
    code, out, err = run(capsys, "explain", typed)
    assert (code, out) == (2, "")
    assert err.startswith(f"error: unknown rule {typed!r}; ")
    if suggestion:
        assert f"did you mean {suggestion}" in err


# --- spec keys ----------------------------------------------------------------------------

BAD_KEYS = """\
apiVersion: gpustack.io/v1alpha1
kind: GpuStack
metadata:
  name: t
spec:
  cluster:
    distribution: k3s
    kubernetesVerison: "1.36"
  nodePools:
    - name: a
      gpu: {model: L4, cuont: 1}
      sharing: {strategy: timeSlicing, replicas: 2, renameByDefalt: true}
      colour: red
"""


def test_unknown_spec_keys_suggest_the_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "bad.yaml"
    spec.write_text(BAD_KEYS, encoding="utf-8")
    code, _, err = run(capsys, "validate", str(spec))
    assert code == 2
    lines = err.splitlines()
    assert f"error: {spec}:8:5: spec.cluster.kubernetesVerison: unknown key; did you mean kubernetesVersion" in err
    assert any("spec.nodePools[0].gpu.cuont: unknown key; did you mean count?" in line for line in lines)
    assert any("sharing.renameByDefalt: unknown key; did you mean renameByDefault?" in line for line in lines)
    assert any("spec.nodePools[0].colour: unknown key (not part of the GpuStack schema" in line for line in lines)


# --- colour -------------------------------------------------------------------------------


def test_validate_colour_follows_the_flags(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    spec = tmp_path / "bad.yaml"
    spec.write_text(BAD_KEYS, encoding="utf-8")
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert RED_ERROR in run(capsys, "validate", "--color", str(spec))[2]
    assert "\x1b[" not in run(capsys, "validate", str(spec))[2]  # not a terminal
    assert "\x1b[" not in run(capsys, "validate", "--no-color", str(spec))[2]


def test_doctor_colour(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run(capsys, "doctor", "--root", str(tmp_path), "--color")
    assert code == 1
    assert "\x1b[1;31mproblem \x1b[0m pci" in out
    assert "\x1b[" not in run(capsys, "doctor", "--root", str(tmp_path))[1]


def test_lint_colour_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pod = tmp_path / "pod.yaml"
    pod.write_text(POD, encoding="utf-8")
    assert "\x1b[" in run(capsys, "lint", "--no-cache", "--color", str(pod))[1]
    assert "\x1b[" not in run(capsys, "lint", "--no-cache", "--no-color", str(pod))[1]


# --- JSON lint summary --------------------------------------------------------------------

POD = """\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  nodeSelector: {feature.node.kubernetes.io/pci-0300_10de.present: "true"}
  containers:
    - name: c
      image: x
      securityContext: {privileged: true}
      resources: {limits: {nvidia.com/gpu: 1}}
"""


def test_json_summary_counts_per_severity(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "pod.yaml").write_text(POD, encoding="utf-8")
    (tmp_path / "broken.yaml").write_text("a: [\n", encoding="utf-8")
    code, out, _ = run(capsys, "lint", "--no-cache", "--format", "json", str(tmp_path))
    summary = json.loads(out)["summary"]
    findings = json.loads(out)["findings"]
    assert code == 1
    for severity in ("error", "warning", "info"):
        assert summary[severity] == sum(1 for f in findings if f["severity"] == severity)
    assert summary["error"] + summary["warning"] + summary["info"] == summary["findings"] > 0
    assert summary["input_errors"] == summary["errors"] == 1


@pytest.mark.parametrize("collecting", [True, False])
def test_importing_the_cli_leaves_the_garbage_collector_as_it_was(collecting: bool) -> None:
    """The CLI keeps the collector off while it imports (and freezes what that made): the
    importer's setting holds afterwards."""
    probe = (
        "import gc\n"
        f"{'gc.enable()' if collecting else 'gc.disable()'}\n"
        "import gpustack.cli\n"
        "print(gc.isenabled(), gc.get_freeze_count() > 10_000)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split() == [str(collecting), "True"]
