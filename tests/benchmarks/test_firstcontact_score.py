"""The first-contact score: strict precision per level, recall, and a later run's own table."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCORE = Path(__file__).resolve().parents[2] / "benchmarks" / "firstcontact" / "score.py"
FINDING_COLUMNS = "id\trepo\tpath\tline\trule\tlevel\tsummary\n"


def _write(folder: Path, name: str, rows: list[str], header: str) -> None:
    (folder / name).parent.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(header + "".join(row + "\n" for row in rows))


def _batch(root: Path) -> Path:
    batch = root / "batch-9"
    _write(batch, "labels.tsv", ["b-1\tr/x\ta.yaml\t3\tc\td\ts", "b-2\tr/x\tb.yaml\t1\tc\td\ts"],
           "id\trepo\tpath\tline\tclass\tdescription\tsource\n")
    _write(batch, "findings.tsv", ["f-1\tr/x\ta.yaml\t3\tGS001\terror\tm", "f-2\tr/x\tb.yaml\t9\tGS002\twarning\tm"],
           FINDING_COLUMNS)
    _write(batch, "verdicts-a.tsv", ["f-1\tright\tr", "f-2\twrong\tr"], "finding\tverdict\treason\n")
    _write(batch, "verdicts-b.tsv", ["f-1\tright\tr", "f-2\tright\tr"], "finding\tverdict\treason\n")
    _write(batch, "adjudicated.tsv", ["f-2\twrong\tr"], "finding\tverdict\treason\n")
    _write(batch, "caught.tsv", ["b-1\tf-1\tn", "b-2\t\tn"], "label\tfindings\tnote\n")
    return batch


def _score(root: Path) -> str:
    done = subprocess.run([sys.executable, str(SCORE), "--root", str(root), "--check"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_first_contact_precision_and_recall(tmp_path: Path) -> None:
    _batch(tmp_path)
    out = _score(tmp_path)
    assert "| strict precision, error+warning | 1/2 = 50.0% |" in out
    assert "| recall, all labels | 1/2 = 50.0% |" in out
    assert "later run" not in out


def test_a_later_run_keeps_verdicts_by_place_and_counts_new_findings_unjudged(tmp_path: Path) -> None:
    batch = _batch(tmp_path)
    # f-2 is gone; f-1 stays (its verdict kept); a new warning has no verdict yet.
    _write(batch, "later/findings.tsv", ["l-1\tr/x\ta.yaml\t3\tGS001\terror\tm", "l-2\tr/x\tc.yaml\t2\tGS031\twarning\tm"],
           FINDING_COLUMNS)
    out = _score(tmp_path)
    first, later = out.split("later run (")
    assert "| strict precision, error+warning | 1/2 = 50.0% |" in first  # never rescored
    assert "| strict precision, error | 1/1 = 100.0% |" in later
    assert "| strict precision, warning | 0/1 = 0.0% (1 not judged, counted not right) |" in later
    assert "| recall, all labels (caught by a finding that remains) | 1/2 = 50.0% |" in later
    assert "later run's own mapping" not in later


def test_a_later_runs_own_mapping_counts_new_catches(tmp_path: Path) -> None:
    batch = _batch(tmp_path)
    _write(batch, "later/findings.tsv", ["l-1\tr/x\ta.yaml\t3\tGS001\terror\tm", "l-2\tr/x\tb.yaml\t1\tGS065\terror\tm"],
           FINDING_COLUMNS)
    _write(batch, "later/verdicts.tsv", ["l-2\tright\tr"], "finding\tverdict\treason\n")
    _write(batch, "later/caught.tsv", ["b-1\tl-1\tn", "b-2\tl-2\tn"], "label\tfindings\tnote\n")
    later = _score(tmp_path).split("later run (", 1)[1]
    assert "| strict precision, error | 2/2 = 100.0% |" in later
    assert "| recall, all labels (caught by a finding that remains) | 1/2 = 50.0% |" in later
    assert "| recall, all labels (later run's own mapping, `later/caught.tsv`) | 2/2 = 100.0% |" in later


def test_the_readme_table_is_every_batchs_first_contact_score() -> None:
    """The README's first-contact table holds each recorded batch's first-run scores, as
    score.py computes them from the batch's files."""
    import re

    root = SCORE.parent
    readme = (root.parents[1] / "README.md").read_text()
    found = re.findall(r"^\| (\d+) \| \d+ \| (\d+/\d+) = \d+ % \| (\d+/\d+) = \d+ % \|$", readme, re.M)
    rows = {number: (precision, recall) for number, precision, recall in found}
    batches = sorted(int(p.name.split("-")[1]) for p in root.glob("batch-*") if p.is_dir())
    assert sorted(int(b) for b in rows) == batches
    out = subprocess.run([sys.executable, str(SCORE)], capture_output=True, text=True, check=True).stdout
    for number in batches:
        first = out.split(f"## batch-{number}\n", 1)[1].split("###", 1)[0].split("## batch-", 1)[0]
        precision = re.search(r"strict precision, error\+warning \| (\d+/\d+)", first)
        recall = re.search(r"recall, all labels \| (\d+/\d+)", first)
        assert precision and recall
        assert rows[str(number)] == (precision.group(1), recall.group(1)), number
