"""``gpustack lint``, ``rules`` and ``explain`` end to end: exact output and exit codes.

The test rules (GS900 pod, GS901 object, GS902 set) stand in for the shipped ones, so these
tests pin the command's behaviour, not what the rules find (tests/rules does that).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lint_support import gpustack, write

pytestmark = pytest.mark.usefixtures("test_rules", "in_tmp")

LATEST = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n    - {name: c, image: 'x:latest'}\n"
CLEAN = "apiVersion: v1\nkind: Service\nmetadata: {name: s}\n"
UNNAMED = "apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n"


def test_findings_exit_1_with_exact_text(capsys: pytest.CaptureFixture[str]) -> None:
    write("pod.yaml", LATEST)
    assert gpustack(capsys, "lint", "pod.yaml") == (
        1,
        "pod.yaml:6:17: warning GS900 latest-image: Pod p: c runs :latest\n"
        "    fix: Pin the image.\n"
        "\n"
        "1 file, 1 object: 1 finding (1 warning)\n",
        "",
    )


def test_clean_input_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    write("svc.yaml", CLEAN)
    assert gpustack(capsys, "lint", "svc.yaml") == (0, "1 file, 1 object: no findings\n", "")


@pytest.mark.parametrize(
    ("fail_on", "code"), [("error", 0), ("warning", 1), ("info", 1)]
)
def test_fail_on(capsys: pytest.CaptureFixture[str], fail_on: str, code: int) -> None:
    write("pod.yaml", LATEST)
    assert gpustack(capsys, "lint", "pod.yaml", "--fail-on", fail_on)[0] == code


def test_info_findings_are_listed_only_when_asked(capsys: pytest.CaptureFixture[str]) -> None:
    """GS902 (info) on two Services: hidden and counted by default; --show-info, config
    showInfo, or --fail-on info (info findings then fail the run) list it."""
    write("svc.yaml", CLEAN + "---\n" + CLEAN.replace("name: s", "name: t"))
    assert gpustack(capsys, "lint", "svc.yaml") == (
        0, "1 file, 2 objects: no findings, 1 info hidden (--show-info lists them)\n", ""
    )
    write("conf.yaml", "showInfo: true\n")
    for options in (["--show-info"], ["--config", "conf.yaml"], ["--fail-on", "info"]):
        code, out, _ = gpustack(capsys, "lint", "svc.yaml", "--no-cache", *options)
        assert "info GS902 two-services" in out and out.endswith("1 finding (1 info)\n"), options


def test_folder_default_and_a_broken_file_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    write("ok/svc.yaml", CLEAN)
    write("bad.yaml", "a: [\n")
    code, out, _ = gpustack(capsys, "lint")
    assert code == 1
    assert out == (
        "bad.yaml:2:1: error: invalid YAML: while parsing a flow node: did not find expected node content\n"
        "\n"
        "1 file, 1 object: no findings, 1 input error\n"
    )


def test_nothing_readable_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = gpustack(capsys, "lint", "missing.yaml")
    assert code == 2
    assert out == (
        "missing.yaml: error: no such file or folder\n"
        "\n"
        "note: no YAML or JSON files to lint could be read\n"
        "0 files, 0 objects: no findings, 1 input error\n"
    )


def test_stdin_stream_from_helm(capsys: pytest.CaptureFixture[str]) -> None:
    stream = f"---\n# Source: chart/templates/pod.yaml\n{LATEST}---\n# Source: chart/templates/svc.yaml\n{CLEAN}"
    code, out, _ = gpustack(capsys, "lint", "-", "--format", "json", stdin=stream.encode())
    document = json.loads(out)
    assert code == 1
    assert [(f["file"], f["line"], f["rule"]) for f in document["findings"]] == [("<stdin>", 8, "GS900")]
    assert document["summary"] == {
        "files": 1, "objects": 2, "findings": 1, "error": 0, "warning": 1, "info": 0, "input_errors": 0, "errors": 0,
        "suppressed": 0,
    }


def test_empty_stdin_is_said_plainly_and_can_fail(capsys: pytest.CaptureFixture[str]) -> None:
    expected = "note: no Kubernetes objects (documents with apiVersion and kind) in the 1 file(s) read\n"
    expected += "1 file, 0 objects: no findings\n"
    assert gpustack(capsys, "lint", "-", stdin=b"") == (0, expected, "")
    assert gpustack(capsys, "lint", "-", "--fail-if-no-objects", stdin=b"") == (2, expected, "")


def test_config_is_discovered_upward_and_applied(capsys: pytest.CaptureFixture[str], in_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(".gpustack.yaml", "rules: {GS900: error, GS901: off}\nexclude: [vendor]\n")
    write("sub/pod.yaml", LATEST)
    write("sub/cm.yaml", UNNAMED)
    write("sub/vendor/pod.yaml", LATEST)
    monkeypatch.chdir(in_tmp / "sub")
    code, out, _ = gpustack(capsys, "lint", "--format", "json")
    assert code == 1
    assert [(f["file"], f["rule"], f["severity"]) for f in json.loads(out)["findings"]] == [
        ("pod.yaml", "GS900", "error")
    ]


def test_explicit_config_and_cli_options_win(capsys: pytest.CaptureFixture[str]) -> None:
    write("conf.yaml", "failOn: error\n")
    write("pod.yaml", LATEST)
    assert gpustack(capsys, "lint", "pod.yaml", "--config", "conf.yaml")[0] == 0
    assert gpustack(capsys, "lint", "pod.yaml", "--config", "conf.yaml", "--fail-on", "warning")[0] == 1


def test_bad_config_exits_2_with_a_located_error(capsys: pytest.CaptureFixture[str]) -> None:
    write(".gpustack.yaml", "failOn: sometimes\n")
    write("pod.yaml", LATEST)
    assert gpustack(capsys, "lint", "pod.yaml") == (
        2,
        "",
        "error: .gpustack.yaml:1:1: failOn: expected one of error, warning, info, not 'sometimes'\n".replace(
            ".gpustack.yaml", str(Path.cwd() / ".gpustack.yaml")
        ),
    )


def test_suppressions_show_and_audit(capsys: pytest.CaptureFixture[str]) -> None:
    write("pod.yaml", LATEST.replace("metadata: {name: p}", "metadata: {name: p, annotations: {gpustack.io/ignore: 'GS900: ok'}}"))
    assert gpustack(capsys, "lint", "pod.yaml") == (0, "1 file, 1 object: no findings, 1 suppressed\n", "")
    code, out, _ = gpustack(capsys, "lint", "pod.yaml", "--show-suppressed")
    assert (code, out.splitlines()[:3]) == (
        0,
        ["suppressed:", "pod.yaml:6:17: warning GS900 latest-image: Pod p: c runs :latest", "    suppressed by annotation: ok"],
    )
    code, out, _ = gpustack(capsys, "lint", "pod.yaml", "--no-suppressions")
    assert code == 1
    assert "note: suppressions are off (audit): 1 reported finding(s) would be suppressed\n" in out


def test_partial_skips_set_rules(capsys: pytest.CaptureFixture[str]) -> None:
    write("svc.yaml", CLEAN + "---\n" + CLEAN.replace("name: s", "name: t"))
    assert gpustack(capsys, "lint", "svc.yaml")[0] == 0  # GS902 is info
    assert "GS902" in gpustack(capsys, "lint", "svc.yaml", "--fail-on", "info")[1]
    code, out, _ = gpustack(capsys, "lint", "svc.yaml", "--fail-on", "info", "--partial")
    assert (code, out) == (
        0,
        "note: GS902 skipped: --partial input is not the whole set these rules need\n1 file, 2 objects: no findings\n",
    )


@pytest.mark.parametrize("fmt", ["sarif", "github"])
def test_other_formats(capsys: pytest.CaptureFixture[str], fmt: str) -> None:
    write("pod.yaml", LATEST)
    code, out, _ = gpustack(capsys, "lint", "pod.yaml", "--format", fmt)
    assert code == 1
    if fmt == "sarif":
        assert json.loads(out)["runs"][0]["results"][0]["ruleId"] == "GS900"
    else:
        assert out.startswith("::warning file=pod.yaml,line=6,col=17,title=GS900 latest-image::")


@pytest.mark.parametrize(
    "args", [("lint", "--format", "xml"), ("lint", "--distribution", "minikube"), ("lint", "--fail-on", "never")]
)
def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str], args: tuple[str, ...]) -> None:
    assert gpustack(capsys, *args)[0] == 2


def test_rules_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert gpustack(capsys, "rules") == (
        0,
        "ID     NAME            SEVERITY  SCOPE   AUTOFIX  SUMMARY\n"
        "GS900  latest-image    warning   pod     no       Images on :latest.\n"
        "GS901  unnamed-config  warning   object  no       No name.\n"
        "GS902  two-services    info      set     no       Two Services.\n",
        "",
    )


def test_explain(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = gpustack(capsys, "explain", "gs900")
    assert code == 0
    assert out.startswith(
        "# GS900 latest-image\n\n**Severity** warning · **Scope** pod · **Autofix** no · **Security** no\n\n"
        "Images on :latest.\n\n## Why\n\nUnpinned.\n\n## Fix\n\nPin the image.\n\n## Fires on\n\nlatest\n\n```yaml\n"
    )


def test_explain_ends_with_the_rule_page(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Its path in the repository; below --docs-url (or GPUSTACK_DOCS_URL) as SARIF's helpUri."""
    monkeypatch.delenv("GPUSTACK_DOCS_URL", raising=False)
    assert gpustack(capsys, "explain", "gs900")[1].endswith("```\n\nPage: docs/rules/GS900.md\n")
    base = "https://example.test/org/gpustack/blob/v1.2.0"
    out = gpustack(capsys, "explain", "latest-image", "--docs-url", base)[1]
    assert out.endswith(f"\nPage: {base}/docs/rules/GS900.md\n")
    monkeypatch.setenv("GPUSTACK_DOCS_URL", base + "/")
    assert gpustack(capsys, "explain", "GS900")[1] == out


def test_explain_unknown_rule_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert gpustack(capsys, "explain", "no-such-rule") == (
        2,
        "",
        "error: unknown rule 'no-such-rule'; `gpustack rules` lists them\n",
    )
    assert "did you mean latest-image?" in gpustack(capsys, "explain", "latest-imag")[2]
