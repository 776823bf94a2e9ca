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


TF_POOL = (
    'resource "azurerm_kubernetes_cluster_node_pool" "gpu" {\n  name = "gpu"\n  kubernetes_cluster_id = "x"\n'
    '  vm_size = "Standard_NC24ads_A100_v4"\n}\n'
)


def _operator_release(values: str = "", sets: str = "") -> str:
    return (
        'resource "helm_release" "gpu_operator" {\n  name = "gpu-operator"\n  repository = "https://helm.ngc.nvidia.com/nvidia"\n'
        f'  chart = "gpu-operator"\n  version = "v25.3.0"\n{values}{sets}}}\n'
    )


def test_a_terraform_helm_release_on_aks_gpu_pools_keeps_its_driver(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (finding,) = _findings(tmp_path, monkeypatch, {"main.tf": TF_POOL + _operator_release()}, "GS035")
    assert (finding.file, finding.line) == ("main.tf", 6)
    assert "Terraform helm_release gpu_operator at main.tf:6" in finding.message and not finding.fixable


@pytest.mark.parametrize(
    "release",
    [
        _operator_release(sets='  set {\n    name = "driver.enabled"\n    value = "false"\n  }\n'),  # typed: the bool false
        _operator_release(values='  values = [<<-EOT\n    driver:\n      enabled: false\n  EOT\n  ]\n'),  # a heredoc
        _operator_release(values='  values = [file("${path.module}/operator.yaml")]\n'),  # a file of the set
        _operator_release(values='  values = [templatefile("${path.module}/operator.tpl", {x = 1})]\n'),  # Terraform fills it
        _operator_release(sets='  set {\n    name = "driver.enabled"\n    value = var.driver\n  }\n'),  # a variable
    ],
)
def test_terraform_releases_whose_values_turn_the_driver_off_or_cannot_be_known_are_quiet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, release: str
) -> None:
    files = {"main.tf": TF_POOL + release, "operator.yaml": "driver:\n  enabled: false\n"}
    assert _findings(tmp_path, monkeypatch, files, "GS035") == []


def test_a_terraform_string_set_stays_a_string(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``type = "string"`` is ``--set-string``: "false" is a string, which Helm's templates take as true."""
    release = _operator_release(sets='  set {\n    name = "driver.enabled"\n    value = "false"\n    type = "string"\n  }\n')
    assert len(_findings(tmp_path, monkeypatch, {"main.tf": TF_POOL + release}, "GS035")) == 1


@pytest.mark.parametrize("chart", ["gpu-operator", "./gpu-operator"])
def test_a_command_installing_a_chart_folder_of_the_set_takes_its_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chart: str
) -> None:
    """Helm reads a chart given without ``repo/`` as a path: the folder's Chart.yaml says which
    version the values are for (v24.9.2 still reads ``operator.defaultRuntime``)."""
    command = f"helm install op {chart} -n gpu-operator --set operator.defaultRuntime=docker\n"
    folder = {"install/gpu-operator/Chart.yaml": "apiVersion: v2\nname: gpu-operator\nversion: v24.9.2\n"}
    assert _findings(tmp_path, monkeypatch, {"install/README.md": command, **folder}, "GS031") == []


def test_a_command_naming_a_folder_the_set_does_not_hold_is_checked_against_the_newest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    command = "helm install op gpu-operator -n gpu-operator --set operator.defaultRuntime=docker\n"
    (finding,) = _findings(tmp_path, monkeypatch, {"install/README.md": command}, "GS031")
    assert "operator.defaultRuntime" in finding.message
