"""Roots: set-level rules judge each repository (or configured root) apart.

``fixtures/roots/two-repos`` holds two clusters' repositories: ``platform`` runs
kube-prometheus-stack selecting every rule, an XID alert and HAMi; ``inference`` runs NVIDIA's
device plugin and a PrometheusRule no Prometheus of its own selects, without an XID alert.
Linted as one set, platform's settings silence inference's GS014 and GS015, and the two
device plugins make a GS009 pair that no cluster holds. A ``.git`` in each (made here: git
keeps none in a commit) or ``--set-root`` / ``roots:`` keeps them apart.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from gpustack.lint.engine import lint
from gpustack.lint.policy.config import Config
from gpustack.lint.report.model import Report

from lint_support import gpustack, load_paths

TWO_REPOS = Path(__file__).parent / "fixtures" / "roots" / "two-repos"
Key = tuple[str, int, str, str]


def keys(report: Report) -> set[Key]:
    return {(finding.file, finding.line, finding.rule, finding.message) for finding in report.findings}


def linted(*paths: Path, roots: tuple[Path, ...] = ()) -> Report:
    config = Config(distribution="k3s", roots=roots)
    return lint(load_paths([str(path) for path in paths]), config)


@pytest.fixture
def repos(tmp_path: Path) -> Path:
    """A copy of the two repositories in a folder of no repository."""
    shutil.copytree(TWO_REPOS, tmp_path / "repos")
    return tmp_path / "repos"


def make_repositories(repos: Path) -> None:
    (repos / "platform" / ".git").mkdir()  # a clone
    (repos / "inference" / ".git").write_text("gitdir: ../.worktrees/inference\n")  # a worktree


def rules_in(report: Report, folder: Path) -> set[str]:
    return {finding.rule for finding in report.findings if Path(finding.file).is_relative_to(folder)}


def test_without_roots_one_repository_silences_the_other(repos: Path) -> None:
    together = linted(repos)
    assert rules_in(together, repos / "inference") == {"GS009"}  # GS014, GS015 silenced; a pair no cluster has


def test_two_git_repositories_are_linted_apart(repos: Path) -> None:
    make_repositories(repos)
    together = linted(repos)
    assert rules_in(together, repos / "inference") == {"GS014", "GS015"}
    assert rules_in(together, repos / "platform") == set()
    assert keys(together) == keys(linted(repos / "platform")) | keys(linted(repos / "inference"))
    assert {finding.root for finding in together.findings} == {str(repos / "inference")}


@pytest.mark.parametrize("where", ["option", "config"])
def test_set_roots_from_the_option_and_the_config(
    repos: Path, where: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repos)
    options = ["--set-root", "platform", "--set-root", "inference"]
    if where == "config":
        (repos / ".gpustack.yaml").write_text("distribution: k3s\nroots: [platform, inference]\n")
        options = []
    code, out, _ = gpustack(capsys, "lint", ".", "--distribution", "k3s", "--no-cache", "-f", "json", *options)
    findings = json.loads(out)["findings"]
    assert code == 1
    assert {(f["file"], f["rule"], f["root"]) for f in findings} == {
        ("inference/alerts.yaml", "GS014", "inference"),
        ("inference/alerts.yaml", "GS015", "inference"),
    }
    code, out, _ = gpustack(capsys, "lint", ".", "--distribution", "k3s", "--no-cache", "-f", "sarif", *options)
    results = json.loads(out)["runs"][0]["results"]
    assert {(r["ruleId"], r["properties"]["root"]) for r in results} == {("GS014", "inference"), ("GS015", "inference")}


def test_a_file_belongs_to_its_deepest_root(repos: Path) -> None:
    """The whole tree a root, the inference folder a root inside it: inference stays apart."""
    together = linted(repos, roots=(repos, repos / "inference"))
    assert rules_in(together, repos / "inference") == {"GS014", "GS015"}
    assert {finding.root for finding in together.findings} == {str(repos / "inference")}


def test_the_top_root_holds_the_files_in_no_root(repos: Path) -> None:
    """Only inference is a root: platform's files form the top root (``root`` None)."""
    together = linted(repos, roots=(repos / "inference",))
    assert rules_in(together, repos / "inference") == {"GS014", "GS015"}
    assert linted(repos / "platform").findings == ()
    assert all(finding.root == str(repos / "inference") for finding in together.findings)


def test_the_cache_knows_the_roots(
    repos: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A .git made between two runs on the same files changes the findings, not a stale report."""
    monkeypatch.chdir(repos)
    args = ("lint", ".", "--distribution", "k3s", "-f", "json", "--cache-dir", str(repos.parent / "cache"))
    first = {f["rule"] for f in json.loads(gpustack(capsys, *args)[1])["findings"]}
    make_repositories(repos)
    second = {f["rule"] for f in json.loads(gpustack(capsys, *args)[1])["findings"]}
    assert (first, second) == ({"GS009"}, {"GS014", "GS015"})


def test_a_set_root_that_is_no_folder_is_a_usage_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = gpustack(capsys, "lint", str(TWO_REPOS), "--set-root", str(tmp_path / "none"))
    assert code == 2
    assert "no such folder" in err


# fixtures/roots/monorepo: two clusters of one repository. clusters/production (Flux
# Kustomizations) deploys infrastructure/monitoring, infrastructure/device-plugin and
# apps/production; clusters/staging (an Argo CD Application with two sources) deploys
# apps/staging and the same device plugin.
MONOREPO = Path(__file__).parent / "fixtures" / "roots" / "monorepo"
PRODUCTION = ("clusters/production", "infrastructure", "apps/production")
STAGING = ("clusters/staging", "infrastructure/device-plugin", "apps/staging")


@pytest.fixture
def monorepo(tmp_path: Path) -> Path:
    shutil.copytree(MONOREPO, tmp_path / "monorepo")
    (tmp_path / "monorepo" / ".git").mkdir()
    return tmp_path / "monorepo"


def test_each_cluster_of_a_monorepo_is_linted_apart(monorepo: Path) -> None:
    together = linted(monorepo)
    by_root = {(Path(f.file).relative_to(monorepo).as_posix(), f.rule, f.root) for f in together.findings}
    production, staging = str(monorepo / "clusters" / "production"), str(monorepo / "clusters" / "staging")
    assert by_root == {
        ("apps/production/hami/app/hami.yaml", "GS009", production),  # the pair, once, on the first file
        # the shared file's finding, once although both clusters lint it
        ("infrastructure/device-plugin/nvidia-device-plugin.yaml", "GS031", production),
        ("apps/staging/alerts.yaml", "GS015", staging),  # staging has no Prometheus: GS014 says nothing
    }


def test_a_cluster_gives_the_findings_of_its_paths_linted_alone(monorepo: Path) -> None:
    production = linted(*(monorepo / folder for folder in PRODUCTION))
    staging = linted(*(monorepo / folder for folder in STAGING))
    assert keys(linted(monorepo)) == keys(production) | keys(staging)


def test_one_cluster_entry_splits_nothing(monorepo: Path) -> None:
    """Without staging, production's entry is the repository's only one: one set, whose
    monitoring selects the staging folder's rule too (kept, deployed by nothing). The report
    names the set by its GitOps entry, not by the folder that holds the repository."""
    shutil.rmtree(monorepo / "clusters" / "staging")
    report = linted(monorepo)
    assert {finding.root for finding in report.findings} == {str(monorepo / "clusters" / "production")}
    assert rules_in(report, monorepo / "apps" / "staging") == set()



def test_rendered_stacks_in_one_folder_are_linted_apart(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``gpustack lint out/`` over every rendered example: each stack folder holds the
    ``.gpustack.yaml`` render wrote, so none is paired with another (one stack's device plugin
    with another's HAMi or GPU Operator was GS009), and the note names them."""
    out = tmp_path / "out"
    stacks = sorted(folder.name for folder in (repo / "output").iterdir() if folder.is_dir())
    for name in stacks:
        shutil.copytree(repo / "output" / name, out / name)
    code, printed, err = gpustack(capsys, "lint", "--format", "json", str(out))
    report = json.loads(printed)
    alone = set()
    for name in stacks:
        findings = json.loads(gpustack(capsys, "lint", "--format", "json", str(out / name))[1])["findings"]
        alone |= {(f["file"], f["rule"], f["message"]) for f in findings}
    assert {(f["file"], f["rule"], f["message"]) for f in report["findings"]} <= alone
    assert (code, err) == (0, "")
    [note] = [note["message"] for note in report["notes"] if "stack of its own" in note["message"]]
    assert note.endswith(", ".join(str(out / name) for name in stacks))
