"""Which chart a Flux HelmRelease installs through ``spec.chartRef``: the OCIRepository's URL
and ref, or the HelmChart's chart and version; a note, never silence, when it cannot be told."""

from __future__ import annotations

import json

import pytest
from lint_support import gpustack, write

from gpustack.lint.context import LintContext
from gpustack.lint.input.load import load_text
from gpustack.lint.releases import dispatch
from gpustack.lint.releases.release import HelmChartRelease

RELEASE = """\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: plugin, namespace: kube-system}
spec:
  chartRef: {kind: OCIRepository, name: plugin-chart}
"""


def _release(text: str) -> HelmChartRelease:
    resources = load_text("hr.yaml", text).resources
    [release] = dispatch.releases(LintContext(resources=resources, pod_specs=()))
    return release


def _oci(ref: str, namespace: str = "") -> str:
    metadata = f"{{name: plugin-chart{', namespace: ' + namespace if namespace else ''}}}"
    return (
        f"---\napiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\nmetadata: {metadata}\n"
        f"spec:\n  url: oci://ghcr.io/home-operations/charts-mirror/nvidia-device-plugin\n  ref: {ref}\n"
    )


@pytest.mark.parametrize(
    ("ref", "version", "note"),
    [
        ("{tag: 0.17.4}", "0.17.4", None),
        ("{semver: '>=0.17.0', tag: 0.16.0}", ">=0.17.0", None),  # Flux: semver wins over tag
        ("{tag: 0.17.4, digest: 'sha256:ab'}", "0.17.4", None),  # the tag names the digest's artifact
        ("{digest: 'sha256:ab'}", None, "pins a digest only"),
        ("{}", None, "no tag"),
    ],
)
def test_oci_repository_gives_chart_name_and_raw_version(ref: str, version: str | None, note: str | None) -> None:
    release = _release(RELEASE + _oci(ref))
    assert (release.chart, release.version) == ("nvidia-device-plugin", version)
    assert (note in release.note) if note else release.note is None


def test_a_source_in_another_namespace_is_not_the_one_named() -> None:
    release = _release(RELEASE + _oci("{tag: 0.17.4}", namespace="flux-system"))
    assert (release.chart, release.version) == ("plugin-chart", None)  # the source's name, said in a note
    assert "is not among the linted files: taken to install chart plugin-chart" in (release.note or "")


def test_a_source_named_after_its_release_and_not_linted_leaves_the_chart_unknown() -> None:
    release = _release(RELEASE.replace("{kind: OCIRepository, name: plugin-chart}", "{kind: OCIRepository, name: plugin}"))
    assert (release.chart, release.version) == ("", None)
    assert "named after the release, is not among the linted files, so its chart is unknown" in (release.note or "")


def test_helm_chart_source_gives_chart_and_version() -> None:
    text = RELEASE.replace("OCIRepository", "HelmChart") + (
        "---\napiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmChart\nmetadata: {name: plugin-chart}\n"
        "spec: {chart: hami, version: 2.6.x, sourceRef: {kind: HelmRepository, name: hami-charts}}\n"
    )
    release = _release(text)
    assert (release.chart, release.version, release.repo, release.note) == ("hami", "2.6.x", "hami-charts", None)


def test_a_release_whose_source_is_missing_is_named_in_a_note(capsys: pytest.CaptureFixture[str], tmp_path) -> None:  # type: ignore[no-untyped-def]
    file = write(str(tmp_path / "hr.yaml"), RELEASE)
    code, out, _ = gpustack(capsys, "lint", "--format", "json", file)
    [note] = json.loads(out)["notes"]
    assert code == 0
    assert note["line"] == 5
    assert note["message"].startswith("HelmRelease kube-system/plugin: its chartRef OCIRepository kube-system/plugin-chart")


VALUES_FROM = """\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: plugin, namespace: flux-system}
spec:
  chart: {spec: {chart: nvidia-device-plugin, version: 0.20.0, sourceRef: {kind: HelmRepository, name: nvidia}}}
  valuesFrom:
    - {kind: ConfigMap, name: first}
    - {kind: ConfigMap, name: second, valuesKey: custom.yaml}
    - {kind: Secret, name: hidden}
  values: {migStrategy: mixed}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: first, namespace: flux-system}
data:
  values.yaml: |
    migStrategy: none
    runtimeClassName: nvidia
    gfd: {enabled: false}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: second, namespace: flux-system}
data:
  custom.yaml: |
    gfd: {enabled: true}
"""


def test_values_from_config_maps_merge_in_order_below_the_inline_values() -> None:
    """helm-controller merges valuesFrom in order, then spec.values over them; a Secret is not read."""
    release = _release(VALUES_FROM)
    assert release.values == {"migStrategy": "mixed", "runtimeClassName": "nvidia", "gfd": {"enabled": True}}
    resource, path = release.where("runtimeClassName")
    assert (resource.kind, resource.ref.name, path) == ("ConfigMap", "first", ("data", "values.yaml", "runtimeClassName"))
    assert release.where("migStrategy")[0].kind == "HelmRelease"
