"""``--fix`` and ``--diff``: splice the fixable findings' edits, then check the result.

A round splices every file's fixable findings at once and lints the whole set again (set
and context rules see the fixed files). Findings left out of a round because their edits
collided with another's are fixed in the next; the rounds stop when nothing changes.

Then each changed file is checked: it must parse into as many objects as before, and no
finding that a round fixed may still be reported. A file that fails keeps its original text
and gets an error, so ``--fix`` never writes what it cannot vouch for.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from gpustack.lint.fix.splice import Fix, splice
from gpustack.lint.input.charttemplates import is_rendered
from gpustack.lint.input.load import LoadResult, load_text
from gpustack.lint.model import Finding, InputError, Note, ObjectRef, Path
from gpustack.lint.report.model import Report

MAX_ROUNDS = 3

Relint = Callable[[LoadResult], Report]
_Key = tuple[str, str, int, ObjectRef | None, Path]  # a finding's identity across rounds


@dataclass(frozen=True)
class FixOutcome:
    """What fixing would do: the changed files' texts and the lint of the result."""

    report: Report  # of the set with the fixed texts
    originals: Mapping[str, str]  # file -> text before
    fixed: Mapping[str, str]  # file -> text after, changed files only (input order)
    counts: Mapping[str, int]  # file -> findings fixed in it
    failures: tuple[InputError, ...]  # files left as they were, and why
    notes: tuple[Note, ...]  # fixable findings left out, and why

    @property
    def count(self) -> int:
        """Findings fixed in all files."""
        return sum(self.counts.values())


def fix(loaded: LoadResult, report: Report, relint: Relint) -> FixOutcome:
    """Fix what ``report`` (the lint of ``loaded``) marks fixable."""
    texts = dict(loaded.texts)
    applied: set[_Key] = set()
    refused: dict[_Key, Note] = {
        _key(finding): _note(finding, "is not fixed: its file is a chart template read with its values; edit the template")
        for finding in report.findings
        if finding.edits and is_rendered(texts.get(finding.file, ""))
    }
    failed: dict[str, str] = {}
    for _ in range(MAX_ROUNDS):
        changed = False
        for file, findings in _fixable(report, exclude=failed, texts=texts).items():
            spliced = splice(texts[file], [Fix(finding.document, finding.edits) for finding in findings])
            for index, why in spliced.refused.items():
                refused[_key(findings[index])] = _note(findings[index], why)
            if spliced.text == texts[file]:
                continue
            problem = _parse_problem(file, texts[file], spliced.text)
            if problem:
                failed[file] = problem
                continue
            texts[file] = spliced.text
            applied.update(_key(findings[index]) for index in spliced.applied)
            changed = True
        if not changed:
            break
        report = relint(_reloaded(loaded, texts))
    for finding in report.findings:
        changed = texts[finding.file] != loaded.texts[finding.file]
        if changed and finding.file not in failed and _key(finding) in applied:
            failed[finding.file] = f"{finding.rule} is still reported at line {finding.line} after its fix"
    if any(texts[file] != loaded.texts[file] for file in failed):
        texts.update((file, loaded.texts[file]) for file in failed)
        report = relint(_reloaded(loaded, texts))
    remaining = {_key(finding) for finding in report.findings}
    fixed = {file: text for file, text in texts.items() if text != loaded.texts[file]}
    return FixOutcome(
        report=report,
        originals=loaded.texts,
        fixed=fixed,
        counts=_per_file(applied - remaining),
        failures=tuple(InputError(file, f"not fixed, left as it was: {why}") for file, why in failed.items()),
        notes=tuple(note for key, note in refused.items() if key in remaining),
    )


def _per_file(keys: set[_Key]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for key in keys:
        counts[key[1]] = counts.get(key[1], 0) + 1
    return counts


def _fixable(report: Report, *, exclude: Mapping[str, str], texts: Mapping[str, str]) -> dict[str, list[Finding]]:
    """The findings with edits, by file; not in a chart template read with its values (its text
    is what was rendered, not the template)."""
    by_file: dict[str, list[Finding]] = {}
    for finding in report.findings:
        if finding.edits and finding.file not in exclude and not is_rendered(texts.get(finding.file, "")):
            by_file.setdefault(finding.file, []).append(finding)
    return by_file


def _note(finding: Finding, why: str) -> Note:
    return Note(f"{finding.rule} {why}", finding.file, finding.line)


def _key(finding: Finding) -> _Key:
    return (finding.rule, finding.file, finding.document, finding.object, finding.path)


def _parse_problem(file: str, before: str, after: str) -> str | None:
    """Why the fixed text cannot replace the original, or None."""
    old, new = load_text(file, before), load_text(file, after)
    if len(new.errors) > len(old.errors):
        error = new.errors[-1]
        return f"the fixed text does not parse (line {error.line}: {error.message})"
    if len(new.resources) != len(old.resources):
        return f"the fixed text holds {len(new.resources)} objects instead of {len(old.resources)}"
    return None


def _reloaded(loaded: LoadResult, texts: Mapping[str, str]) -> LoadResult:
    """The set as loaded, with ``texts`` in place of the files' texts."""
    unread = LoadResult(errors=tuple(error for error in loaded.errors if error.file not in texts))
    return LoadResult.merge([unread, *(load_text(file, text) for file, text in texts.items())])
