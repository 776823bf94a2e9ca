"""Values files nothing maps to a chart, linted as the chart's values where their path names the
chart and their keys fit it (gpustack/lint/releases/inferred.py)."""

from __future__ import annotations

from pathlib import Path

from gpustack.lint.context import LintContext
from gpustack.lint.engine import lint
from gpustack.lint.model import Severity
from gpustack.lint.policy.config import Config
from gpustack.lint.releases import dispatch, inferred
from gpustack.lint.unread import NOT_CHECKED

from lint_support import load_paths, write_tree

OPERATOR_VALUES = "driver:\n  enabled: true\n  useOpenKmods: true\ntoolkit:\n  enabled: true\nnodeSelector: {gpu: 'true'}\n"
PLUGIN_VALUES = "migStrategy: single\ngfd:\n  enabled: true\nruntimeClassName: nvidia\n"


def _releases(folder: Path) -> list:
    ctx = LintContext(resources=load_paths([str(folder)]).resources, pod_specs=())
    return list(dispatch.releases(ctx))


def test_a_values_file_whose_path_names_the_chart_and_keys_fit_is_its_release_without_a_version(tmp_path: Path) -> None:
    write_tree(tmp_path, {"kubernetes/gpu-operator/values.yaml": OPERATOR_VALUES})
    [release] = _releases(tmp_path)
    assert (release.chart, release.version, release.inferred) == ("gpu-operator", None, True)
    assert "chart gpu-operator inferred from its path and keys" in release.owner


def test_path_names_are_whole_words_and_registry_names_count(tmp_path: Path) -> None:
    assert inferred._named_charts("infra/tf/values/gpu-operator-values.yaml") == ["gpu-operator"]
    assert inferred._named_charts("monitoring/values-kube-prometheus.yaml") == ["kube-prometheus-stack"]
    assert inferred._named_charts("deploy/nvidia_device_plugin/values.yaml") == ["nvidia-device-plugin"]
    # ROCm's plugin lives in a repository named k8s-device-plugin too: no NVIDIA chart named.
    assert inferred._named_charts("amd/k8s-device-plugin/values.yaml") == []
    assert inferred._named_charts("apps/my-gpu-operators/values.yaml") == []  # no whole word
    assert inferred._named_charts("apps/hami-dra/values.yaml") == ["hami-dra-driver"]  # the longer name wins


def test_keys_decide_between_the_charts_a_path_names(tmp_path: Path) -> None:
    # A path naming HAMi and the NVIDIA plugin: the plugin's keys pick it.
    write_tree(tmp_path, {"hami/nvidia-device-plugin-values.yaml": PLUGIN_VALUES})
    assert [release.chart for release in _releases(tmp_path)] == ["nvidia-device-plugin"]


def test_generic_keys_alone_do_not_tell_the_chart_and_the_note_says_why(tmp_path: Path) -> None:
    write_tree(tmp_path, {"nvidia-device-plugin/values.yaml": "nodeSelector: {a: b}\ntolerations: []\nfoo: 1\n"})
    assert _releases(tmp_path) == []
    [note] = [note for note in lint(load_paths([str(tmp_path)])).notes if note.file]
    assert note.message.startswith("not checked: its path names chart nvidia-device-plugin, but its top-level keys")
    assert "2 of 3 are the chart's keys, 0 of them distinctive" in note.message


def test_a_wrapper_charts_values_below_the_charts_key_are_not_inferred(tmp_path: Path) -> None:
    write_tree(tmp_path, {"values/gpu-operator.yaml": "gpu-operator:\n  driver:\n    enabled: false\n"})
    assert _releases(tmp_path) == []
    [note] = [note for note in lint(load_paths([str(tmp_path)])).notes if note.file]
    assert "its values sit below `gpu-operator`, as those of a chart that depends on gpu-operator" in note.message


def test_a_path_that_names_no_chart_keeps_the_plain_note(tmp_path: Path) -> None:
    write_tree(tmp_path, {"helm/values.yaml": OPERATOR_VALUES})
    assert _releases(tmp_path) == []
    assert [note.message for note in lint(load_paths([str(tmp_path)])).notes if note.file] == [NOT_CHECKED]


def test_a_chart_folders_values_and_a_mapped_file_are_not_inferred_again(tmp_path: Path) -> None:
    write_tree(tmp_path, {
        "gpu-operator/Chart.yaml": "apiVersion: v2\nname: gpu-operator\nversion: v25.3.4\n",
        "gpu-operator/values.yaml": OPERATOR_VALUES,
    })
    [release] = _releases(tmp_path)
    assert (release.inferred, release.version) == (False, "v25.3.4")
    mapped = write_tree(tmp_path / "mapped", {"gpu-operator/values.yaml": OPERATOR_VALUES})
    report = lint(load_paths([str(mapped)]), Config(values_of="gpu-operator@v25.3.4"))
    assert {finding.rule for finding in report.findings} >= {"GS031"}
    assert all("inferred" not in finding.message for finding in report.findings)


def test_an_inferred_files_findings_are_warnings_at_most_and_say_the_version_was_not_known(tmp_path: Path) -> None:
    write_tree(tmp_path, {
        "gpu-operator/values.yaml": OPERATOR_VALUES,
        "nvidia-device-plugin/values.yaml": PLUGIN_VALUES,  # two device plugins: GS009, an error where named
    })
    report = lint(load_paths([str(tmp_path)]))
    by_rule = {finding.rule: finding for finding in report.findings}
    assert by_rule["GS009"].severity == Severity.WARNING
    unread = [f for f in report.findings if f.rule == "GS031"]
    assert {f.message.split("`")[1] for f in unread} == {"driver.useOpenKmods", "nodeSelector"}
    assert all(f.severity == Severity.WARNING and "no version pinned" in f.message for f in unread)


def test_a_chart_an_object_releases_is_not_inferred_for_a_file_it_does_not_take(tmp_path: Path) -> None:
    release = (
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: gpu-operator, namespace: gpu-operator}\n"
        "spec:\n  chart:\n    spec: {chart: gpu-operator, version: v25.3.4, sourceRef: {kind: HelmRepository, name: nvidia}}\n"
        "  values:\n    driver: {enabled: false}\n"
    )
    write_tree(tmp_path, {"apps/gpu-operator/release.yaml": release, "apps/gpu-operator/values.yaml": OPERATOR_VALUES})
    assert [r.inferred for r in _releases(tmp_path)] == [False]
    [note] = [note for note in lint(load_paths([str(tmp_path)])).notes if note.file]
    assert note.message.startswith("not checked: its path and keys tell chart gpu-operator, but the set's release of it")
    assert "HelmRelease gpu-operator/gpu-operator" in note.message


def test_a_release_by_the_published_name_counts_for_the_key_data_of_its_source_name() -> None:
    assert inferred.data_names("nvidia-dra-driver-gpu") == ("dra-driver-nvidia-gpu",)
    assert inferred.data_names("gpu-operator") == ("gpu-operator",)
    assert inferred.data_names("app-template") == ("app-template",)  # no key data: its own name
