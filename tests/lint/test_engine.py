"""The engine: scope dispatch, severity and fix resolution, sorting, robustness, counts."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest
from lint_support import TEST_CATALOGUE, TEST_RULES, TODAY, run

from gpustack.errors import GpustackError
from gpustack.lint.context import LintContext
from gpustack.lint.engine import lint
from gpustack.lint.input.load import load_text
from gpustack.lint.model import Hit, InputError, Note, Resource, Severity
from gpustack.lint.policy.config import Config
from gpustack.lint.policy.selection import Choice, Selection
from gpustack.lint.registry import Rule

PODS = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: prod}
spec:
  template:
    spec:
      initContainers:
        - {name: init, image: "busybox:latest"}
      containers:
        - {name: app, image: "app:latest"}
---
apiVersion: v1
kind: ConfigMap
metadata: {namespace: prod}
---
apiVersion: v1
kind: Service
metadata: {name: a}
---
apiVersion: v1
kind: Service
metadata: {name: b}
"""


def test_every_scope_runs_on_its_targets_with_positions() -> None:
    report = run(("a.yaml", PODS))
    assert [(f.rule, f.line, f.column, f.severity, f.message) for f in report.findings] == [
        ("GS900", 8, 24, Severity.WARNING, "Deployment prod/web: init runs :latest"),
        ("GS900", 10, 23, Severity.WARNING, "Deployment prod/web: app runs :latest"),
        ("GS901", 14, 1, Severity.ERROR, "ConfigMap prod/<unnamed> has no name"),
        ("GS902", 21, 1, Severity.INFO, "Service b: more than one Service in the set"),
    ]
    assert (report.files, report.objects, report.errors, report.notes) == (1, 4, (), ())


def test_findings_carry_identity_name_fix_and_are_sorted_by_file_then_position() -> None:
    report = run(("b.yaml", "kind: Service\napiVersion: v1\n"), ("a.yaml", PODS))
    first = report.findings[0]
    assert (first.file, first.name, first.fix, first.fixable, first.path) == (
        "a.yaml", "latest-image", "Pin the image.", False,
        ("spec", "template", "spec", "initContainers", 0, "image"),
    )  # fmt: skip
    assert first.object is not None and first.object.as_json() == {
        "apiVersion": "apps/v1", "kind": "Deployment", "namespace": "prod", "name": "web",
    }  # fmt: skip
    assert [(f.file, f.rule) for f in report.findings] == [
        ("a.yaml", "GS900"), ("a.yaml", "GS900"), ("a.yaml", "GS901"), ("a.yaml", "GS902"), ("a.yaml", "GS902"),
    ]  # fmt: skip  (b.yaml's Service comes first in the set: the two of a.yaml are extra)
    assert report.findings[2].fix == "Name it."  # the hit's own hint wins over the remediation


def test_severity_catalogue_then_hit_then_config() -> None:
    config = Config(severities={"GS901": Severity.INFO, "GS900": Severity.ERROR})
    report = run(("a.yaml", PODS), config=config)
    assert {f.rule: f.severity for f in report.findings} == {
        "GS900": Severity.ERROR, "GS901": Severity.INFO, "GS902": Severity.INFO,
    }  # fmt: skip


def test_disabled_rules_do_not_run() -> None:
    report = run(("a.yaml", PODS), config=Config(selection=Selection((Choice(ignore=frozenset({"GS900", "GS902"})),))))
    assert [f.rule for f in report.findings] == ["GS901"]


def test_partial_input_skips_set_rules_with_a_note() -> None:
    report = run(("a.yaml", PODS), partial=True)
    assert "GS902" not in {f.rule for f in report.findings}
    assert report.notes == (Note("GS902 skipped: --partial input is not the whole set these rules need"),)


def test_object_rules_see_only_their_kinds_and_pod_rules_every_kind() -> None:
    text = """\
    apiVersion: ray.io/v1
    kind: RayCluster
    metadata: {name: r}
    spec:
      workerGroupSpecs:
        - template:
            spec:
              containers: [{name: w, image: "ray:latest"}]
    ---
    apiVersion: v1
    kind: Pod
    metadata: {}
    """
    report = run(("r.yaml", text))
    assert [(f.rule, f.line) for f in report.findings] == [("GS900", 8, )]


def test_a_rule_that_raises_loses_its_target_not_the_run() -> None:
    def broken(resource: Resource, ctx: LintContext) -> Iterator[Hit]:
        if resource.kind == "Service":
            raise ZeroDivisionError("boom")
        yield Hit(resource, (), "fine")

    rules = {**TEST_RULES, "GS901": Rule("GS901", "object", broken)}
    loaded = load_text("a.yaml", PODS)
    report = lint(loaded, rules=rules, catalogue=TEST_CATALOGUE, today=TODAY)
    assert [f.message for f in report.findings if f.rule == "GS901"] == ["fine", "fine"]
    assert report.errors == (
        InputError("a.yaml", "internal error: GS901 failed (ZeroDivisionError('boom')); please report it"),
    ) * 2
    assert report.exit_code(Severity.ERROR) == 1


def test_a_rule_without_a_policy_is_a_packaging_error() -> None:
    catalogue = {key: value for key, value in TEST_CATALOGUE.items() if key != "GS902"}
    with pytest.raises(GpustackError, match="rules without a policy in the catalogue: GS902"):
        lint(load_text("a.yaml", PODS), rules=TEST_RULES, catalogue=catalogue)


@pytest.mark.parametrize(
    ("files", "note"),
    [
        ((), "no YAML or JSON files to lint"),
        ((("e.yaml", ""),), "no Kubernetes objects (documents with apiVersion and kind) in the 1 file(s) read"),
        ((("v.yaml", "replicas: 3\n"),), "no Kubernetes objects (documents with apiVersion and kind) in the 1 file(s) read"),
        ((("x.yaml", "a: ["),), "no YAML or JSON files to lint could be read"),
    ],
)
def test_input_without_objects_is_said_plainly(files: tuple[tuple[str, str], ...], note: str) -> None:
    report = run(*files)
    assert report.objects == 0
    assert Note(note) in report.notes


@pytest.mark.parametrize(
    ("files", "fail_on", "fail_if_no_objects", "code"),
    [
        ((("a.yaml", "apiVersion: v1\nkind: Service\n"),), Severity.WARNING, False, 0),
        ((("a.yaml", PODS),), Severity.WARNING, False, 1),
        ((("a.yaml", PODS),), Severity.ERROR, False, 1),  # GS901 is an error
        ((("a.yaml", PODS.split("---")[0]),), Severity.ERROR, False, 0),  # only warnings
        ((("a.yaml", PODS.split("---")[0]),), Severity.INFO, False, 1),
        ((("a.yaml", "apiVersion: v1\nkind: Service\n"), ("b.yaml", "a: [")), Severity.ERROR, False, 1),
        ((("b.yaml", "a: ["),), Severity.ERROR, False, 2),  # nothing readable
        ((("e.yaml", ""),), Severity.ERROR, False, 0),
        ((("e.yaml", ""),), Severity.ERROR, True, 2),
    ],
)
def test_exit_codes(files: tuple[tuple[str, str], ...], fail_on: Severity, fail_if_no_objects: bool, code: int) -> None:
    assert run(*files).exit_code(fail_on, fail_if_no_objects=fail_if_no_objects) == code


def test_distribution_and_options_reach_the_rules() -> None:
    seen = []

    def spy(ctx: LintContext) -> Iterator[Hit]:
        seen.append((ctx.distribution, ctx.options.critical_xids, ctx.partial))
        return iter(())

    rules = {"GS902": Rule("GS902", "set", spy)}
    config = Config(distribution="k3s")
    config = replace(config, options=replace(config.options, critical_xids=(79,)))
    lint(load_text("a.yaml", "kind: Pod\n"), config, rules=rules, catalogue=TEST_CATALOGUE, today=TODAY)
    assert seen == [("k3s", (79,), False)]
