"""Values files whose chart is installed outside the manifests: helm commands in scripts and
docs, Terraform's helm_release. The file is then checked as that chart's values."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpustack.lint.engine import lint
from gpustack.lint.policy.config import Config
from gpustack.lint.input import helmcommand
from gpustack.lint.releases.outside import values_charts

from lint_support import load_paths, write_tree

OPERATOR_VALUES = "driver:\n  enabled: true\n  useOpenKmods: true\n"
STACK_VALUES = "prometheusRule:\n  enabled: true\n"


def _lint(root: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.chdir(root)
    return lint(load_paths(["."]), Config(tree=root))


def test_a_script_ties_its_values_file_to_the_chart_and_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = write_tree(tmp_path, {
        "scripts/deploy.sh": "set -e\nhelm upgrade --install gpu-operator nvidia/gpu-operator \\\n"
                             "  -n gpu-operator --create-namespace --version v24.9.2 \\\n"
                             "  -f kubernetes/gpu-operator/values.yaml --wait\n",
        "kubernetes/gpu-operator/values.yaml": OPERATOR_VALUES,
    })
    report = _lint(root, monkeypatch)
    (finding,) = [f for f in report.findings if f.rule == "GS031"]
    assert (finding.file, finding.line) == ("kubernetes/gpu-operator/values.yaml", 3)
    assert "gpu-operator v24.9.2" in finding.message
    assert any("as scripts/deploy.sh:2 installs it" in note.message for note in report.notes)


def test_terraform_helm_release_values_files_resolve_against_the_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = write_tree(tmp_path, {
        "infra/monitoring/main.tf": 'resource "helm_release" "kps" {\n  chart   = "kube-prometheus-stack"\n'
                                    '  version = "65.8.1"\n'
                                    '  values  = [file("${path.module}/values/prometheus.yaml")]\n}\n',
        "infra/monitoring/values/prometheus.yaml": STACK_VALUES,
    })
    report = _lint(root, monkeypatch)
    assert [(f.rule, f.line) for f in report.findings] == [("GS031", 1)]
    assert any("kube-prometheus-stack@65.8.1, as infra/monitoring/main.tf:1" in note.message for note in report.notes)


def test_a_readme_command_counts_and_an_unreferenced_file_stays_unchecked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = write_tree(tmp_path, {
        "README.md": "Install:\n\n```sh\nhelm install gpu-operator nvidia/gpu-operator -f gpu-operator/values.yaml\n```\n",
        "gpu-operator/values.yaml": OPERATOR_VALUES,
        "other/values.yaml": OPERATOR_VALUES,
    })
    report = _lint(root, monkeypatch)
    assert {f.file for f in report.findings if f.rule == "GS031"} == {"gpu-operator/values.yaml"}
    assert any(note.file == "other/values.yaml" and "not checked" in note.message for note in report.notes)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("helm install gpu-operator nvidia/gpu-operator -f a.yaml,b.yaml",
         ("nvidia/gpu-operator", "gpu-operator", None, ("a.yaml", "b.yaml"))),
        ("helm install nvidia/gpu-operator --generate-name --values=v.yaml --version=v25.3.4",
         ("nvidia/gpu-operator", None, "v25.3.4", ("v.yaml",))),
        ("helm template oci://ghcr.io/org/charts/hami -f hami.yaml", ("oci://ghcr.io/org/charts/hami", None, None, ("hami.yaml",))),
        ("helm install gpu-operator ./gpu-operator-v25.3.4.tgz -f values.yaml",
         ("./gpu-operator-v25.3.4.tgz", "gpu-operator", None, ("values.yaml",))),
        ("helm upgrade -i x ./charts/vllm -f $VALUES", ("./charts/vllm", "x", None, ())),  # only a variable: unknown
        ("helm install x nvidia/gpu-operator --set driver.enabled=false", ("nvidia/gpu-operator", "x", None, ())),
        ("helm repo add nvidia https://helm.ngc.nvidia.com/nvidia", None),
        ("helm install 'unclosed -f v.yaml", None),
        ("helm install $NAME $CHART -f v.yaml", None),  # the chart is the shell's
        ("helm install --kube-token abc x nvidia/gpu-operator", ("nvidia/gpu-operator", "x", None, ())),
        ("helm install x nvidia/gpu-operator -ngpu -fvalues.yaml", ("nvidia/gpu-operator", "x", None, ("values.yaml",))),
    ],
)
def test_helm_command_lines(line: str, expected: object) -> None:
    command = helmcommand.parse(line)
    found = command and (command.chart, command.release, command.version, command.values_files)
    assert found == expected


@pytest.mark.parametrize(
    ("flags", "values", "unknown"),
    [
        ("--set driver.enabled=false,toolkit.enabled=true", {"driver": {"enabled": False}, "toolkit": {"enabled": True}}, False),
        ("--set devicePlugin.config.name=ts --set-string mig.strategy=1", {"devicePlugin": {"config": {"name": "ts"}},
                                                                          "mig": {"strategy": "1"}}, False),
        ("--set replicas=3,tolerations[0].key=nvidia.com/gpu", {"replicas": 3, "tolerations": [{"key": "nvidia.com/gpu"}]}, False),
        (r"--set 'nodeSelector.kubernetes\.io/os=linux'", {"nodeSelector": {"kubernetes.io/os": "linux"}}, False),
        ("--set args={--a,--b}", {"args": ["--a", "--b"]}, False),
        ("--set-json 'resources={\"limits\":{\"nvidia.com/gpu\":1}}'", {"resources": {"limits": {"nvidia.com/gpu": 1}}}, False),
        ("--set driver.enabled=$DRIVER", {}, True),  # the shell decides
        ("--set-file config=cfg.yaml", {}, True),
        ("--set driver.enabled=False,mig.strategy=NULL", {"driver": {"enabled": False}, "mig": {"strategy": None}}, False),
        ("--set a[0][0]=1 --set a[0].b=2", {"a": [{"b": 2}]}, False),  # a list replaced by a map, as Helm does
        ("--set a[99999999]=1", {}, True),  # above Helm's index limit
        ("--set big=99999999999999999999", {"big": "99999999999999999999"}, False),  # not an int64: a string
        ("--set-string ids={1,2}", {"ids": ["1", "2"]}, False),
        ("--reuse-values --set toolkit.version=v1.17.0", {"toolkit": {"version": "v1.17.0"}}, True),
        ("--set toolkit.enabled=false; echo done", {"toolkit": {"enabled": False}}, False),  # a shell operator ends it
        ("--set driver.version=`cat v` --set driver.enabled=false", {"driver": {"enabled": False}}, True),
    ],
)
def test_set_values_as_helm_builds_them(flags: str, values: dict, unknown: bool) -> None:
    command = helmcommand.parse(f"helm upgrade --install op nvidia/gpu-operator -n gpu-operator {flags}")
    assert command is not None and command.namespace == "gpu-operator"
    assert helmcommand.nested(command.sets) == values
    assert (command.unknown is not None) == unknown


def test_terraform_it_cannot_read_and_expressions_are_passed_over(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {
        "broken.tf": 'resource "helm_release" "x" {\n  chart = \n',
        "vars.tf": 'resource "helm_release" "y" {\n  chart = var.chart\n  values = [file("v.yaml")]\n}\n',
        "v.yaml": OPERATOR_VALUES,
    })
    assert values_charts(str(root), [str(root / "v.yaml")]) == {}
