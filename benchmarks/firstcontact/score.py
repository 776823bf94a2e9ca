#!/usr/bin/env python3
"""Score the first-contact benchmark: linter precision and recall per batch.

Usage:
    python3 score.py [--check] [--root DIR] [BATCH ...]

For every ``batch-N`` folder under ROOT (default: the folder holding this
script), or only the named ones, it reads:

    labels.tsv        id, repo, path, line, class, description, source
                      (one row per labelled pitfall)
    findings.tsv      id, repo, path, line, rule, level, summary
                      (every finding of the linter's run on the batch)
    caught.tsv        label, findings, note
                      (comma-separated finding ids that report the label;
                      empty when no finding does)
    verdicts-a.tsv    finding, verdict (right|wrong), reason  -- reader A
    verdicts-b.tsv    finding, verdict (right|wrong), reason  -- reader B
    adjudicated.tsv   finding, verdict, reason  (optional: the final word
                      where readers A and B disagree; ignored elsewhere)
    covered.tsv       label, covered (yes|no), rule  (optional: whether some
                      rule covers the label's class)
    later/findings.tsv  (optional) the findings of a later commit's run on the
                      same files, after the fixes this batch drove: each keeps
                      the final verdict of the first-contact finding at the same
                      repo, path, line and rule; one that is new needs a verdict
                      in later/verdicts.tsv (finding, verdict, reason), else it
                      counts as not right. A label stays caught when a finding
                      that caught it remains; later/caught.tsv (optional, as
                      caught.tsv, over the later run's finding ids) maps the
                      later run's findings to the labels anew, new catches
                      included. Printed as a table of its own: the
                      first-contact table is never rescored.

and prints a Markdown table per batch:

* strict precision per level -- error, warning, error+warning combined,
  and info (plus any other level the findings use): right/total, where a
  finding counts as right only when both readers say right, or, where they
  disagree, the adjudication says right. A finding with a missing verdict,
  or a disagreement not yet adjudicated, counts as not right (the table says
  how many there are). When verdicts-a.tsv or verdicts-b.tsv is absent, the
  precision rows say "not judged yet";
* recall over all labels: labels caught (non-empty findings column in
  caught.tsv) / labels;
* recall over covered labels: the same, over labels that covered.tsv marks
  covered=yes ("no covered.tsv" when the file is absent).

--check exits 1 when any finding of any scored batch lacks a verdict
(right or wrong) from either reader, and lists them on standard error. It
also reports (without failing) disagreements that adjudicated.tsv does not
settle. Malformed input (unknown ids, missing columns) exits 2.

Standard library only (Python 3.11).
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
from pathlib import Path

LEVEL_ORDER = ["error", "warning", "info"]
VERDICTS = {"right", "wrong"}


class InputError(Exception):
    pass


def read_tsv(path: Path, required: list[str]) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
        missing = [c for c in required if c not in (reader.fieldnames or [])]
        if missing:
            raise InputError(f"{path}: missing column(s) {', '.join(missing)}")
        rows = []
        for row in reader:
            if not any((v or "").strip() for v in row.values()):
                continue  # blank line
            rows.append({k: (v or "").strip() for k, v in row.items() if k is not None})
        return rows


def read_verdicts(path: Path, finding_ids: set[str]) -> tuple[dict[str, str], list[str]] | None:
    """Finding id -> verdict (lower case); None when the file is absent."""
    if not path.exists():
        return None
    verdicts: dict[str, str] = {}
    problems: list[str] = []
    for row in read_tsv(path, ["finding", "verdict"]):
        fid, verdict = row["finding"], row["verdict"].lower()
        if fid not in finding_ids:
            raise InputError(f"{path}: unknown finding id {fid!r}")
        if fid in verdicts:
            raise InputError(f"{path}: finding {fid} judged twice")
        if verdict not in VERDICTS:
            problems.append(f"{path.name}: {fid} has verdict {row['verdict']!r} (not right|wrong)")
            continue
        verdicts[fid] = verdict
    return verdicts, problems


def frac(num: int, den: int) -> str:
    if den == 0:
        return "0/0 (n/a)"
    return f"{num}/{den} = {100.0 * num / den:.1f}%"


def read_caught(path: Path, label_ids: list[str], finding_ids: set[str]) -> dict[str, list[str]]:
    """label -> the finding ids that report it (a ``caught.tsv``)."""
    caught: dict[str, list[str]] = {}
    for row in read_tsv(path, ["label", "findings"]):
        if row["label"] not in label_ids:
            raise InputError(f"{path}: unknown label {row['label']!r}")
        ids = [x.strip() for x in re.split(r"[,\s]+", row["findings"]) if x.strip()]
        for fid in ids:
            if fid not in finding_ids:
                raise InputError(f"{path}: label {row['label']} names unknown finding {fid!r}")
        caught[row["label"]] = ids
    return caught


def score_batch(batch: Path) -> tuple[str, list[str], list[str]]:
    """Return (markdown, check failures, check notes) for one batch folder."""
    labels = read_tsv(batch / "labels.tsv", ["id", "class"])
    findings = read_tsv(batch / "findings.tsv", ["id", "level"])

    label_ids = [r["id"] for r in labels]
    finding_ids = {r["id"] for r in findings}
    if len(finding_ids) != len(findings):
        raise InputError(f"{batch}/findings.tsv: duplicate finding ids")
    if len(set(label_ids)) != len(label_ids):
        raise InputError(f"{batch}/labels.tsv: duplicate label ids")

    caught = read_caught(batch / "caught.tsv", label_ids, finding_ids)
    not_in_caught = [l for l in label_ids if l not in caught]

    # --- precision -------------------------------------------------------
    failures: list[str] = []
    notes: list[str] = []
    va = read_verdicts(batch / "verdicts-a.tsv", finding_ids)
    vb = read_verdicts(batch / "verdicts-b.tsv", finding_ids)
    judged = va is not None and vb is not None
    adjudicated: dict[str, str] = {}
    adj_path = batch / "adjudicated.tsv"
    if adj_path.exists():
        adj = read_verdicts(adj_path, finding_ids)
        assert adj is not None
        adjudicated, adj_problems = adj
        failures.extend(f"{batch.name}: {p}" for p in adj_problems)

    a = va[0] if va else {}
    b = vb[0] if vb else {}
    for name, v in (("verdicts-a.tsv", va), ("verdicts-b.tsv", vb)):
        if v is None:
            failures.append(f"{batch.name}: {name} absent: all {len(findings)} findings lack its verdict")
        else:
            failures.extend(f"{batch.name}: {p}" for p in v[1])

    final: dict[str, str | None] = {}
    unjudged = 0
    pending = 0
    for f in findings:
        fid = f["id"]
        va_, vb_ = a.get(fid), b.get(fid)
        for who, present, v in (("reader A", va is not None, va_), ("reader B", vb is not None, vb_)):
            if present and v is None:
                failures.append(f"{batch.name}: {fid} has no verdict from {who}")
        if va_ is None or vb_ is None:
            final[fid] = None
            unjudged += 1
        elif va_ == vb_:
            final[fid] = va_
            if fid in adjudicated and adjudicated[fid] != va_:
                notes.append(f"{batch.name}: {fid}: adjudicated.tsv overrides nothing (readers agree on {va_})")
        elif fid in adjudicated:
            final[fid] = adjudicated[fid]
        else:
            final[fid] = None
            pending += 1
            notes.append(f"{batch.name}: {fid}: readers disagree and adjudicated.tsv does not settle it")

    levels_present = sorted({f["level"] for f in findings},
                            key=lambda l: (LEVEL_ORDER.index(l) if l in LEVEL_ORDER else 99, l))
    groups: list[tuple[str, set[str]]] = [
        ("error", {"error"}),
        ("warning", {"warning"}),
        ("error+warning", {"error", "warning"}),
        ("info", {"info"}),
    ]
    groups += [(l, {l}) for l in levels_present if l not in LEVEL_ORDER]

    lines = [f"## {batch.name}", "", "| metric | value |", "| --- | --- |"]
    counts = ", ".join(f"{l} {sum(f['level'] == l for f in findings)}" for l in levels_present) or "none"
    lines.append(f"| findings | {len(findings)} ({counts}) |")
    for title, lv in groups:
        members = [f["id"] for f in findings if f["level"] in lv]
        if not judged:
            value = "not judged yet"
        else:
            right = sum(final[fid] == "right" for fid in members)
            value = frac(right, len(members))
            open_ = sum(final[fid] is None for fid in members)
            if open_:
                value += f" ({open_} unjudged or unadjudicated, counted not right)"
        lines.append(f"| strict precision, {title} | {value} |")

    n_caught = sum(bool(caught.get(l)) for l in label_ids)
    value = frac(n_caught, len(label_ids))
    if not_in_caught:
        value += f" ({len(not_in_caught)} labels missing from caught.tsv, counted not caught)"
    lines.append(f"| recall, all labels | {value} |")

    cov_path = batch / "covered.tsv"
    if cov_path.exists():
        cov = {}
        for row in read_tsv(cov_path, ["label", "covered"]):
            if row["label"] not in label_ids:
                raise InputError(f"{cov_path}: unknown label {row['label']!r}")
            c = row["covered"].lower()
            if c not in {"yes", "no"}:
                raise InputError(f"{cov_path}: label {row['label']}: covered must be yes|no, not {row['covered']!r}")
            cov[row["label"]] = c == "yes"
        covered = [l for l in label_ids if cov.get(l)]
        value = frac(sum(bool(caught.get(l)) for l in covered), len(covered))
        missing = [l for l in label_ids if l not in cov]
        if missing:
            value += f" ({len(missing)} labels missing from covered.tsv, left out)"
        lines.append(f"| recall, labels whose class a rule covers | {value} |")
    else:
        lines.append("| recall, labels whose class a rule covers | no covered.tsv |")

    if judged:
        lines.append(f"| findings without both verdicts | {unjudged} |")
        lines.append(f"| disagreements not adjudicated | {pending} |")
    lines.append("")
    if (batch / "later" / "findings.tsv").is_file():
        lines += later_table(batch, findings, final, caught, label_ids, groups)
    return "\n".join(lines), failures, notes


def later_table(batch: Path, findings: list[dict[str, str]], final: dict[str, str | None],
                caught: dict[str, list[str]], label_ids: list[str], groups: list[tuple[str, set[str]]]) -> list[str]:
    """The scores of a later run on the batch (``later/findings.tsv``), its findings judged by
    the first-contact verdict at the same place, or by ``later/verdicts.tsv``."""
    def place(row: dict[str, str]) -> tuple[str, str, str, str]:
        return row["repo"], row["path"], row["line"], row["rule"]

    first = {place(f): f["id"] for f in findings}
    later = read_tsv(batch / "later" / "findings.tsv", ["id", "repo", "path", "line", "rule", "level"])
    judged_later = read_verdicts(batch / "later" / "verdicts.tsv", {f["id"] for f in later})
    own = judged_later[0] if judged_later else {}
    verdict = {f["id"]: final.get(first[place(f)]) if place(f) in first else own.get(f["id"]) for f in later}
    kept = {first[place(f)] for f in later if place(f) in first}
    lines = [f"### {batch.name}, later run ({len(later)} findings)", "", "| metric | value |", "| --- | --- |"]
    for title, lv in groups:
        members = [f["id"] for f in later if f["level"] in lv]
        value = frac(sum(verdict[m] == "right" for m in members), len(members))
        open_ = sum(verdict[m] is None for m in members)
        lines.append(f"| strict precision, {title} | {value}{f' ({open_} not judged, counted not right)' if open_ else ''} |")
    still = sum(any(fid in kept for fid in caught.get(label, ())) for label in label_ids)
    lines.append(f"| recall, all labels (caught by a finding that remains) | {frac(still, len(label_ids))} |")
    if (batch / "later" / "caught.tsv").is_file():
        later_ids = {f["id"] for f in later}
        mapped = read_caught(batch / "later" / "caught.tsv", label_ids, later_ids)
        now = sum(bool(mapped.get(label)) for label in label_ids)
        lines.append(f"| recall, all labels (later run's own mapping, `later/caught.tsv`) | {frac(now, len(label_ids))} |")
    return [*lines, ""]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("batches", nargs="*", help="batch folders or names (default: every batch-N under ROOT)")
    ap.add_argument("--root", type=Path, default=Path(__file__).resolve().parent,
                    help="folder holding the batch-N folders (default: this script's folder)")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 when a finding lacks a verdict from either reader")
    args = ap.parse_args(argv)

    if args.batches:
        batches = [Path(b) if Path(b).is_dir() else args.root / b for b in args.batches]
    else:
        batches = [p for p in args.root.iterdir() if p.is_dir() and re.fullmatch(r"batch-\d+", p.name)]
    batches.sort(key=lambda p: int(m.group(1)) if (m := re.search(r"(\d+)$", p.name)) else 0)
    if not batches:
        print(f"no batch-N folders under {args.root}", file=sys.stderr)
        return 2

    all_failures: list[str] = []
    all_notes: list[str] = []
    print("# First-contact benchmark scores\n")
    for batch in batches:
        if not (batch / "findings.tsv").is_file():
            print(f"## {batch.name}\n\nlabelled, not linted yet\n")
            continue
        try:
            md, failures, notes = score_batch(batch)
        except (InputError, FileNotFoundError) as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        print(md)
        all_failures += failures
        all_notes += notes

    if args.check:
        for n in all_notes:
            print(f"note: {n}", file=sys.stderr)
        for f in all_failures:
            print(f"check: {f}", file=sys.stderr)
        if all_failures:
            print(f"check failed: {len(all_failures)} problem(s)", file=sys.stderr)
            return 1
        print("check passed: every finding has a verdict from both readers", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
