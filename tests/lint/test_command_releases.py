"""GPU charts installed by helm commands in scripts and notes are releases: their ``-f`` files and
``--set`` values are judged as Helm merges them, findings point at the command's line."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpustack.lint.engine import lint
from gpustack.lint.policy.config import Config

from lint_support import load_paths, write_tree

AKS_POOL = "az aks nodepool add -g rg --cluster-name c -n gpu --node-vm-size Standard_NC24ads_A100_v4\n"
OPERATOR = "helm upgrade --install gpu-operator nvidia/gpu-operator -n gpu-operator --create-namespace"


def _findings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, str], rule: str):  # type: ignore[no-untyped-def]
    root = write_tree(tmp_path, files)
    monkeypatch.chdir(root)
    report = lint(load_paths(["."]), Config(tree=root))
    return [f for f in report.findings if f.rule == rule]


def test_a_readme_operator_install_on_aks_gpu_pools_keeps_its_driver(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    readme = f"# Setup\n\n```sh\n{AKS_POOL}```\n\nThen:\n\n```sh\n{OPERATOR} \\\n  --set toolkit.enabled=false\n```\n"
    (finding,) = _findings(tmp_path, monkeypatch, {"README.md": readme}, "GS035")
    assert (finding.file, finding.line) == ("README.md", 10)
    assert "helm command at README.md:10" in finding.message and not finding.fixable


@pytest.mark.parametrize(
    "files",
    [
        {"README.md": f"{AKS_POOL}\n{OPERATOR} --set driver.enabled=false\n"},  # --set turns it off
        {"setup.sh": f"{AKS_POOL}{OPERATOR} -f values/operator.yaml\n", "values/operator.yaml": "driver:\n  enabled: false\n"},
        {"setup.sh": f"{AKS_POOL}{OPERATOR} -f ../elsewhere.yaml\n"},  # values the set does not hold: unknown
        {"setup.sh": f"{AKS_POOL}{OPERATOR} --set driver.enabled=$WITH_DRIVER\n"},  # the shell decides
    ],
    ids=["set", "values-file", "file-not-in-set", "shell-variable"],
)
def test_commands_whose_values_turn_the_driver_off_or_cannot_be_known_are_quiet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, str]
) -> None:
    assert _findings(tmp_path, monkeypatch, files, "GS035") == []


def test_values_files_resolve_from_a_folder_above_the_script(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = {
        "scripts/install.sh": f"{OPERATOR} -f helm/operator.yaml\n",
        "helm/operator.yaml": "driver:\n  useOpenKmods: true\n",
    }
    (finding,) = _findings(tmp_path, monkeypatch, files, "GS031")
    assert (finding.file, finding.line) == ("helm/operator.yaml", 2)
    assert "helm command at scripts/install.sh:1" in finding.message


def test_set_keys_no_template_reads_point_at_the_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = {"install.sh": "set -e\n" + OPERATOR + " --set driver.useOpenKmods=true\n"}
    (finding,) = _findings(tmp_path, monkeypatch, files, "GS031")
    assert (finding.file, finding.line) == ("install.sh", 2)
    assert "driver.useOpenKmods" in finding.message
