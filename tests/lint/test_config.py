"""``.gpustack.yaml``: discovery, every setting, located errors, path excludes."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpustack.errors import Problem
from gpustack.lint.context import RuleOptions
from gpustack.lint.model import Severity
from gpustack.lint.policy.config import Config, ConfigError, find_config, load_config, search_start
from gpustack.lint.policy.selection import Choice, Selection

KNOWN = {"GS001", "GS004", "GS023"}


def write(folder: Path, text: str) -> Path:
    path = folder / ".gpustack.yaml"
    path.write_text(text)
    return path


def test_found_in_the_folder_or_above(tmp_path: Path) -> None:
    config = write(tmp_path, "failOn: error\n")
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    assert find_config(deep) == config
    assert find_config(tmp_path) == config


def test_the_search_starts_where_the_linted_paths_are(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "out" / "a" / "helm").mkdir(parents=True)
    (tmp_path / "out" / "b").mkdir()
    (tmp_path / "out" / "a" / "helm" / "x.yaml").write_text("")
    monkeypatch.chdir(tmp_path)
    assert search_start(["out/a"]) == tmp_path / "out" / "a"
    assert search_start(["out/a/helm/x.yaml"]) == tmp_path / "out" / "a" / "helm"
    assert search_start(["out/a/helm/x.yaml", "out/b"]) == tmp_path / "out"
    assert search_start(["-"]) == tmp_path


def test_no_file_gives_the_defaults() -> None:
    assert load_config(None, known_rules=KNOWN) == Config()


def test_every_setting(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "rules:\n  GS023: off\n  GS001: on\n  GS004: info\n"
        "failOn: error\nexclude: [charts/*/templates]\ndistribution: k3s\nxidCritical: [79, 48]\n"
        "suppressions: false\nspec: stack.yaml\nroots: [clusters/prod]\n",
    )
    (tmp_path / "clusters" / "prod").mkdir(parents=True)
    assert load_config(path, known_rules=KNOWN) == Config(
        path=path,
        selection=Selection((Choice(None, frozenset({"GS023"}), frozenset({"GS001", "GS004"})),)),
        severities={"GS004": Severity.INFO},
        fail_on=Severity.ERROR,
        exclude=("charts/*/templates",),
        distribution="k3s",
        options=RuleOptions(critical_xids=(79, 48)),
        suppressions=False,
        spec=tmp_path / "stack.yaml",
        roots=(tmp_path / "clusters" / "prod",),
    )


def test_a_root_that_is_no_folder_is_a_problem(tmp_path: Path) -> None:
    path = write(tmp_path, "roots: [clusters/prod]\n")
    with pytest.raises(ConfigError) as raised:
        load_config(path, known_rules=KNOWN)
    assert raised.value.problems == [
        Problem(f"no such folder: {tmp_path / 'clusters' / 'prod'}", str(path), 1, 9, "roots.0")
    ]


def test_an_empty_file_is_the_defaults(tmp_path: Path) -> None:
    path = write(tmp_path, "# nothing yet\n")
    assert load_config(path, known_rules=KNOWN) == Config(path=path)


def test_every_problem_is_reported_with_its_position(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "rules:\n  GS01: off\n  GS004: fatal\nfailOn: warn\nexclude: charts\ndistribution: minikube\n"
        "xidCritical: [x]\nsuppressions: maybe\nspec: 3\ncolour: true\nroots: [clusters/none, 4]\n",
    )
    with pytest.raises(ConfigError) as raised:
        load_config(path, known_rules=KNOWN)
    file = str(path)
    assert raised.value.problems == [
        Problem("unknown rule 'GS01'; did you mean GS001? `gpustack rules` lists them", file, 2, 3, "rules.GS01"),
        Problem("expected one of off, on, error, warning, info, not 'fatal'", file, 3, 3, "rules.GS004"),
        Problem("expected one of error, warning, info, not 'warn'", file, 4, 1, "failOn"),
        Problem("expected a list of path patterns", file, 5, 1, "exclude"),
        Problem(
            "expected one of k3s, rke2, k0s, kubeadm, talos, microk8s, gke, eks, aks, openshift, generic, not 'minikube'",
            file, 6, 1, "distribution",
        ),
        Problem("expected a list of XID codes (positive integers)", file, 7, 1, "xidCritical"),
        Problem("expected true or false", file, 8, 1, "suppressions"),
        Problem("expected the path of a spec file", file, 9, 1, "spec"),
        Problem(
            "unknown setting (known: rules, failOn, showInfo, exclude, distribution, xidCritical, suppressions, spec, "
                "values, select, ignore, exemptions, baseline, roots, cacheDir)",
            file, 10, 1, "colour",
        ),
        Problem("expected a list of folders (relative to this file)", file, 11, 1, "roots"),
    ]  # fmt: skip


def test_unreadable_config(tmp_path: Path) -> None:
    path = write(tmp_path, "rules: [\n")
    with pytest.raises(ConfigError) as raised:
        load_config(path, known_rules=KNOWN)
    assert raised.value.problems[0].line == 2
    with pytest.raises(ConfigError, match="cannot read the config"):
        load_config(tmp_path / "missing.yaml", known_rules=KNOWN)
    with pytest.raises(ConfigError, match="document is a list"):
        load_config(write(tmp_path, "- a\n"), known_rules=KNOWN)


def test_excludes_match_paths_and_folders_relative_to_the_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path, "exclude: [charts/*/templates, '*.json', vendor]\n")
    config = load_config(path, known_rules=KNOWN)
    monkeypatch.chdir(tmp_path)
    assert config.excluded("charts/gpu/templates")
    assert config.excluded("charts/gpu/templates/ds.yaml")
    assert config.excluded(str(tmp_path / "charts/gpu/templates/ds.yaml"))
    assert config.excluded("a/b.json")  # * matches across folders
    assert config.excluded("vendor/x.yaml")
    assert not config.excluded("charts/gpu/values.yaml")
    assert not config.excluded("vendored/x.yaml")  # exact, never a prefix
    assert config.excluded("src/vendor/x.yaml")  # a name matches at any depth
    assert not config.excluded("src/charts/gpu/templates/x.yaml")  # a path is relative to the config
    assert not Config().excluded("anything.yaml")
