"""The release gate: the linter's precision on real input, against verdicts judged by hand.

Lints the same runs as ``same_findings.py`` (the vendor corpus ``../shared/corpus`` per source
repository, each repository of ``../shared/corpus-gitops`` with the distribution its ``SOURCES.tsv``
records) and looks every error and warning finding up in ``benchmarks/verdicts.tsv``:

    file     the finding's file, relative to the shared folder (corpus/…, corpus-gitops/…)
    rule     GSNNN
    object   kind/namespace/name of the object it is reported on (empty parts stay empty)
    verdict  true (a real pitfall the user should act on), false, or unsure: the verdict
             settled between the two readers
    reason   one line: why (no content copied from the corpora)
    second   the second reader's own verdict, judged without seeing the first (blank: read once)
    second_reason  one line: the second reader's why

A verdict judges a rule on an object: every finding of that rule on that object shares it.
Prints, as Markdown, precision per level and per rule (strict: ``unsure`` counts as false),
how often the second reader differed, then the findings that have no verdict yet (ready to
paste into the file, verdict left blank) and the verdicts no finding matches any more.

    python benchmarks/judge.py                  # exit 0 whatever it finds
    python benchmarks/judge.py --gate           # exit 1 when a level is below 95 % strict
                                                # precision, or a finding has no verdict or
                                                # was read by one reader only
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from same_findings import REPOSITORY, corpus_runs, lint_json

JUDGED_LEVELS = ("error", "warning")  # info findings are hidden by default: not gated
VERDICTS = ("true", "false", "unsure")
COLUMNS = ("file", "rule", "object", "verdict", "reason", "second", "second_reason")
BAR = 0.95


class VerdictsError(Exception):
    """The verdicts file holds a row the script cannot read (the message says where)."""


@dataclass(frozen=True)
class Seen:
    """One finding, by what a verdict names."""

    file: str
    rule: str
    object: str
    level: str

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.file, self.rule, self.object)


@dataclass
class Tally:
    """Verdicts counted for one row of the table (a level or a rule)."""

    counts: Counter[str] = field(default_factory=Counter)  # true, false, unsure, none

    @property
    def judged(self) -> int:
        return sum(self.counts[verdict] for verdict in VERDICTS)

    @property
    def precision(self) -> float | None:
        """Strict: true findings over judged ones (``unsure`` is not true); None: none judged."""
        return self.counts["true"] / self.judged if self.judged else None


def object_name(found: dict) -> str:
    """``kind/namespace/name`` of a JSON finding's object."""
    described = found.get("object") or {}
    return "/".join(described.get(part, "") for part in ("kind", "namespace", "name"))


def seen_findings(shared: Path) -> list[Seen]:
    """The error and warning findings of every corpus run, files relative to ``shared``."""
    seen: list[Seen] = []
    for _, arguments in corpus_runs(shared):
        for found in lint_json(None, arguments)["findings"]:
            if found["severity"] in JUDGED_LEVELS:
                file = Path(found["file"]).resolve().relative_to(shared.resolve()).as_posix()
                seen.append(Seen(file, found["rule"], object_name(found), found["severity"]))
    return seen


@dataclass(frozen=True)
class Verdict:
    """A row of the verdicts file: the settled verdict, and the second reader's own."""

    verdict: str
    reason: str
    second: str = ""  # blank: read by one reader only
    second_reason: str = ""

    def row(self) -> tuple[str, ...]:
        return (self.verdict, self.reason, self.second, self.second_reason)


def read_verdicts(path: Path) -> dict[tuple[str, str, str], Verdict]:
    """(file, rule, object) -> its ``Verdict``; a malformed row raises ``VerdictsError``."""
    verdicts: dict[tuple[str, str, str], Verdict] = {}
    with path.open(encoding="utf-8", newline="") as table:
        reader = csv.reader(table, delimiter="\t")
        header = next(reader, None)
        if header is None or tuple(header) != COLUMNS:
            raise VerdictsError(f"{path}:1: the header must be {' '.join(COLUMNS)} (tab-separated)")
        for row in reader:
            where = f"{path}:{reader.line_num}"
            if not row:
                continue
            if len(row) != len(COLUMNS):
                raise VerdictsError(f"{where}: {len(row)} columns; a row has {len(COLUMNS)}, tab-separated")
            file, rule, name, verdict, reason, second, second_reason = row
            for given, why, blank_ok in ((verdict, reason, False), (second, second_reason, True)):
                if blank_ok and not given and not why.strip():
                    continue
                if given not in VERDICTS:
                    raise VerdictsError(f"{where}: verdict {given!r}; write one of {', '.join(VERDICTS)}")
                if not why.strip():
                    raise VerdictsError(f"{where}: give the reason for the verdict in one line")
            if (file, rule, name) in verdicts:
                raise VerdictsError(f"{where}: a second verdict on {rule} {name} in {file}")
            verdicts[(file, rule, name)] = Verdict(verdict, reason, second, second_reason)
    return verdicts


def tally(seen: Iterable[Seen], verdicts: dict[tuple[str, str, str], Verdict]) -> dict[str, Tally]:
    """Counts per level (``error``, ``warning``) and per rule (``GSNNN``)."""
    rows: dict[str, Tally] = {level: Tally() for level in JUDGED_LEVELS}
    for item in seen:
        verdict = verdicts[item.key].verdict if item.key in verdicts else "none"
        for row in (item.level, item.rule):
            rows.setdefault(row, Tally()).counts[verdict] += 1
    return rows


def table(rows: dict[str, Tally]) -> Iterator[str]:
    """The Markdown table: levels first, then rules in order."""
    yield "| level / rule | findings | true | false | unsure | no verdict | strict precision |"
    yield "|---|---|---|---|---|---|---|"
    for name in [*JUDGED_LEVELS, *sorted(row for row in rows if row not in JUDGED_LEVELS)]:
        row = rows[name]
        counts = row.counts
        precision = "–" if row.precision is None else percent(row.precision)
        label = f"**{name}**" if name in JUDGED_LEVELS else name
        yield (
            f"| {label} | {sum(counts.values())} | {counts['true']} | {counts['false']} | {counts['unsure']}"
            f" | {counts['none']} | {precision} |"
        )


def percent(share: float) -> str:
    """One decimal, never rounded up to the bar: 94.6 %, not 95 %."""
    return f"{int(share * 1000) / 10:.1f}%"


def failures(rows: dict[str, Tally], read_once: int) -> list[str]:
    """Why the gate fails: a level below the bar, findings without a verdict or read by one
    reader only; empty: it passes."""
    why = []
    for level in JUDGED_LEVELS:
        row = rows[level]
        if row.precision is not None and row.precision < BAR:
            why.append(f"{level}: strict precision {percent(row.precision)} is below {BAR:.0%}")
        if row.counts["none"]:
            why.append(f"{level}: {row.counts['none']} finding(s) without a verdict")
    if read_once:
        why.append(f"{read_once} verdict(s) without a second reader's")
    return why


def readers(seen: list[Seen], verdicts: dict[tuple[str, str, str], Verdict]) -> tuple[str, int]:
    """What the second reader said of the findings seen, and how many verdicts lack it."""
    judged = [verdicts[key] for key in dict.fromkeys(item.key for item in seen) if key in verdicts]
    twice = [verdict for verdict in judged if verdict.second]
    differ = sum(1 for verdict in twice if verdict.second != verdict.verdict)
    line = (
        f"Second reader: {len(twice)} of {len(judged)} verdicts read twice, independently; they differed on"
        f" {differ} (the verdict column holds the one settled between the readers)."
    )
    return line, len(judged) - len(twice)


def report(seen: list[Seen], verdicts: dict[tuple[str, str, str], Verdict]) -> tuple[str, list[str]]:
    """The printed report and the gate's failures."""
    rows = tally(seen, verdicts)
    line, read_once = readers(seen, verdicts)
    lines = [*table(rows), "", line]
    keys = {item.key for item in seen}
    missing = sorted({item.key for item in seen if item.key not in verdicts})
    if missing:
        lines += ["", f"Findings without a verdict ({len(missing)}; columns {' '.join(COLUMNS)}):"]
        lines += ["\t".join((*key, "", "", "", "")) for key in missing]
    stale = sorted(key for key in verdicts if key not in keys)
    if stale:
        lines += ["", f"Verdicts no finding matches any more ({len(stale)}):"]
        lines += ["\t".join((*key, *verdicts[key].row())) for key in stale]
    return "\n".join(lines) + "\n", failures(rows, read_once)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=REPOSITORY.parent / "shared", help="the folder holding corpus/ and corpus-gitops/")
    parser.add_argument("--verdicts", type=Path, default=REPOSITORY / "benchmarks" / "verdicts.tsv", help="the verdicts file")
    parser.add_argument("--gate", action="store_true", help=f"exit 1 below {BAR:.0%}% at a level, or with findings unjudged or read once")
    options = parser.parse_args(argv)
    options.shared = options.shared.resolve()  # findings name files absolutely: relative to it
    if not (options.shared / "corpus").is_dir():
        print(f"no corpus under {options.shared}: nothing to judge", file=sys.stderr)
        return 2
    try:
        verdicts = read_verdicts(options.verdicts)
    except (OSError, VerdictsError) as error:
        print(f"judge: {error}", file=sys.stderr)
        return 2
    text, why = report(seen_findings(options.shared), verdicts)
    sys.stdout.write(text)
    for reason in why:
        print(f"gate: {reason}", file=sys.stderr)
    return 1 if options.gate and why else 0


if __name__ == "__main__":
    raise SystemExit(main())
