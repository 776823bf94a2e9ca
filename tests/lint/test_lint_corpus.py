"""The linter on ../shared/corpus (470 real GPU manifests): no crash, (almost) everything
readable, no rule failing. What the rules find there is tested in tests/rules."""

from __future__ import annotations

from pathlib import Path

from gpustack.lint.engine import lint

from lint_support import load_paths


def test_corpus_is_read_and_linted(shared: Path) -> None:
    loaded = load_paths([str(shared / "corpus")])
    report = lint(loaded)
    duplicates = sorted({Path(e.file).name for e in report.errors if e.message.startswith("duplicate key ")})
    unreadable = sorted({e.file for e in report.errors if not e.message.startswith("duplicate key ")})
    assert len(unreadable) <= 3, unreadable
    # Read by hand: Google's NCCL test pods give a container `resources` (one `restartPolicy`)
    # twice, the second hiding the first; kubectl and Helm refuse them. Their objects are linted.
    assert len(duplicates) == 9, duplicates
    assert all(name.startswith("GoogleCloudPlatform__container-engine-accelerators__gpudirect-rdma__nccl-test") for name in duplicates)
    assert not [error for error in report.errors if error.message.startswith("internal error")]
    assert report.files >= 465
    assert report.objects >= 1000
    assert report.findings
