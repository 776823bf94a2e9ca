"""--fix on ../shared/corpus (real GPU manifests, as K3s context makes the most fixable):
every fixable finding fixed, every file verified, a second pass changes nothing."""

from __future__ import annotations

from pathlib import Path

from gpustack.lint.engine import lint
from gpustack.lint.fix.apply import fix
from gpustack.lint.input.load import LoadResult, load_text
from gpustack.lint.policy.config import Config
from gpustack.lint.report.model import Report

from lint_support import load_paths

CONFIG = Config(distribution="k3s")


def relint(loaded: LoadResult) -> Report:
    return lint(loaded, CONFIG)


def test_fix_on_the_corpus_is_complete_verified_and_idempotent(corpus: Path) -> None:
    loaded = load_paths([str(corpus)])
    report = relint(loaded)
    fixable = [finding for finding in report.findings if finding.fixable]
    outcome = fix(loaded, report, relint)
    assert (outcome.failures, outcome.notes) == ((), ())
    assert outcome.count == len(fixable) > 0
    assert not [finding for finding in outcome.report.findings if finding.fixable]
    fixed = LoadResult.merge(load_text(file, text) for file, text in {**loaded.texts, **outcome.fixed}.items())
    assert len(fixed.resources) == len(loaded.resources)
    assert fix(fixed, relint(fixed), relint).fixed == {}
