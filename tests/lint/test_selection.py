"""Rule selection, severities and exemptions, from the command line and ``.gpustack.yaml``.

Test rules: GS900 (warning) on containers on ``:latest``, GS901 (warning) on unnamed
ConfigMaps, GS902 (info) on every Service after the first.
"""

from __future__ import annotations

import json

import pytest
from lint_support import gpustack, write

from gpustack.lint.policy.selection import Choice, Selection

pytestmark = pytest.mark.usefixtures("test_rules", "in_tmp")

ALL = """\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers: [{name: c, image: 'x:latest'}]
---
apiVersion: v1
kind: ConfigMap
metadata: {}
---
apiVersion: v1
kind: Service
metadata: {name: s1}
---
apiVersion: v1
kind: Service
metadata: {name: s2}
"""


def found(capsys: pytest.CaptureFixture[str], *args: str) -> list[tuple[str, str]]:
    """(rule, severity) of every finding of ``gpustack lint all.yaml ARGS``."""
    write("all.yaml", ALL)
    code, out, err = gpustack(capsys, "lint", "all.yaml", "--format", "json", *args)
    assert code in (0, 1), err
    return [(f["rule"], f["severity"]) for f in json.loads(out)["findings"]]


def usage_error(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    write("all.yaml", ALL)
    code, out, err = gpustack(capsys, "lint", "all.yaml", *args)
    assert (code, out) == (2, "")
    return err


EVERYTHING = [("GS900", "warning"), ("GS901", "error"), ("GS902", "info")]  # GS901's hits say error


def test_by_default_every_rule_runs(capsys: pytest.CaptureFixture[str]) -> None:
    assert sorted(found(capsys)) == EVERYTHING


@pytest.mark.parametrize(
    ("args", "rules"),
    [
        (("--select", "GS900,GS902"), {"GS900", "GS902"}),
        (("--select", "GS900", "--select", " GS901 "), {"GS900", "GS901"}),
        (("--ignore", "GS901"), {"GS900", "GS902"}),
        (("--select", "GS900,GS901", "--ignore", "GS901"), {"GS900"}),  # within a source ignore wins
    ],
)
def test_select_and_ignore(capsys: pytest.CaptureFixture[str], args: tuple[str, ...], rules: set[str]) -> None:
    assert {rule for rule, _ in found(capsys, *args)} == rules


def test_severity_overrides_and_changes_the_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    assert sorted(found(capsys, "--severity", "GS900=error", "--severity", "GS901=info,GS902=warning")) == [
        ("GS900", "error"),
        ("GS901", "info"),
        ("GS902", "warning"),
    ]
    write("pod.yaml", ALL.split("---")[0])
    assert gpustack(capsys, "lint", "pod.yaml", "--severity", "GS900=info")[0] == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--select", "GS900,GS999"), "--select: unknown rule 'GS999'"),
        (("--ignore", "GS9"), "--ignore: unknown rule 'GS9'"),  # never a prefix
        (("--severity", "GS999=info"), "--severity: unknown rule 'GS999'"),
        (("--severity", "GS900=fatal"), "--severity: expected RULE=LEVEL"),
        (("--severity", "GS900"), "--severity: expected RULE=LEVEL"),
    ],
)
def test_unknown_ids_and_levels_exit_2(capsys: pytest.CaptureFixture[str], args: tuple[str, ...], message: str) -> None:
    assert message in usage_error(capsys, *args)


def test_rule_ids_in_any_case(capsys: pytest.CaptureFixture[str]) -> None:
    assert {rule for rule, _ in found(capsys, "--select", "gs900,Gs901")} == {"GS900", "GS901"}
    assert {rule for rule, _ in found(capsys, "--ignore", "gs900")} == {"GS901", "GS902"}
    assert ("GS900", "info") in found(capsys, "--severity", "gs900=info")
    write(".gpustack.yaml", "ignore: [gs900]\nrules: {gs901: info}\n")
    assert sorted(found(capsys)) == [("GS901", "info"), ("GS902", "info")]


def test_config_select_ignore_and_rules(capsys: pytest.CaptureFixture[str]) -> None:
    write(".gpustack.yaml", "select: [GS900, GS901]\nrules: {GS902: warning}\n")
    # rules: turning a rule on (here with a severity) adds it to the config's select.
    assert sorted(found(capsys)) == [("GS900", "warning"), ("GS901", "error"), ("GS902", "warning")]
    write(".gpustack.yaml", "ignore: [GS900]\nrules: {GS901: off}\n")
    assert found(capsys) == [("GS902", "info")]


def test_the_command_line_decides_before_the_config(capsys: pytest.CaptureFixture[str]) -> None:
    write(".gpustack.yaml", "ignore: [GS900]\nrules: {GS901: info}\n")
    assert sorted(found(capsys, "--select", "GS900,GS901")) == [("GS900", "warning"), ("GS901", "info")]
    assert found(capsys, "--ignore", "GS901") == [("GS902", "info")]  # the config still ignores GS900
    assert found(capsys, "--severity", "GS901=warning", "--ignore", "GS902") == [("GS901", "warning")]


def test_config_with_unknown_ids_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    write(".gpustack.yaml", "select: [GS900, GS9]\nignore: GS901\n")
    err = usage_error(capsys)
    assert "select.1: unknown rule 'GS9'" in err
    assert "ignore: expected a list of rule ids" in err


def test_one_decision_for_every_source() -> None:
    config = Choice(None, frozenset({"GS900"}))
    assert not Selection((config,)).enabled("GS900")
    assert not Selection((config,)).enabled("GS902", default=False)  # an opt-in rule nobody names
    assert Selection((Choice(on=frozenset({"GS902"})),)).enabled("GS902", default=False)
    assert not Selection((Choice(on=frozenset({"GS902"})),)).before(Choice(ignore=frozenset({"GS902"}))).enabled("GS902")
    assert Selection((config,)).before(Choice(frozenset({"GS900"}))).enabled("GS900")
    assert not Selection((config,)).before(Choice(frozenset({"GS901"}))).enabled("GS902")
    assert Selection((config,)).before(Choice(ignore=frozenset({"GS901"}))).enabled("GS902")


def test_an_opt_in_rule_runs_only_when_selected_by_id(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``optIn: true``: off in a default run; ``--select``, the config's ``select`` or
    ``rules: {ID: on}`` (or a severity) turn it on; ``ignore`` still wins within a source."""
    import dataclasses

    from lint_support import TEST_CATALOGUE

    catalogue = {**TEST_CATALOGUE, "GS902": dataclasses.replace(TEST_CATALOGUE["GS902"], opt_in=True)}
    monkeypatch.setattr("gpustack.lint.catalogue.load_catalogue", lambda: catalogue)
    assert sorted(found(capsys)) == EVERYTHING[:2]
    assert found(capsys, "--select", "GS902") == [("GS902", "info")]
    assert sorted(found(capsys, "--ignore", "GS900")) == [("GS901", "error")]
    write(".gpustack.yaml", "rules: {GS902: on}\n")
    assert sorted(found(capsys)) == EVERYTHING  # the defaults, and GS902
    write(".gpustack.yaml", "rules: {GS902: warning}\n")
    assert ("GS902", "warning") in found(capsys)
    write(".gpustack.yaml", "select: [GS900, GS902]\n")
    assert sorted(found(capsys)) == [("GS900", "warning"), ("GS902", "info")]
    write(".gpustack.yaml", "rules: {GS902: on}\nignore: [GS902]\n")
    assert "GS902" not in {rule for rule, _ in found(capsys)}
    write(".gpustack.yaml", "rules: {GS902: on}\n")
    assert "GS902" not in {rule for rule, _ in found(capsys, "--ignore", "GS902")}  # the nearer source


def test_an_opt_in_rule_is_marked_in_the_rules_table() -> None:
    import dataclasses

    from lint_support import TEST_CATALOGUE

    from gpustack.lint.rule_docs import catalogue_table, rule_page

    catalogue = {**TEST_CATALOGUE, "GS902": dataclasses.replace(TEST_CATALOGUE["GS902"], opt_in=True)}
    assert "GS902  two-services    info (opt-in)" in catalogue_table(catalogue)
    assert "**Severity** info (opt-in) · **Scope** set" in rule_page(catalogue["GS902"])


# --- exemptions ---------------------------------------------------------------------------

PODS = """\
apiVersion: v1
kind: Pod
metadata: {name: app, namespace: ml}
spec:
  containers: [{name: c, image: 'registry.example/team/app:latest'}]
---
apiVersion: v1
kind: Pod
metadata: {name: app-sidecar, namespace: ml}
spec:
  containers: [{name: c, image: 'registry.example/team/app-sidecar:latest'}]
---
apiVersion: v1
kind: Pod
metadata: {name: app, namespace: ml-staging}
spec:
  containers:
    - {name: c, image: 'registry.example/team/app:latest'}
    - {name: d, image: 'registry.example/team/app:1'}
---
apiVersion: v1
kind: Pod
metadata: {name: app}
spec:
  containers: [{name: c, image: 'registry.example/team/app:latest'}]
"""


def reported(capsys: pytest.CaptureFixture[str], exemption: str, *args: str) -> list[tuple[str | None, str, int]]:
    """(namespace, name, line) of the GS900 findings left with one exemption in the config."""
    write("pods.yaml", PODS)
    write(".gpustack.yaml", f"exemptions:\n  - {exemption}\n")
    code, out, err = gpustack(capsys, "lint", "pods.yaml", "--format", "json", *args)
    assert code in (0, 1), err
    return [(f["object"].get("namespace"), f["object"]["name"], f["line"]) for f in json.loads(out)["findings"]]


EVERY_POD = [("ml", "app", 5), ("ml", "app-sidecar", 11), ("ml-staging", "app", 18), (None, "app", 25)]


@pytest.mark.parametrize(
    ("exemption", "left"),
    [
        ("{rules: [GS900], name: app, reason: r}", [("ml", "app-sidecar", 11)]),
        ("{rules: [GS900], namespace: ml, name: app, reason: r}", EVERY_POD[1:]),
        ("{rules: [GS900], namespace: ml, reason: r}", EVERY_POD[2:]),
        ("{rules: [GS900], namespace: m, reason: r}", EVERY_POD),  # never a prefix
        ("{rules: [GS900], name: ap, reason: r}", EVERY_POD),
        ("{rules: [GS900], kind: Pod, name: app-sidecar, reason: r}", [e for e in EVERY_POD if e[1] == "app"]),
        ("{rules: [GS900], kind: pod, reason: r}", EVERY_POD),  # kinds are case-sensitive
        ("{rules: [GS901], name: app, reason: r}", EVERY_POD),  # another rule
        # An image: its repository with any tag, never a longer repository.
        ("{rules: [GS900], image: registry.example/team/app, reason: r}", [("ml", "app-sidecar", 11)]),
        ("{rules: [GS900], image: registry.example/team/app:latest, reason: r}", [("ml", "app-sidecar", 11)]),
        ("{rules: [GS900], image: registry.example/team/app:1, reason: r}", EVERY_POD),  # not the container hit
        ("{rules: [GS900], image: registry.example/team, reason: r}", EVERY_POD),
    ],
)
def test_exemptions_match_exactly(
    capsys: pytest.CaptureFixture[str], exemption: str, left: list[tuple[str | None, str, int]]
) -> None:
    assert reported(capsys, exemption) == left


def test_exempted_findings_are_suppressed_with_their_reason(capsys: pytest.CaptureFixture[str]) -> None:
    write("pods.yaml", PODS)
    write(".gpustack.yaml", "exemptions:\n  - {rules: [GS900], name: app-sidecar, reason: 'vendor image, reviewed'}\n")
    code, out, _ = gpustack(capsys, "lint", "pods.yaml", "--format", "json", "--show-suppressed")
    report = json.loads(out)
    [item] = report["suppressed"]
    assert (item["object"]["name"], item["suppression"]) == (
        "app-sidecar",
        {"source": "exemption", "reason": "vendor image, reviewed", "until": None},
    )
    assert report["summary"]["suppressed"] == 1
    assert reported(capsys, "{rules: [GS900], name: app-sidecar, reason: r}", "--no-suppressions") == EVERY_POD


@pytest.mark.parametrize(
    ("exemption", "message"),
    [
        ("{rules: [GS900], name: app}", "exemptions.0.reason: every exemption needs a reason"),
        ("{rules: [GS900], name: app, reason: ' '}", "exemptions.0.reason: every exemption needs a reason"),
        ("{rules: [GS900], reason: r}", "exemptions.0: name what is exempted"),
        ("{rules: [GS999], name: app, reason: r}", "exemptions.0.rules.0: unknown rule 'GS999'"),
        ("{rules: GS900, name: app, reason: r}", "exemptions.0.rules: expected a list"),
        ("{rules: [GS900], name: 'app*', namespace: 3, reason: r}", "exemptions.0.namespace: expected the exact value"),
        ("{rules: [GS900], labels: {a: b}, reason: r}", "exemptions.0.labels: unknown key"),
    ],
)
def test_a_wrong_exemption_exits_2(capsys: pytest.CaptureFixture[str], exemption: str, message: str) -> None:
    write(".gpustack.yaml", f"exemptions:\n  - {exemption}\n")
    assert message in usage_error(capsys)
