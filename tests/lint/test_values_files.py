"""Values files outside GitOps objects: Helm chart folders kept in Git (an umbrella chart's
``Chart.yaml`` and ``values.yaml``), plain ``helm -f`` files named with ``--chart``, and the
note for every file of no Kubernetes objects that nothing reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpustack.cli import main
from gpustack.lint.context import LintContext
from gpustack.lint.engine import lint
from gpustack.lint.releases import dispatch
from gpustack.lint.releases.release import HelmChartRelease
from gpustack.lint.unread import NOT_CHECKED

from lint_support import load_paths, write_tree

UMBRELLA_CHART = """\
apiVersion: v2
name: gpu-platform
version: 1.0.0
dependencies:
  - name: nvidia-device-plugin
    alias: plugin
    version: 0.17.1
    repository: https://nvidia.github.io/k8s-device-plugin
  - name: gpu-operator
    version: v25.3.0
    repository: https://helm.ngc.nvidia.com/nvidia
    condition: operator.enabled
  - name: dcgm-exporter
    version: 4.1.1
    repository: https://nvidia.github.io/dcgm-exporter/helm-charts
    tags: [monitoring]
"""
UMBRELLA_VALUES = """\
global:
  imagePullSecrets: [regcred]
plugin:
  runtimeClassName: nvidia
  gfd:
    sleepIntervall: 60s
operator:
  enabled: false
tags:
  monitoring: true
"""
# The device plugin chart's values read by no template: GS031 names the typo.
PLAIN_VALUES = "runtimeClassName: nvidia\ngfd:\n  enabled: true\n  sleepIntervall: 60s\n"


def _context(folder: Path) -> LintContext:
    return LintContext(resources=load_paths([str(folder)]).resources, pod_specs=())


def _releases(folder: Path) -> dict[str, HelmChartRelease]:
    return {release.chart: release for release in dispatch.releases(_context(folder))}


def test_an_umbrella_charts_dependencies_are_releases_with_their_block_of_values(tmp_path: Path) -> None:
    write_tree(tmp_path, {"Chart.yaml": UMBRELLA_CHART, "values.yaml": UMBRELLA_VALUES})
    releases = _releases(tmp_path)
    # The umbrella itself, the aliased plugin, and dcgm-exporter (its tag is on); the operator's
    # condition is false: Helm does not install it.
    assert sorted(releases) == ["dcgm-exporter", "gpu-platform", "nvidia-device-plugin"]
    plugin = releases["nvidia-device-plugin"]
    assert plugin.version == "0.17.1" and plugin.release == "plugin"
    assert plugin.values == {
        "global": {"imagePullSecrets": ["regcred"]},
        "runtimeClassName": "nvidia",
        "gfd": {"sleepIntervall": "60s"},
    }
    assert releases["dcgm-exporter"].values == {"global": {"imagePullSecrets": ["regcred"]}}


def test_a_finding_on_a_dependencys_values_points_into_the_umbrellas_values_file(tmp_path: Path) -> None:
    write_tree(tmp_path, {"Chart.yaml": UMBRELLA_CHART, "values.yaml": UMBRELLA_VALUES})
    report = lint(load_paths([str(tmp_path)]))
    [finding] = [f for f in report.findings if f.rule == "GS031"]
    assert (Path(finding.file).name, finding.line) == ("values.yaml", 6)
    assert not [note for note in report.notes if note.message == NOT_CHECKED]


def test_a_dependency_turned_off_by_its_tags_is_no_release(tmp_path: Path) -> None:
    values = UMBRELLA_VALUES.replace("monitoring: true", "monitoring: false")
    write_tree(tmp_path, {"Chart.yaml": UMBRELLA_CHART, "values.yaml": values})
    assert "dcgm-exporter" not in _releases(tmp_path)


def test_an_unpacked_subchart_is_the_lowest_layer_of_its_parents_dependency(tmp_path: Path) -> None:
    sub_chart = "apiVersion: v2\nname: nvidia-device-plugin\nversion: 0.17.1\n"
    sub_values = "runtimeClassName: ''\nnodeSelector: {gpu: 'yes'}\n"
    write_tree(tmp_path, {
        "Chart.yaml": UMBRELLA_CHART,
        "values.yaml": UMBRELLA_VALUES,
        "charts/nvidia-device-plugin/Chart.yaml": sub_chart,
        "charts/nvidia-device-plugin/values.yaml": sub_values,
    })
    releases = [r for r in dispatch.releases(_context(tmp_path)) if r.chart == "nvidia-device-plugin"]
    [plugin] = releases  # not installed on its own: only as the parent's dependency
    assert plugin.values["runtimeClassName"] == "nvidia"  # the parent's block over the subchart's file
    assert plugin.values["nodeSelector"] == {"gpu": "yes"}


def test_a_wrapper_chart_is_no_release_of_the_chart_it_wraps(tmp_path: Path) -> None:
    """A chart folder named like the chart it depends on wraps it: only the dependency is a
    release, at the version the dependency pins, with the block under its name as values."""
    write_tree(tmp_path, {
        "Chart.yaml": (
            "apiVersion: v2\nname: gpu-operator\nversion: 1.0.0\ndependencies:\n"
            "  - name: gpu-operator\n    version: v25.3.4\n    condition: gpu-operator.enabled\n"
        ),
        "values.yaml": "gpu-operator:\n  enabled: true\n  devicePlugin:\n    enabled: false\n",
    })
    [release] = dispatch.releases(_context(tmp_path))
    assert (release.chart, release.version, release.release) == ("gpu-operator", "v25.3.4", "gpu-operator")
    assert release.values == {"enabled": True, "devicePlugin": {"enabled": False}}
    resource, _ = release.where("devicePlugin", "enabled")
    assert Path(resource.file).name == "values.yaml"
    assert release.owner == f"dependency gpu-operator of {tmp_path / 'Chart.yaml'}"
    # The condition key is Helm's, not a template's.
    [layer] = release.layers
    assert layer.helm_reads == {("enabled",)}


def test_a_wrapper_whose_dependency_is_off_installs_nothing_and_its_values_are_read(tmp_path: Path) -> None:
    write_tree(tmp_path, {
        "Chart.yaml": "apiVersion: v2\nname: hami\nversion: 1.0.0\ndependencies:\n  - name: hami\n    condition: hami.enabled\n",
        "values.yaml": "hami:\n  enabled: false\n",
    })
    assert _releases(tmp_path) == {}
    report = lint(load_paths([str(tmp_path)]))
    assert not [note for note in report.notes if note.message == NOT_CHECKED]


def test_a_condition_reads_the_unpacked_subcharts_own_default(tmp_path: Path) -> None:
    """Helm tells a condition from the parent's values over its subcharts' under their keys."""
    chart = "apiVersion: v2\nname: stack\nversion: 1.0.0\ndependencies:\n  - name: hami\n    condition: hami.enabled\n"
    sub = {"charts/hami/Chart.yaml": "apiVersion: v2\nname: hami\nversion: 2.10.0\n", "charts/hami/values.yaml": "enabled: false\n"}
    write_tree(tmp_path, {"Chart.yaml": chart, "values.yaml": "global: {}\n", **sub})
    assert "hami" not in _releases(tmp_path)
    write_tree(tmp_path, {"values.yaml": "hami:\n  enabled: true\n"})
    assert "hami" in _releases(tmp_path)


def test_a_vendored_chart_folder_is_a_release_of_that_chart_at_its_version(tmp_path: Path) -> None:
    write_tree(tmp_path, {
        "gpu-operator/Chart.yaml": "apiVersion: v2\nname: gpu-operator\nversion: v25.3.0\n",
        "gpu-operator/values.yaml": "driver:\n  enabled: true\n",
    })
    release = _releases(tmp_path)["gpu-operator"]
    assert (release.version, release.values) == ("v25.3.0", {"driver": {"enabled": True}})


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(["lint", "--no-cache", *args])
    captured = capsys.readouterr()
    return exit_info.value.code or 0, captured.out, captured.err


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict]:
    code, out, _ = _cli(capsys, "-f", "json", *args)
    return code, json.loads(out)


def test_a_plain_values_file_is_a_note_saying_how_to_check_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_tree(tmp_path, {"plugin-values.yaml": PLAIN_VALUES})
    code, report = _json(capsys, str(tmp_path))
    assert code == 0 and report["findings"] == []
    [note] = [n for n in report["notes"] if (n["file"] or "").endswith("plugin-values.yaml")]
    assert note["message"] == NOT_CHECKED and "--chart" in note["message"]


def test_chart_option_checks_plain_values_files_as_that_charts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_tree(tmp_path, {"plugin-values.yaml": PLAIN_VALUES, "pod.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n"})
    code, report = _json(capsys, "--chart", "nvidia-device-plugin@0.17.1", str(tmp_path))
    assert code == 1
    [finding] = report["findings"]
    assert (finding["rule"], Path(finding["file"]).name, finding["line"]) == ("GS031", "plugin-values.yaml", 4)
    assert not [n for n in report["notes"] if n["message"] == NOT_CHECKED]


@pytest.mark.parametrize("bad", ["", "@0.17.1", "nvidia-device-plugin@", "two words"])
def test_a_malformed_chart_option_is_a_usage_error(bad: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_tree(tmp_path, {"values.yaml": PLAIN_VALUES})
    code, _, err = _cli(capsys, "--chart", bad, str(tmp_path))
    assert code == 2 and "--chart" in err


def test_shapes_rules_read_are_no_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_tree(tmp_path, {
        # talhelper's talconfig.yaml, a Talos machine-config patch, a K3s config, a kustomization
        "talconfig.yaml": "clusterName: home\nnodes: [{hostname: gpu-1, ipAddress: 10.0.0.5}]\n",
        "gpu-patch.yaml": "machine:\n  kernel:\n    modules: [{name: nvidia}]\n",
        "config.yaml": "kubelet-arg: [feature-gates=DynamicResourceAllocation=true]\n",
        "kustomization.yaml": "resources: [ns.yaml]\n",
        "ns.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: gpu}\n",
        # Talos Image Factory's schematic (https://factory.talos.dev: customization.systemExtensions), read
        # by GS035 for the NVIDIA extensions
        "schematic.yaml": "customization:\n  systemExtensions:\n    officialExtensions: [siderolabs/nvidia-container-toolkit-production]\n",
    })
    _, report = _json(capsys, str(tmp_path))
    notes = {Path(n["file"]).name: n["message"] for n in report["notes"] if n["file"]}
    assert notes == {}
