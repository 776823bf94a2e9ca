"""Version resolution: every way a release pins a chart finds key data, or says why not."""

from __future__ import annotations

import pytest

from gpustack.lint.charts import chartkeys
from gpustack.lint.charts.chartversions import resolve


def _newest(chart: str) -> str:
    """The newest version gpustack has key data for."""
    known = chartkeys.versions(chart)
    assert known
    return max(known, key=chartkeys.version_key)


@pytest.mark.parametrize("raw", ["v26.7.0", "26.7.0", " v26.7.0 "])
def test_exact_with_or_without_v(raw: str) -> None:
    found = resolve("gpu-operator", raw)
    assert (found.version, found.note, found.certain) == ("v26.7.0", None, True)
    assert found.keys == chartkeys.chart_keys("gpu-operator", "v26.7.0")


def test_a_patch_without_data_uses_the_same_minor_with_a_note() -> None:
    found = resolve("gpu-operator", "v26.7.3")
    assert found.version == "v26.7.0" and found.certain
    assert found.note == "no key data for gpu-operator v26.7.3: checked against v26.7.0, the same minor release"


@pytest.mark.parametrize("raw", [None, "", "*", "latest", "HEAD"])
def test_no_pin_uses_the_newest_with_a_note(raw: str | None) -> None:
    found = resolve("hami", raw)
    assert found.version == _newest("hami") and not found.certain
    assert found.note is not None and found.note.startswith("no version pinned")


@pytest.mark.parametrize("raw", [">=0.17 <1", ">=0.17, <1", "0.20.x", "0.20.*", "~0.20.0", "^0.20.0", "0.20"])
def test_a_range_uses_the_newest_known_version_in_it(raw: str) -> None:
    found = resolve("nvidia-device-plugin", raw)
    assert found.version == "0.20.0" and not found.certain
    assert found.note is not None and f"version range `{raw}`" in found.note


def test_a_git_revision_uses_the_newest_with_a_note() -> None:
    found = resolve("hami", "main")
    assert found.version == _newest("hami") and not found.certain
    assert found.note is not None and "`main` is no chart version" in found.note


@pytest.mark.parametrize("raw", ["v19.0.0", ">=30.0.0"])
def test_outside_every_known_minor_checks_nothing_and_names_the_nearest(raw: str) -> None:
    found = resolve("gpu-operator", raw)
    assert found.keys is None and found.version is None
    assert found.note is not None and "nearest known version: " in found.note


def test_a_version_between_two_known_releases_uses_the_nearest_as_information() -> None:
    """v26.3.3 falls between v25.10.1 and v26.7.0: keys neither reads are most likely read by
    none in between either; the version used is not certain."""
    found = resolve("gpu-operator", "v26.3.3")
    assert (found.version, found.certain) == ("v26.7.0", False)
    assert found.keys is not None
    assert found.note == (
        "no key data for gpu-operator v26.3.3: checked against v26.7.0, the nearest of the versions that bracket it"
        " (v25.10.1 and v26.7.0)"
    )


def test_an_unknown_chart_has_no_data_and_nothing_to_say() -> None:
    assert resolve("not-a-chart", "1.0.0") == resolve("not-a-chart", None)
    assert resolve("not-a-chart", "1.0.0").note is None


def test_a_version_without_key_data_is_a_note_not_a_finding() -> None:
    """What gpustack does not know about a chart is no problem in the user's file: a note (text,
    JSON ``notes``, SARIF tool notifications) names the version, no finding is reported."""
    import json

    from gpustack.lint.engine import lint
    from gpustack.lint.input.load import load_text
    from gpustack.lint.policy.config import Config
    from gpustack.lint.report import ReportOptions, reporter

    text = (
        "apiVersion: helm.cattle.io/v1\nkind: HelmChart\nmetadata: {name: dcgm-exporter, namespace: kube-system}\n"
        "spec:\n  chart: dcgm-exporter\n  version: 3.1.0\n  valuesContent: 'notAKey: true'\n"
    )
    report = lint(load_text("dcgm.yaml", text), Config())
    assert [f for f in report.findings if f.rule == "GS031"] == []
    [note] = [n for n in report.notes if "no key data for dcgm-exporter 3.1.0" in n.message]
    assert (note.file, note.line) == ("dcgm.yaml", 5)
    options = ReportOptions()
    assert f"note: dcgm.yaml:5: {note.message}" in reporter("text").render(report, options)
    assert {"file": "dcgm.yaml", "line": 5, "message": note.message} in json.loads(
        reporter("json").render(report, options)
    )["notes"]
    sarif = json.loads(reporter("sarif").render(report, options))["runs"][0]
    assert note.message in [n["message"]["text"] for n in sarif["invocations"][0]["toolExecutionNotifications"]]
