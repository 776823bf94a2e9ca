"""The rule catalogue: code (``gpustack.lint.rules.RULES``) and data (``policies/``) describe
the same rules, every policy is well formed, every example behaves as declared through the
real engine (the site's rule pages are checked in tests/docs)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gpustack.lint.catalogue import Example, load_catalogue, policy_problems
from gpustack.lint.engine import lint
from gpustack.lint.input.discover import read_inputs
from gpustack.lint.input.load import load_inputs, load_text
from gpustack.lint.policy.config import Config
from gpustack.lint.policy.selection import Choice, Selection
from gpustack.lint.report.model import Report
from gpustack.lint.rules import RULES
from gpustack.shipped import data_dir

CATALOGUE = load_catalogue()
POLICIES = sorted(data_dir("policies").glob("GS*.yaml"))


def test_code_and_catalogue_describe_the_same_rules() -> None:
    assert sorted(RULES) == sorted(CATALOGUE)
    for rule_id, rule in RULES.items():
        info = CATALOGUE[rule_id]
        assert rule.id == rule_id
        assert rule.scope == info.scope, rule_id
        module = rule.check.__module__.rsplit(".", 1)[-1]
        assert module == f"gs{rule_id[2:]}_{info.name.replace('-', '_')}", rule_id


@pytest.mark.parametrize("path", POLICIES, ids=lambda path: path.stem)
def test_policy_is_well_formed(path: Path) -> None:
    assert policy_problems(path) == []
    info = CATALOGUE[path.stem]
    assert info.remediation.endswith(".")
    assert info.references, "the rationale's sources: upstream URLs a reader can open"


def examples() -> list[object]:
    return [
        pytest.param(rule_id, fires, index, example, id=f"{rule_id}-{'fires' if fires else 'clean'}-{index}")
        for rule_id, info in CATALOGUE.items()
        for fires, group in ((True, info.fires), (False, info.clean))
        for index, example in enumerate(group)
    ]


def _lint_example(rule_id: str, fires: bool, index: int, example: Example, folder: Path) -> Report:
    """The example linted as a user would lint it: one manifest, or its files as a folder (so
    scripts and notes are read by name, as ``gpustack lint FOLDER`` reads them)."""
    name = f"policies/{rule_id}.yaml#{'fires' if fires else 'clean'}[{index}]"
    spec = data_dir("policies").parent / example.spec if example.spec else None
    selection = Selection((Choice(on=frozenset({rule_id})),))  # an opt-in rule runs where selected
    config = Config(distribution=example.distribution, spec=spec, selection=selection)
    if not example.files:
        return lint(load_text(name, example.manifest), config)
    for path, text in example.files.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text, encoding="utf-8")
    return lint(load_inputs(read_inputs([str(folder)])), config)


def test_opt_in_rules_stay_off_in_a_default_run() -> None:
    """An opt-in rule's own fires example reports nothing until the rule is selected."""
    opt_in = [info for info in CATALOGUE.values() if info.opt_in]
    assert opt_in, "GS023 (hardening advice) is opt-in"
    for info in opt_in:
        report = lint(load_text(f"policies/{info.id}.yaml#fires[0]", info.fires[0].manifest), Config())
        assert info.id not in {finding.rule for finding in report.findings}


@pytest.mark.parametrize(("rule_id", "fires", "index", "example"), examples())
def test_example_behaves_as_declared(rule_id: str, fires: bool, index: int, example: Example, tmp_path: Path) -> None:
    report = _lint_example(rule_id, fires, index, example, tmp_path)
    assert report.errors == ()
    rules = [finding.rule for finding in report.findings]
    assert (rule_id in rules) is fires, f"{example.description}: {rules}"


def test_lint_does_not_import_the_renderer(tmp_path: Path) -> None:
    manifest = tmp_path / "pod.yaml"
    manifest.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: x}]}\n")
    probe = (
        "import sys\n"
        "from gpustack.cli import main\n"
        "try:\n"
        f"    main(['lint', {str(manifest)!r}])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted(m for m in ('cdk8s', 'jsii', 'constructs') if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.splitlines()[-1] == "[]"
