"""``benchmarks/judge.py`` on a tiny synthetic corpus laid out like the shared one: one pod in
the vendor corpus, the same pod in one GitOps repository recorded as K3s in SOURCES.tsv."""

from __future__ import annotations

from pathlib import Path

import pytest

import judge

# A GPU pod that selects nodes by the VGA-class label (GS001, warning); on K3s it also lacks
# runtimeClassName (GS004: an error, since the repository's K3s config keeps runc the default).
POD = """\
apiVersion: v1
kind: Pod
metadata: {name: train, namespace: ml}
spec:
  nodeSelector: {feature.node.kubernetes.io/pci-0300_10de.present: "true"}
  containers:
    - name: main
      image: trainer:1.0
      resources: {limits: {nvidia.com/gpu: 1}}
"""
HEADER = "file\trule\tobject\tverdict\treason\tsecond\tsecond_reason\n"
VENDOR_POD = "corpus/pod.yaml"
GITOPS_POD = "corpus-gitops/corpus/alice+lab/apps/pod.yaml"
GS004_TRUE = f"{GITOPS_POD}\tGS004\tPod/ml/train\ttrue\tno runtime class on K3s\ttrue\tK3s wants the RuntimeClass"
GS001_TRUE = (f"{VENDOR_POD}\tGS001\tPod/ml/train\ttrue\ta datacenter card\ttrue\tno VGA class",)


@pytest.fixture
def shared(tmp_path: Path) -> Path:
    root = tmp_path / "shared"
    for path in (VENDOR_POD, GITOPS_POD):
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(POD, encoding="utf-8")
    (root / GITOPS_POD).with_name("k3s-config.yaml").write_text("default-runtime: runc\n", encoding="utf-8")
    (root / "corpus-gitops" / "SOURCES.tsv").write_text(
        "file\trepo\tpath\tcommit\tlicense\tdistribution\tnote\n"
        "alice+lab/apps/pod.yaml\talice/lab\tapps/pod.yaml\t0000000\tMIT\tk3s\t\n",
        encoding="utf-8",
    )
    return root


def verdicts(tmp_path: Path, *rows: str) -> Path:
    path = tmp_path / "verdicts.tsv"
    path.write_text(HEADER + "".join(row + "\n" for row in rows), encoding="utf-8")
    return path


def judged(shared: Path, path: Path, capsys: pytest.CaptureFixture[str], *options: str) -> tuple[int, str, str]:
    """``judge.py`` on the synthetic corpus: (exit status, stdout, stderr)."""
    code = judge.main(["--shared", str(shared), "--verdicts", str(path), *options])
    out, err = capsys.readouterr()
    return code, out, err


def test_findings_are_named_by_corpus_file_rule_and_object(shared: Path) -> None:
    seen = judge.seen_findings(shared)
    assert sorted((item.file, item.rule, item.object, item.level) for item in seen) == sorted([
        (VENDOR_POD, "GS001", "Pod/ml/train", "warning"),
        (GITOPS_POD, "GS001", "Pod/ml/train", "warning"),
        (GITOPS_POD, "GS004", "Pod/ml/train", "error"),
    ])


def test_precision_is_strict_and_the_gate_fails_below_the_bar(
    shared: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    unsure = f"{GITOPS_POD}\tGS001\tPod/ml/train\tunsure\tcannot tell the card\tfalse\ta consumer card"
    gone = "corpus/gone.yaml\tGS002\tPod//old\tfalse\tthe file is no longer there\t\t"
    path = verdicts(tmp_path, GS004_TRUE, unsure, *GS001_TRUE, gone)
    code, out, err = judged(shared, path, capsys)
    assert code == 0
    assert "| **error** | 1 | 1 | 0 | 0 | 0 | 100.0% |" in out
    assert "| **warning** | 2 | 1 | 0 | 1 | 0 | 50.0% |" in out  # unsure counts as false
    assert "| GS001 | 2 | 1 | 0 | 1 | 0 | 50.0% |" in out
    assert "Verdicts no finding matches any more (1):\ncorpus/gone.yaml\tGS002\tPod//old\tfalse" in out
    assert "without a verdict" not in out
    assert "Second reader: 3 of 3 verdicts read twice, independently; they differed on 1 " in out
    assert err == "gate: warning: strict precision 50.0% is below 95%\n"
    assert judge.main(["--shared", str(shared), "--verdicts", str(path), "--gate"]) == 1


def test_findings_without_a_verdict_are_listed_and_fail_the_gate(
    shared: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    both_gs001 = (*GS001_TRUE, GS001_TRUE[0].replace(VENDOR_POD, GITOPS_POD))
    code, out, err = judged(shared, verdicts(tmp_path, *both_gs001), capsys, "--gate")
    assert code == 1
    assert (
        "Findings without a verdict (1; columns file rule object verdict reason second second_reason):\n"
        f"{GITOPS_POD}\tGS004\tPod/ml/train\t\t\t\t\n"
    ) in out
    assert err == "gate: error: 1 finding(s) without a verdict\n"
    assert judged(shared, verdicts(tmp_path, *both_gs001, GS004_TRUE), capsys, "--gate")[0] == 0


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("a.yaml\tGS001\tPod//p\tmaybe\twhy\t\t", "verdict 'maybe'; write one of true, false, unsure"),
        ("a.yaml\tGS001\tPod//p\ttrue", "4 columns; a row has 7, tab-separated"),
        ("a.yaml\tGS001\tPod//p\ttrue\t \t\t", "give the reason for the verdict in one line"),
        ("a.yaml\tGS001\tPod//p\ttrue\twhy\tyes\tbecause", "verdict 'yes'; write one of true, false, unsure"),
        ("a.yaml\tGS001\tPod//p\ttrue\twhy\tfalse\t", "give the reason for the verdict in one line"),
    ],
)
def test_a_malformed_verdict_is_reported_with_its_line(
    shared: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], row: str, message: str
) -> None:
    path = verdicts(tmp_path, row)
    assert judge.main(["--shared", str(shared), "--verdicts", str(path), "--gate"]) == 2
    assert capsys.readouterr().err == f"judge: {path}:2: {message}\n"


def test_a_verdict_without_a_second_readers_fails_the_gate(
    shared: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every finding is read twice: a row whose second reader's columns are blank is counted
    and fails the gate, whatever the precision."""
    read_once = GS004_TRUE.rsplit("\t", 2)[0] + "\t\t"
    both_gs001 = (*GS001_TRUE, GS001_TRUE[0].replace(VENDOR_POD, GITOPS_POD))
    code, out, err = judged(shared, verdicts(tmp_path, *both_gs001, read_once), capsys, "--gate")
    assert code == 1
    assert "Second reader: 2 of 3 verdicts read twice" in out
    assert err == "gate: 1 verdict(s) without a second reader's\n"
