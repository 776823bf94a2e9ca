"""The kustomize tier: the built-in overlay builder gives the objects ``kustomize build`` gives.

The binary is built from the Go module proxy once (``kustomize_binary``; skipped without Go).
Compared (``overlay_compare``, which says what is out of scope): every overlay of the
fixtures in tests/lint/fixtures/kustomize/ (one for each patch form and transformer), and every
kustomization with patches or transformers in ../shared/corpus-gitops and ../shared/corpus (skipped when absent;
the corpus holds part of each repository, so entries it lacks are removed from a copy first,
for both builders). And ``gpustack lint`` with the binary reports what it reports without.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gpustack.lint.engine import lint
from gpustack.lint.input import kustomizebin
from gpustack.lint.input.setfiles import SetFiles
from gpustack.lint.policy.config import Config

import kustomize_binary
from lint_support import load_paths
from overlay_compare import builtin, complete, differences, kustomize, overlays, set_of

FIXTURES = Path(__file__).parent / "fixtures" / "kustomize"
# kustomize cannot build a Component alone; each is built through the overlay that uses it.
FIXTURE_OVERLAYS = ("adds", "crd/overlay", "json6902", "legacy", "plugin/floating", "plugin/pinned", "removes", "smp",
                    "transformers")


@pytest.fixture(scope="module")
def binary() -> Path:
    from tests.cluster.build import find_go

    if kustomize_binary.built() is None and find_go() is None:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):  # .ci/run builds it: the tier must run
            pytest.fail("kustomize tier cannot run in CI: no Go to build kustomize with", pytrace=False)
        pytest.skip("no Go to build kustomize with (python -m tests.lint.kustomize_binary)")
    return kustomize_binary.build()


@pytest.mark.parametrize("overlay", FIXTURE_OVERLAYS)
def test_each_fixture_overlay_builds_as_kustomize_builds_it(binary: Path, overlay: str) -> None:
    files = SetFiles.of(*set_of(FIXTURES))
    folder = str((FIXTURES / overlay).resolve())
    theirs = kustomize(binary, folder)
    assert theirs is not None, f"kustomize build {overlay} failed"
    assert not differences(builtin(folder, files), theirs)


def test_the_fixtures_cover_every_overlay_there() -> None:
    files = SetFiles.of(*set_of(FIXTURES))
    named = {str((FIXTURES / overlay).resolve()) for overlay in FIXTURE_OVERLAYS}
    assert set(overlays(files)) - {str((FIXTURES / "transformers" / "component").resolve())} <= named


def test_every_corpus_overlay_builds_as_kustomize_builds_it(binary: Path, shared: Path, tmp_path: Path) -> None:
    corpus = shared / "corpus-gitops" / "corpus"
    if not corpus.is_dir():
        pytest.skip("../shared/corpus-gitops is not there")
    # Each GitOps repository, and the vendor corpus as one folder (its files hold no kustomization today).
    repositories = [*sorted(path for path in corpus.iterdir() if path.is_dir()), shared / "corpus"]
    compared, failed, different = 0, [], []
    for number, repository in enumerate(path for path in repositories if path.is_dir()):
        copy = complete(repository, tmp_path / str(number))
        files = SetFiles.of(*set_of(copy))
        for folder in overlays(files):
            theirs = kustomize(binary, folder)
            if theirs is None:  # `replacements` from generated ConfigMaps (out of scope) it cannot do without
                failed.append(folder)
                continue
            compared += 1
            found = differences(builtin(folder, files), theirs)
            if found:
                different.append(f"{repository.name}: {folder}: {found}")
    assert not different
    assert compared >= 60 and len(failed) <= 3, (compared, failed)


def test_lint_reports_the_same_with_the_binary(binary: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def findings() -> list[tuple[object, ...]]:
        kustomizebin.binary.cache_clear()
        # Not crd/: its GPU Operator ClusterPolicy is runtime evidence that would quiet GS004.
        loaded = load_paths([str(path) for path in sorted(FIXTURES.iterdir()) if path.name != "crd"], jobs=1)
        report = lint(loaded, Config(distribution="k3s"), jobs=1)
        return [(f.file, f.line, f.column, f.rule, f.message, f.object) for f in report.findings]

    monkeypatch.delenv("KUSTOMIZE", raising=False)
    monkeypatch.setattr(kustomizebin.shutil, "which", lambda name, *args, **kwargs: None)
    without = findings()
    monkeypatch.setenv("KUSTOMIZE", str(binary))
    with_binary = findings()
    kustomizebin.binary.cache_clear()
    assert with_binary == without
    assert any(rule == "GS004" for _, _, _, rule, _, _ in without)
