"""Chart values wherever GitOps keeps them: positions inside values strings, values files
mapped in ``.gpustack.yaml``, and gpustack's own rendered output linting clean."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gpustack.cli import main
from gpustack.lint.context import LintContext
from gpustack.lint.engine import lint
from gpustack.lint.input.load import load_text
from gpustack.lint.policy.config import load_config
from gpustack.lint.releases import dispatch
from gpustack.lint.rules import RULES

from lint_support import load_paths

REPO = Path(__file__).resolve().parents[2]

HELMCHART = """\
apiVersion: helm.cattle.io/v1
kind: HelmChart
metadata: {name: nvidia-device-plugin, namespace: kube-system}
spec:
  chart: nvidia-device-plugin
  version: 0.20.0
  valuesContent: |-
    # comments and blank lines inside the string count

    runtimeClassName: nvidia
    gfd:
      enabled: true
      sleepIntervall: 60s
"""


def test_a_finding_inside_values_content_carries_the_file_line_and_column() -> None:
    report = lint(load_text("chart.yaml", HELMCHART))
    [finding] = [f for f in report.findings if f.rule == "GS031"]
    line = HELMCHART.splitlines()[finding.line - 1]
    assert (finding.line, finding.column) == (13, 7)
    assert line[finding.column - 1 :].startswith("sleepIntervall:")
    assert finding.fix == "Did you mean `sleepInterval` (top level)?"  # gfd.sleepInterval: read by no template


def test_argo_cd_values_string_and_indentation_indicator_positions() -> None:
    text = """\
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: dcgm-exporter, namespace: argocd}
spec:
  source:
    chart: dcgm-exporter
    repoURL: https://nvidia.github.io/dcgm-exporter/helm-charts
    targetRevision: 4.8.2
    helm:
      values: |
          runtimeClassName: nvidia
          servicemonitor: {enabled: true}
"""
    [finding] = [f for f in lint(load_text("app.yaml", text)).findings if f.rule == "GS031"]
    assert (finding.line, finding.column) == (12, 11)


def test_a_flow_string_points_at_the_string() -> None:
    text = 'apiVersion: helm.cattle.io/v1\nkind: HelmChart\nmetadata: {name: hami}\nspec:\n  chart: hami\n' \
        '  version: 2.10.0\n  valuesContent: "devicePlugin: {runtimeClassName: nvidia, typo: 1}"\n'
    [finding] = [f for f in lint(load_text("h.yaml", text)).findings if f.rule == "GS031"]
    assert (finding.line, finding.column) == (7, 18)


def test_helmchartconfig_ranks_between_values_content_and_set() -> None:
    text = """\
apiVersion: helm.cattle.io/v1
kind: HelmChart
metadata: {name: hami, namespace: kube-system}
spec:
  chart: hami
  valuesContent: "a: content\\nb: content\\nc: content"
  set: {c: set}
---
apiVersion: helm.cattle.io/v1
kind: HelmChartConfig
metadata: {name: hami, namespace: kube-system}
spec:
  valuesContent: "b: config\\nc: config"
"""
    loaded = load_text("k3s.yaml", text)
    [release] = dispatch.releases(LintContext(loaded.resources, ()))
    assert release.values == {"a": "content", "b": "config", "c": "set"}
    assert release.where("b")[0] is loaded.resources[1]


def test_values_files_mapped_in_the_config(tmp_path: Path) -> None:
    (tmp_path / "helm").mkdir()
    (tmp_path / "helm" / "hami.values.yaml").write_text(
        "scheduler:\n  kubeScheduler:\n    imageTag: v1.33.0\ndevicePlugin:\n  runtimeClassName: nvidia\n"
    )
    (tmp_path / ".gpustack.yaml").write_text("values:\n  helm/*.values.yaml: hami@2.10.0\n")
    config = load_config(tmp_path / ".gpustack.yaml", known_rules=RULES)
    assert config.values == (("helm/*.values.yaml", "hami@2.10.0"),)
    report = lint(load_paths([str(tmp_path)]), config)
    found = {(f.rule, f.line) for f in report.findings}
    assert ("GS031", 3) in found
    assert ("GS010", 1) in found  # the chart's default gpu: "on" selector, at the top of the file


# --- gpustack's own output --------------------------------------------------------------


def _output_trees() -> list[Path]:
    return sorted(p for p in (REPO / "output").iterdir() if p.is_dir()) if (REPO / "output").is_dir() else []


def _lint_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(["lint", *argv, "--fail-on", "info"])
    return exit_info.value.code or 0, capsys.readouterr().out


@pytest.mark.parametrize("tree", _output_trees(), ids=lambda p: p.name)
def test_rendered_output_lints_clean_with_no_flags(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The stack's own .gpustack.yaml maps its values files to their charts (GS031) and names
    the distribution."""
    code, out = _lint_cli(capsys, str(tree))
    assert code == 0, out


def test_the_rendered_config_maps_the_values_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tree = REPO / "output" / "k3s-l4"
    if not tree.is_dir():
        pytest.skip("no committed output")
    shutil.copytree(tree, tmp_path / "k3s-l4")
    values = tmp_path / "k3s-l4" / "helm" / "nvidia-device-plugin.values.yaml"
    values.write_text(values.read_text() + "runtimeClassNmae: nvidia\n")
    code, out = _lint_cli(capsys, str(tmp_path / "k3s-l4"))
    assert code == 1 and "GS031" in out and "Did you mean `runtimeClassName`?" in out, out
