"""``gpustack lint --fix`` and ``--diff`` end to end: exact output, exit codes, files."""

from __future__ import annotations

import codecs
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lint_support import gpustack as run_cli

VLLM = """\
# vLLM on the K3s box (one NVIDIA L4)
apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm
  namespace: serving
spec:
  replicas: 1
  strategy:
    type: Recreate  # one GPU: the old pod must free it first
  selector:
    matchLabels: {app: vllm}
  template:
    metadata:
      labels: {app: vllm}
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.9.1
          args: ["--model", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", "8192"]
          readinessProbe: {httpGet: {path: /health, port: 8000}}
          resources:
            requests:
              cpu: "4"
              nvidia.com/gpu: 1
            limits:
              memory: 24Gi
              nvidia.com/gpu: 2  # copied from the two-GPU box
"""
FIXED = VLLM.replace(
    "              nvidia.com/gpu: 2  # copied from the two-GPU box\n",
    "              nvidia.com/gpu: 1  # copied from the two-GPU box\n"
    "      runtimeClassName: nvidia\n",
)
# With the opt-in GS023 turned on, its hardening too.
HARDENED = VLLM.replace(
    "              nvidia.com/gpu: 2  # copied from the two-GPU box\n",
    "              nvidia.com/gpu: 1  # copied from the two-GPU box\n"
    "          securityContext:\n"
    "            allowPrivilegeEscalation: false\n"
    "            capabilities:\n"
    "              drop:\n"
    "                - ALL\n"
    "      runtimeClassName: nvidia\n",
)
DIFF = """\
--- a/vllm.yaml
+++ b/vllm.yaml
@@ -25,4 +25,5 @@
               nvidia.com/gpu: 1
             limits:
               memory: 24Gi
-              nvidia.com/gpu: 2  # copied from the two-GPU box
+              nvidia.com/gpu: 1  # copied from the two-GPU box
+      runtimeClassName: nvidia
"""
CLEAN = "1 file, 1 object: no findings\n"


def gpustack(capsys: pytest.CaptureFixture[str], *args: str, stdin: bytes | None = None) -> tuple[int, str, str]:
    """`gpustack lint --distribution k3s ARGS` in-process: (exit code, stdout, stderr)."""
    return run_cli(capsys, "lint", "--distribution", "k3s", *args, stdin=stdin)


@pytest.fixture(autouse=True)
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_diff_prints_the_diff_changes_nothing_and_exits_by_the_files_as_they_are(
    capsys: pytest.CaptureFixture[str],
) -> None:
    Path("vllm.yaml").write_text(VLLM)
    code, out, err = gpustack(capsys, "--diff", "vllm.yaml")
    assert (code, out) == (1, DIFF)
    assert err.startswith("--fix would fix 2 findings in 1 file\nvllm.yaml:16:5: warning GS004 missing-runtime-class:")
    assert err.endswith("1 file, 1 object: 2 findings (1 error, 1 warning)\n")
    assert Path("vllm.yaml").read_text() == VLLM


def test_fix_writes_keeps_the_mode_reports_what_remains_and_a_second_fix_changes_nothing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    Path("vllm.yaml").write_text(VLLM)
    os.chmod("vllm.yaml", 0o640)
    assert gpustack(capsys, "--fix", "vllm.yaml") == (0, CLEAN, "fixed 2 findings in 1 file\n")
    assert Path("vllm.yaml").read_text() == FIXED
    assert os.stat("vllm.yaml").st_mode & 0o777 == 0o640
    assert gpustack(capsys, "--fix", "vllm.yaml") == (0, CLEAN, "fixed 0 findings in 0 files\n")
    assert Path("vllm.yaml").read_text() == FIXED
    assert [p.name for p in Path().iterdir()] == ["vllm.yaml"]  # no temporary file left


def test_fix_exits_by_what_remains(capsys: pytest.CaptureFixture[str]) -> None:
    Path("vllm.yaml").write_text(VLLM.replace("nvidia.com/gpu: 1\n", "nvidia.com/gpu: 0.5\n"))
    code, out, err = gpustack(capsys, "--fix", "vllm.yaml")
    assert (code, err) == (1, "fixed 1 finding in 1 file\n")
    assert "GS006" in out and "0.5 is not a whole number" in out and "GS004" not in out


def test_fix_on_standard_input_prints_the_fixed_stream_and_reports_on_standard_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert gpustack(capsys, "--fix", "-", stdin=VLLM.encode()) == (0, FIXED, "fixed 2 findings in 1 file\n" + CLEAN)


def test_a_file_that_does_not_parse_is_never_written_and_the_others_are_fixed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    Path("broken.yaml").write_bytes(b"a: [\n  # the rest got lost\n")
    Path("vllm.yaml").write_text(VLLM)
    code, out, err = gpustack(capsys, "--fix", "broken.yaml", "vllm.yaml")
    assert (code, err) == (1, "fixed 2 findings in 1 file\n")
    assert out.startswith("broken.yaml:3:1: error: invalid YAML:")
    assert Path("broken.yaml").read_bytes() == b"a: [\n  # the rest got lost\n"
    assert Path("vllm.yaml").read_text() == FIXED


def test_fix_through_a_link_keeps_the_link_the_byte_order_mark_and_crlf(capsys: pytest.CaptureFixture[str]) -> None:
    Path("real.yaml").write_bytes(codecs.BOM_UTF8 + VLLM.replace("\n", "\r\n").encode())
    Path("vllm.yaml").symlink_to("real.yaml")
    assert gpustack(capsys, "--fix", "vllm.yaml")[0] == 0
    assert Path("vllm.yaml").is_symlink()
    assert Path("real.yaml").read_bytes() == codecs.BOM_UTF8 + FIXED.replace("\n", "\r\n").encode()


def test_an_opt_in_rule_fixes_where_the_config_turns_it_on(capsys: pytest.CaptureFixture[str]) -> None:
    """GS023 (opt-in) adds its hardening only where selected: here by ``rules: {GS023: on}``."""
    Path("vllm.yaml").write_text(VLLM)
    Path(".gpustack.yaml").write_text("rules: {GS023: on}\n")
    assert gpustack(capsys, "--fix", "vllm.yaml") == (0, CLEAN, "fixed 3 findings in 1 file\n")
    assert Path("vllm.yaml").read_text() == HARDENED


def test_fix_and_diff_exclude_each_other(capsys: pytest.CaptureFixture[str]) -> None:
    Path("vllm.yaml").write_text(VLLM)
    code, _, err = gpustack(capsys, "--fix", "--diff", "vllm.yaml")
    assert code == 2 and "--fix and --diff exclude each other" in err
    assert Path("vllm.yaml").read_text() == VLLM


def test_the_documented_example_is_what_diff_prints(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The Autofix page shows exactly what `--diff` prints."""
    section = (repo / "docs" / "lint" / "autofix.md").read_text("utf-8")
    manifest = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    console = section.split("```console\n", 1)[1].split("```", 1)[0]
    command, shown = console.split("\n", 1)
    assert (manifest, command) == (VLLM, "$ gpustack lint --distribution k3s --diff vllm.yaml")
    Path("vllm.yaml").write_text(manifest)
    assert gpustack(capsys, "--diff", "vllm.yaml")[1] == shown


@pytest.mark.parametrize(("flags", "imported"), [((), False), (("--diff",), True)])
def test_only_fix_and_diff_import_the_fixer(flags: tuple[str, ...], imported: bool) -> None:
    Path("vllm.yaml").write_text(VLLM)
    probe = (
        "import sys\nfrom gpustack.cli import main\ntry:\n"
        f"    main(['lint', 'vllm.yaml', *{flags!r}])\nexcept SystemExit:\n    pass\n"
        "print('gpustack.lint.fix' in sys.modules, file=sys.stderr)\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stderr.splitlines()[-1] == str(imported)
