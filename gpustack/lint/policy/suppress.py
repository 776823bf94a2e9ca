"""Suppressions: the one place that decides whether a finding is hidden.

Four sources, all matched exactly by rule id (``GS004``; never a prefix, never lower case),
tried in this order:

- the annotation ``gpustack.io/ignore`` on the object or on the pod template the finding is
  in; its value is one entry per line, each ``IDS`` or ``IDS: reason``, where IDS is one or
  more ids separated by commas: ``"GS001,GS004"``, ``"GS004: driver probe needs /dev"``;
- a comment ``# gpustack:ignore IDS[: reason]`` on the finding's line, or alone on the line
  above it;
- an exemption in ``.gpustack.yaml`` (``exemption.py``): object and image matched exactly;
- the baseline (``baseline.py``): each entry hides as many findings of its identity as it
  counts; entries left over no longer occur, and a note says how many.

A reason may end with an expiry, ``GS004: "driver probe needs /dev; until 2027-03-31"``: from
the day after, the suppression stops working and a note says so. Entries that cannot be read
or name unknown rules are reported as notes, never silently dropped. ``audit`` (the
``--no-suppressions`` switch) suppresses nothing and counts what would have been hidden.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from functools import cache
from typing import Any

from gpustack.lint.model import Finding, Hit, Note, Path, PodSpec, Resource
from gpustack.lint.policy.baseline import Baseline, identity
from gpustack.lint.policy.exemption import Exemption

ANNOTATION = "gpustack.io/ignore"
COMMENT = "gpustack:ignore"
_MARK = "gpustack"  # in the text of any file with a suppression (short of escapes inside the word)
_ENTRY = re.compile(r"(?P<ids>GS\d{3}(?:\s*,\s*GS\d{3})*)\s*(?::\s*(?P<reason>.*?))?\s*")
_EXPIRY = re.compile(r"(?:^|;)\s*until\s+(?P<date>\d{4}-\d{2}-\d{2})\s*$")
_COMMENT = re.compile(r"#\s*gpustack:ignore\b\s*(?P<entry>.*?)\s*$")
_EXAMPLE = '"GS001,GS004" or "GS004: reason; until 2027-03-31"'


@dataclass(frozen=True)
class Suppression:
    """One rule id suppressed by an annotation or comment, with its reason and expiry."""

    rule: str
    source: str  # "annotation" | "comment" | "exemption" | "baseline"
    reason: str | None = None
    until: date | None = None


@dataclass(frozen=True)
class Suppressed:
    finding: Finding
    suppression: Suppression


@dataclass(frozen=True)
class BaselineUse:
    """How a baseline served a run: findings it hid, entries that no longer occur."""

    file: str
    matched: int
    stale: int


@dataclass(frozen=True)
class Outcome:
    findings: tuple[Finding, ...]
    suppressed: tuple[Suppressed, ...]
    notes: tuple[Note, ...]
    baseline: BaselineUse | None = None


def apply(
    results: Sequence[tuple[Hit, Finding]],
    *,
    resources: Iterable[Resource],
    pod_specs: Iterable[PodSpec],
    texts: Mapping[str, str],
    known_rules: Collection[str],
    today: date,
    audit: bool = False,
    exemptions: Sequence[Exemption] = (),
    baseline: Baseline | None = None,
) -> Outcome:
    """Split findings into reported and suppressed; notes for expired or unreadable entries
    and for baseline entries that no longer occur."""
    index = _Index(known_rules)
    index.read_annotations(resources, pod_specs, texts)
    index.read_comments(texts)
    pods: dict[int, list[PodSpec]] = {}
    for pod in pod_specs if exemptions else ():
        pods.setdefault(id(pod.resource), []).append(pod)
    unmatched = Counter(baseline.counts) if baseline else Counter()
    findings: list[Finding] = []
    suppressed: list[Suppressed] = []
    audited = 0
    for hit, finding in results:
        match = next((s for s in index.covering(hit, finding) if s.rule == finding.rule), None)
        if match is not None and match.until is not None and match.until < today:
            index.note(
                f"the {match.source} suppressing {finding.rule} on {finding.object} expired on "
                f"{match.until.isoformat()}; the finding is reported again",
                finding.file,
                finding.line,
            )
            match = None
        if match is None and exemptions:
            exemption = next(
                (e for e in exemptions if finding.rule in e.rules and e.covers(hit, pods.get(id(hit.resource), ()))),
                None,
            )
            match = None if exemption is None else Suppression(finding.rule, "exemption", exemption.reason)
        if match is None and baseline is not None and unmatched[key := identity(finding)] > 0:
            unmatched[key] -= 1
            match = Suppression(finding.rule, "baseline")
        if match is None or audit:
            findings.append(finding)
            audited += match is not None
        else:
            suppressed.append(Suppressed(finding, match))
    if audited:
        index.note(f"suppressions are off (audit): {audited} reported finding(s) would be suppressed")
    use = None
    if baseline is not None:
        stale = sum(unmatched.values())
        use = BaselineUse(baseline.file, sum(baseline.counts.values()) - stale, stale)
        if stale:
            index.note(
                f"{stale} of the findings recorded in {baseline.file} no longer occur: "
                f"`gpustack lint --write-baseline {baseline.file}` shrinks it"
            )
    return Outcome(tuple(findings), tuple(suppressed), tuple(index.notes), use)


class _Index:
    """Every annotation and comment of the input, read once; notes for the unreadable ones."""

    def __init__(self, known_rules: Collection[str]) -> None:
        self.known_rules = known_rules
        self.notes: list[Note] = []
        # id(resource) -> (path prefix inside the object, suppressions): () for the object
        self.annotations: dict[int, list[tuple[Path, list[Suppression]]]] = {}
        self.comments: dict[str, dict[int, list[Suppression]]] = {}  # file -> line -> ...

    def note(self, message: str, file: str | None = None, line: int | None = None) -> None:
        note = Note(message, file, line)
        if note not in self.notes:
            self.notes.append(note)

    def covering(self, hit: Hit, finding: Finding) -> list[Suppression]:
        found = [
            suppression
            for prefix, suppressions in self.annotations.get(id(hit.resource), ())
            if hit.path[: len(prefix)] == prefix
            for suppression in suppressions
        ]
        return found + self.comments.get(finding.file, {}).get(finding.line, [])

    def read_annotations(
        self, resources: Iterable[Resource], pod_specs: Iterable[PodSpec], texts: Mapping[str, str]
    ) -> None:
        """The annotations of objects and pod templates, in files whose text may hold one
        (every file is read, and nearly none says ``gpustack``)."""

        quiet = {file for file, text in texts.items() if _MARK not in text}

        def may_hold(resource: Resource) -> bool:
            return resource.file not in quiet

        # A pod template's metadata sits beside its spec: the template's path is the prefix.
        sources = [(resource, (), resource.data.get("metadata")) for resource in resources if may_hold(resource)]
        sources += [
            (pod.resource, pod.path[:-1], pod.template_metadata) for pod in pod_specs if pod.path[:-1] and may_hold(pod.resource)
        ]
        for resource, prefix, metadata in sources:
            value = _annotation(metadata)
            if value is None:
                continue
            where = (resource.file, resource.locate((*prefix, "metadata", "annotations", ANNOTATION))[0])
            if not isinstance(value, str):
                self.note(f"{resource.ref}: {ANNOTATION} must be a string like {_EXAMPLE}", *where)
                continue
            suppressions = []
            for entry in filter(None, (line.strip() for line in value.splitlines())):
                parsed = self.entry(entry, "annotation")
                if isinstance(parsed, str):
                    self.note(f"{resource.ref}: {ANNOTATION}: {parsed}", *where)
                else:
                    suppressions.extend(parsed)
            self.annotations.setdefault(id(resource), []).append((prefix, suppressions))

    def read_comments(self, texts: Mapping[str, str]) -> None:
        """A trailing comment covers its own line; a comment alone on its line, the next too."""
        for file, text in texts.items():
            if COMMENT not in text:
                continue
            lines: dict[int, list[Suppression]] = {}
            for number, content in enumerate(text.splitlines(), start=1):
                match = _COMMENT.search(content) if COMMENT in content else None
                if match is None:
                    continue
                parsed = self.entry(match.group("entry"), "comment")
                if isinstance(parsed, str):
                    self.note(f"# {COMMENT}: {parsed}", file, number)
                    continue
                lines.setdefault(number, []).extend(parsed)
                if content.lstrip().startswith("#"):
                    lines.setdefault(number + 1, []).extend(parsed)
            self.comments[file] = lines

    def entry(self, text: str, source: str) -> list[Suppression] | str:
        """The suppressions of one entry, or why it cannot be read."""
        parsed = _parse_entry(text)
        if isinstance(parsed, str):
            return parsed
        ids, reason, until = parsed
        unknown = [rule for rule in ids if rule not in self.known_rules]
        if unknown:
            return f"unknown rule {', '.join(unknown)} (`gpustack rules` lists them)"
        return [Suppression(rule, source, reason, until) for rule in ids]


def _annotation(metadata: Any) -> Any:
    annotations = metadata.get("annotations") if isinstance(metadata, Mapping) else None
    return annotations.get(ANNOTATION) if isinstance(annotations, Mapping) else None


@cache
def _parse_entry(text: str) -> tuple[tuple[str, ...], str | None, date | None] | str:
    match = _ENTRY.fullmatch(text)
    if match is None:
        return f"cannot read {text!r}: expected {_EXAMPLE}"
    ids = tuple(rule.strip() for rule in match.group("ids").split(","))
    reason = match.group("reason") or None
    until = None
    expiry = _EXPIRY.search(reason) if reason else None
    if expiry is not None:
        try:
            until = date.fromisoformat(expiry.group("date"))
        except ValueError:
            return f"cannot read the date in {text!r}: expected until YYYY-MM-DD"
        reason = reason[: expiry.start()].strip() or None
    return ids, reason, until
