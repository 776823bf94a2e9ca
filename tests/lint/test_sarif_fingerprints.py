"""SARIF for code scanning: fingerprints that follow a finding when lines move, help links to
each rule's page (docs/rules/GSNNN.md), security severities; and the GitHub Action that writes it."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from lint_support import gpustack, write
from ruamel.yaml import YAML

from gpustack.lint.catalogue import load_catalogue
from gpustack.lint.policy.baseline import FINGERPRINT
from gpustack.site_pages import page_url

POD = """\
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml}
spec:
  containers:
    - {name: c, image: 'x:latest'}
    - {name: d, image: 'y:latest'}
"""
MOVED = """\
# a comment and a blank line above

apiVersion: v1
metadata:
    namespace: ml
    name: p
kind: Pod
spec:
    containers:
    -   name: c
        image: x:latest
    -   {image: 'y:latest', name: d}
"""


def sarif(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    code, out, err = gpustack(capsys, "lint", "--format", "sarif", *args)
    assert code in (0, 1), err
    document: dict[str, Any] = json.loads(out)
    return document


def fingerprints(run: dict[str, Any]) -> list[tuple[int, str]]:
    """(line, fingerprint) of every result."""
    return [
        (result["locations"][0]["physicalLocation"]["region"]["startLine"], result["partialFingerprints"][FINGERPRINT])
        for result in run["results"]
    ]


@pytest.mark.usefixtures("test_rules", "in_tmp")
def test_fingerprints_survive_a_line_move(capsys: pytest.CaptureFixture[str]) -> None:
    write("pod.yaml", POD)
    before = fingerprints(sarif(capsys, "pod.yaml")["runs"][0])
    write("pod.yaml", MOVED)
    after = fingerprints(sarif(capsys, "pod.yaml")["runs"][0])
    assert [line for line, _ in before] == [6, 7] and [line for line, _ in after] == [11, 12]
    assert [print_ for _, print_ in before] == [print_ for _, print_ in after]
    assert len({print_ for _, print_ in before}) == 2  # one per container
    assert all(re.fullmatch(r"[0-9a-f]{64}", print_) for _, print_ in before)


@pytest.mark.usefixtures("test_rules", "in_tmp")
def test_rules_link_their_docs_and_security_rules_carry_a_severity(capsys: pytest.CaptureFixture[str]) -> None:
    write("pod.yaml", POD)
    rules = {rule["id"]: rule for rule in sarif(capsys, "pod.yaml")["runs"][0]["tool"]["driver"]["rules"]}
    assert "helpUri" not in rules["GS900"]  # no docs location given: no link to a guessed one
    assert "security-severity" not in rules["GS900"]["properties"]
    assert rules["GS902"]["properties"] == {"tags": ["kubernetes", "gpu", "security"], "security-severity": "2.0"}
    base = "https://example.test/org/gpustack/blob/v1.2.0"
    for given in (base, base + "/"):
        [rule, *_] = sarif(capsys, "pod.yaml", "--docs-url", given)["runs"][0]["tool"]["driver"]["rules"]
        assert rule["helpUri"] == f"{base}/docs/rules/GS900.md"
    with pytest.MonkeyPatch.context() as env:
        env.setenv("GPUSTACK_DOCS_URL", base)
        [rule, *_] = sarif(capsys, "pod.yaml")["runs"][0]["tool"]["driver"]["rules"]
        assert rule["helpUri"] == f"{base}/docs/rules/GS900.md"


def test_docs_url_help_says_what_sarif_does_without_it(capsys: pytest.CaptureFixture[str]) -> None:
    """No default helpUri (above): the help must not promise one."""
    with pytest.MonkeyPatch.context() as env:
        env.setenv("COLUMNS", "400")
        code, out, _ = gpustack(capsys, "lint", "--help")
    text = " ".join(out.split())
    assert code == 0
    assert "default: the project" not in text
    assert "none by default: SARIF rules then carry no helpUri" in text


def test_every_help_link_finds_its_page(repo: Path) -> None:
    base = "https://example.test/org/gpustack/blob/v1/"
    missing = [
        info.id for info in load_catalogue().values() if not (repo / page_url(info, base).removeprefix(base)).is_file()
    ]
    assert not missing, f"no page for {missing}: gpustack docs"


@pytest.mark.usefixtures("test_rules", "in_tmp")
def test_sarif_with_baseline_and_exemptions_is_valid(capsys: pytest.CaptureFixture[str], shared: Path) -> None:
    import jsonschema

    schema = json.loads((shared / "reference" / "schemas" / "sarif-schema-2.1.0.json").read_text())
    write("pod.yaml", POD)
    write(".gpustack.yaml", "exemptions: [{rules: [GS900], image: 'y', reason: upstream}]\n")
    gpustack(capsys, "lint", "pod.yaml", "--write-baseline", "baseline.json")
    write("pod.yaml", POD + "---\n" + POD.replace("name: p", "name: q"))
    document = sarif(capsys, "pod.yaml", "--baseline", "baseline.json", "--show-suppressed")
    jsonschema.Draft4Validator(schema).validate(document)
    results = document["runs"][0]["results"]
    # p/c in the baseline, p/d and q/d exempted (both outside the file), q/c new.
    assert sorted(
        (r["locations"][0]["logicalLocations"][0]["name"], r.get("suppressions", [{}])[0].get("kind", "")) for r in results
    ) == [("p", "external"), ("p", "external"), ("q", ""), ("q", "external")]
    assert len({r["partialFingerprints"][FINGERPRINT] for r in results}) == 4


# --- the GitHub Action -----------------------------------------------------------------------

INPUTS = {"paths", "spec", "distribution", "fail-on", "baseline", "sarif-file", "args", "python-version"}


@pytest.fixture
def action(repo: Path) -> dict[str, Any]:
    data: dict[str, Any] = YAML(typ="safe").load((repo / "action.yml").read_text())
    return data


def test_action_yml_is_a_composite_action_with_the_inputs(action: dict[str, Any]) -> None:
    assert action["runs"]["using"] == "composite"
    assert set(action["inputs"]) == INPUTS
    assert all(not spec["required"] and "description" in spec for spec in action["inputs"].values())
    assert action["outputs"]["exit-code"]["value"] == "${{ steps.sarif.outputs.exit-code }}"
    steps = action["runs"]["steps"]
    assert [step.get("uses", "").split("@")[0] for step in steps][0] == "actions/setup-python"
    install, lint, annotate = (step["run"] for step in steps[1:])
    assert 'pip install --disable-pip-version-check --quiet "${{ github.action_path }}"' in install
    assert "--format sarif" in lint and "--format github" in annotate
    # Inputs reach the scripts through the environment only (no injection through ${{ }}).
    assert "${{" not in lint + annotate


def _expand(value: str, inputs: dict[str, str], outputs: dict[str, str]) -> str:
    """The few expressions action.yml's step environments use."""

    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        if name.startswith("inputs."):
            return inputs[name[len("inputs."):]]
        if name.startswith("steps.sarif.outputs."):
            return outputs[name[len("steps.sarif.outputs."):]]
        return {"github.server_url": "https://github.example", "github.action_repository": "org/gpustack",
                "github.action_ref": "v9"}[name]  # fmt: skip

    return re.sub(r"\$\{\{\s*([\w.-]+)\s*\}\}", one, value)


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is needed to run the action's steps")
def test_action_steps_lint_into_sarif_and_annotations(action: dict[str, Any], tmp_path: Path) -> None:
    """Run the action's lint steps as the runner would, with this environment's gpustack."""
    gpustack_script = Path(sys.executable).with_name("gpustack")
    if not gpustack_script.exists():
        pytest.skip("no gpustack script beside the Python running the tests")
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "vllm.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: vllm}\nspec:\n  template:\n    spec:\n"
        "      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.11.0\n"
        "          readinessProbe: {httpGet: {path: /health, port: 8000}}\n"
        "          resources: {limits: {nvidia.com/gpu: 1}}\n  strategy: {type: Recreate}\n"
    )
    inputs = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    inputs.update({"paths": "deploy", "distribution": "k3s", "fail-on": "warning", "args": "--ignore GS023"})
    github_output = tmp_path / "github-output"
    github_output.write_text("")
    outputs: dict[str, str] = {}
    results = []
    for step in action["runs"]["steps"][2:]:
        env = {
            **os.environ,
            "PATH": f"{gpustack_script.parent}{os.pathsep}{os.environ['PATH']}",
            "RUNNER_TEMP": str(tmp_path),
            "GITHUB_OUTPUT": str(github_output),
            **{key: _expand(str(value), inputs, outputs) for key, value in step.get("env", {}).items()},
        }
        script = ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]]  # the runner's bash
        results.append(subprocess.run(script, cwd=tmp_path, env=env, capture_output=True, text=True))
        outputs.update(line.split("=", 1) for line in github_output.read_text().splitlines())
    (sarif_step, annotations) = results
    assert outputs == {"exit-code": "1"}
    assert sarif_step.returncode == 0, sarif_step.stderr  # findings: on to the annotations
    assert annotations.returncode == 1  # and then the job fails
    assert annotations.stdout.startswith(
        "::warning file=deploy/vllm.yaml,line=6,col=5,title=GS004 missing-runtime-class::"
    )
    document = json.loads((tmp_path / "gpustack.sarif").read_text())
    [result] = document["runs"][0]["results"]
    assert result["ruleId"] == "GS004"
    rules = document["runs"][0]["tool"]["driver"]["rules"]
    assert rules[0]["helpUri"] == "https://github.example/org/gpustack/blob/v9/docs/rules/GS001.md"
