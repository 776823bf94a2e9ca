"""Baselines end to end: record today's findings, report only new ones, survive reformatting.

The test rules stand in for the shipped ones: GS900 fires on each container on ``:latest``
(path ``spec.containers[n].image``), GS901 on each unnamed ConfigMap (path ``metadata``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lint_support import gpustack, write

from gpustack.lint.policy.baseline import VERSION

pytestmark = pytest.mark.usefixtures("test_rules", "in_tmp")

BASELINE = ".gpustack-baseline.json"
PODS = """\
apiVersion: v1
kind: Pod
metadata: {name: a, namespace: ml}
spec:
  containers:
    - {name: c, image: 'x:latest'}
---
apiVersion: v1
kind: Pod
metadata: {name: b, namespace: ml}
spec:
  containers:
    - {name: c, image: 'x:1'}
    - {name: d, image: 'y:latest'}
"""
# The same objects: the documents swapped and moved into a List in another file, keys
# reordered, re-indented, lines inserted above, flow and block styles exchanged.
REFORMATTED = """\
# moved here from pods.yaml

kind: List
apiVersion: v1
items:
-   spec:
        containers:
        -   image: x:1
            name: c
        -   name: d
            image: "y:latest"
    kind: Pod
    metadata:
        namespace: ml
        name: b
-   {kind: Pod, apiVersion: v1, spec: {containers: [{image: "x:latest", name: c}]}, metadata: {name: a, namespace: ml}}
"""
NEW_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: new, namespace: ml}
spec:
  containers: [{name: c, image: 'z:latest'}]
"""


def lint_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict]:
    code, out, _ = gpustack(capsys, "lint", "--format", "json", *args)
    return code, json.loads(out)


def record(capsys: pytest.CaptureFixture[str], *paths: str) -> tuple[int, str, str]:
    return gpustack(capsys, "lint", *paths, "--write-baseline", BASELINE)


def test_only_a_new_problem_is_reported(capsys: pytest.CaptureFixture[str]) -> None:
    write("pods.yaml", PODS)
    code, out, err = record(capsys, "pods.yaml")
    assert code == 0  # findings accepted
    assert "2 findings" in out and f"recorded 2 finding(s) in {BASELINE}" in err
    assert gpustack(capsys, "lint", "pods.yaml", "--baseline", BASELINE) == (
        0,
        "1 file, 2 objects: no findings, 2 in the baseline\n",
        "",
    )
    write("new.yaml", NEW_POD)
    code, report = lint_json(capsys, ".", "--baseline", BASELINE)
    assert code == 1
    assert [(f["file"], f["object"]["name"]) for f in report["findings"]] == [("new.yaml", "new")]
    assert report["summary"]["baseline"] == {"file": BASELINE, "matched": 2, "stale": 0}
    assert report["summary"]["suppressed"] == 0


def test_the_file_is_versioned_sorted_and_knows_objects_not_lines(capsys: pytest.CaptureFixture[str]) -> None:
    write("pods.yaml", PODS)
    record(capsys, "pods.yaml")
    first = Path(BASELINE).read_text()
    assert json.loads(first) == {
        "version": VERSION,
        "entries": [
            {"rule": "GS900", "kind": "Pod", "namespace": "ml", "name": "a", "path": ["spec", "containers", 0, "image"], "count": 1},
            {"rule": "GS900", "kind": "Pod", "namespace": "ml", "name": "b", "path": ["spec", "containers", 1, "image"], "count": 1},
        ],
    }  # fmt: skip
    Path("pods.yaml").unlink()
    write("list.yaml", REFORMATTED)
    record(capsys, "list.yaml")
    assert Path(BASELINE).read_text() == first  # same findings, same bytes
    Path("list.yaml").unlink()
    first_document, second_document = PODS.split("---\n")
    write("b.yaml", second_document)
    write("a/a.yaml", first_document)
    record(capsys, ".")
    assert Path(BASELINE).read_text() == first


def test_a_reformatted_file_keeps_its_matches(capsys: pytest.CaptureFixture[str]) -> None:
    write("pods.yaml", PODS)
    record(capsys, "pods.yaml")
    Path("pods.yaml").unlink()
    write("moved/list.yaml", REFORMATTED)
    code, report = lint_json(capsys, ".", "--baseline", BASELINE)
    assert (code, report["findings"], report["summary"]["baseline"]["stale"]) == (0, [], 0)


def test_a_change_inside_an_object_is_a_new_finding(capsys: pytest.CaptureFixture[str]) -> None:
    write("pods.yaml", PODS)
    record(capsys, "pods.yaml")
    write("pods.yaml", PODS.replace("'x:1'", "'x:latest'"))  # b's first container too now
    code, report = lint_json(capsys, "pods.yaml", "--baseline", BASELINE)
    assert code == 1
    assert [(f["object"]["name"], f["line"]) for f in report["findings"]] == [("b", 13)]


def test_identical_findings_are_counted(capsys: pytest.CaptureFixture[str]) -> None:
    """The same object in two files: two findings of one identity need a count of two."""
    write("one/pod.yaml", NEW_POD)
    record(capsys, "one")
    write("two/pod.yaml", NEW_POD)
    code, report = lint_json(capsys, ".", "--baseline", BASELINE)
    assert code == 1
    assert [f["file"] for f in report["findings"]] == ["two/pod.yaml"]
    record(capsys, ".")
    assert json.loads(Path(BASELINE).read_text())["entries"][0]["count"] == 2
    assert lint_json(capsys, ".", "--baseline", BASELINE)[0] == 0


def test_entries_that_no_longer_occur_are_counted(capsys: pytest.CaptureFixture[str]) -> None:
    write("pods.yaml", PODS)
    record(capsys, "pods.yaml")
    write("pods.yaml", PODS.replace("'y:latest'", "'y:2'"))
    code, out, _ = gpustack(capsys, "lint", "pods.yaml", "--baseline", BASELINE)
    assert (code, out) == (
        0,
        f"note: 1 of the findings recorded in {BASELINE} no longer occur: "
        f"`gpustack lint --write-baseline {BASELINE}` shrinks it\n"
        "1 file, 2 objects: no findings, 1 in the baseline\n",
    )
    assert lint_json(capsys, "pods.yaml", "--baseline", BASELINE)[1]["summary"]["baseline"] == {
        "file": BASELINE,
        "matched": 1,
        "stale": 1,
    }


def test_config_names_the_baseline_relative_to_itself(
    capsys: pytest.CaptureFixture[str], in_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write("deploy/pods.yaml", PODS)
    record(capsys, "deploy")
    write(".gpustack.yaml", f"baseline: {BASELINE}\n")
    monkeypatch.chdir(in_tmp / "deploy")
    code, report = lint_json(capsys, ".")
    assert (code, report["findings"], report["summary"]["baseline"]["matched"]) == (0, [], 2)
    # Recording ignores the baseline in effect and rewrites it (here: in the folder run from).
    code, out, _ = gpustack(capsys, "lint", ".", "--write-baseline", "new.json")
    assert code == 0 and "2 findings" in out


def test_baseline_matches_show_with_show_suppressed(capsys: pytest.CaptureFixture[str]) -> None:
    write("pods.yaml", PODS)
    record(capsys, "pods.yaml")
    code, out, _ = gpustack(capsys, "lint", "pods.yaml", "--baseline", BASELINE, "--show-suppressed")
    assert code == 0
    assert out.count("suppressed by baseline") == 2
    code, out, _ = gpustack(capsys, "lint", "pods.yaml", "--baseline", BASELINE, "--no-suppressions")
    assert code == 1
    assert "note: suppressions are off (audit): 2 reported finding(s) would be suppressed\n" in out


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read the baseline: No such file or directory"),
        ("{", "the baseline is not valid JSON"),
        ('{"version": 99, "entries": []}', "not a gpustack baseline"),
        ('{"version": 1, "entries": [{"rule": "GS900", "path": "spec"}]}', "entries[0] is not a baseline entry"),
    ],
)
def test_a_missing_or_broken_baseline_exits_2(
    capsys: pytest.CaptureFixture[str], content: str | None, message: str
) -> None:
    write("pods.yaml", PODS)
    if content is not None:
        write(BASELINE, content)
    code, out, err = gpustack(capsys, "lint", "pods.yaml", "--baseline", BASELINE)
    assert (code, out) == (2, "")
    assert BASELINE in err and message in err


def test_write_baseline_excludes_fix(capsys: pytest.CaptureFixture[str]) -> None:
    write("pods.yaml", PODS)
    code, _, err = gpustack(capsys, "lint", "pods.yaml", "--write-baseline", BASELINE, "--fix")
    assert code == 2 and "--write-baseline" in err
    assert not Path(BASELINE).exists()
