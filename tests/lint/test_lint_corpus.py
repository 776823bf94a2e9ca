"""The linter on ../shared/corpus (470 real GPU manifests): no crash, (almost) everything
readable, no rule failing. What the rules find there is tested in tests/rules."""

from __future__ import annotations

from pathlib import Path

from gpustack.lint.engine import lint
from gpustack.lint.load import load_paths


def test_corpus_is_read_and_linted(shared: Path) -> None:
    loaded = load_paths([str(shared / "corpus")])
    report = lint(loaded)
    unreadable = sorted({error.file for error in report.errors})
    assert len(unreadable) <= 3, unreadable
    assert not [error for error in report.errors if error.message.startswith("internal error")]
    assert report.files >= 465
    assert report.objects >= 1000
    assert report.findings
