"""gpustack's chart key data against the upstream values files, and charts read at run time.

The data files are made by ``python -m gpustack.lint.chartkeys``; ``GENERATED`` records the
arguments of each, so that a failing comparison prints the command that regenerates it.
"""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest
import yaml

from gpustack.lint import chartkeys
from gpustack.lint.config import Config
from gpustack.lint.engine import lint
from gpustack.lint.load import load_text

DATA = Path(chartkeys.__file__).parent / "data" / "chart-keys"
UPSTREAM = "shared/reference/chart-values"
# data file → (values.yaml, Chart.yaml, extra arguments) under ../shared/reference/chart-values
GENERATED: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "node-feature-discovery@0.19.0.yaml": (
        "kubernetes-sigs__node-feature-discovery__deployment__helm__node-feature-discovery__values@v0.19.0.yaml",
        "kubernetes-sigs__node-feature-discovery__deployment__helm__node-feature-discovery__Chart@v0.19.0.yaml",
        ("--version", "0.19.0"),
    ),
    "nvidia-device-plugin@0.20.0.yaml": (
        "NVIDIA__k8s-device-plugin__deployments__helm__nvidia-device-plugin__values.yaml",
        "NVIDIA__k8s-device-plugin__deployments__helm__nvidia-device-plugin__Chart.yaml",
        ("--subchart", "nfd=node-feature-discovery@0.19.0", "--read", "devicePlugin.enableHostNetwork",
         "--read", "gfd.enableHostNetwork", "--read", "mps.enableHostNetwork"),
    ),
    "gpu-operator@v26.7.0.yaml": (
        "NVIDIA__gpu-operator__deployments__gpu-operator__values@v26.7.0.yaml",
        "NVIDIA__gpu-operator__deployments__gpu-operator__Chart@v26.7.0.yaml",
        ("--version", "v26.7.0", "--subchart", "node-feature-discovery=node-feature-discovery@0.19.0",
         *(arg for key in ("hostPaths.kubeletRootDir", "dcgmExporter.config.name", "dcgmExporter.config.create",
                           "dcgmExporter.config.data", "dcgmExporter.hpcJobMapping",
                           "dcgmExporter.podLabelAllowlistRegex") for arg in ("--read", key))),
    ),
    "dcgm-exporter@4.8.2.yaml": (
        "NVIDIA__dcgm-exporter__deployment__values.yaml",
        "NVIDIA__dcgm-exporter__deployment__Chart.yaml",
        ("--read", "customMetrics"),
    ),
    "hami@2.10.0.yaml": (
        "Project-HAMi__HAMi__charts__hami__values.yaml",
        "Project-HAMi__HAMi__charts__hami__Chart.yaml",
        ("--read", "scheduler.nodeLabelSelector", "--read", "scheduler.serviceAccountName"),
    ),
    "kube-prometheus-stack@88.5.3.yaml": (
        "prometheus-community__helm-charts__charts__kube-prometheus-stack__values.yaml",
        "prometheus-community__helm-charts__charts__kube-prometheus-stack__Chart.yaml",
        (),
    ),
    "dra-driver-nvidia-gpu@0.5.0-dev.yaml": (
        "NVIDIA__k8s-dra-driver-gpu__deployments__helm__dra-driver-nvidia-gpu__values.yaml",
        "",
        ("--name", "dra-driver-nvidia-gpu", "--version", "0.5.0-dev"),
    ),
}


def _generated(name: str, reference: Path, capsys: pytest.CaptureFixture[str]) -> dict:
    values, chart, extra = GENERATED[name]
    argv = [str(reference / values), *(["--chart-yaml", str(reference / chart)] if chart else []), *extra]
    assert chartkeys.main(argv) == 0
    return yaml.safe_load(capsys.readouterr().out)


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_data_matches_the_upstream_values(name: str, shared: Path, capsys: pytest.CaptureFixture[str]) -> None:
    reference = shared / "reference" / "chart-values"
    committed = yaml.safe_load((DATA / name).read_text())
    fresh = _generated(name, reference, capsys)
    values, chart, extra = GENERATED[name]
    command = f"python -m gpustack.lint.chartkeys {UPSTREAM}/{values} --chart-yaml {UPSTREAM}/{chart} {' '.join(extra)}"
    assert committed["keys"] == fresh["keys"], f"stale: regenerate {name} with `{command}`"
    assert (committed["chart"], str(committed["version"])) == (fresh["chart"], str(fresh["version"]))


def test_every_data_file_is_checked() -> None:
    on_disk = {p.name for p in DATA.glob("*@*.yaml")}
    # hami-dra-driver's values.yaml is not among the shared references (Project-HAMi/k8s-dra-driver).
    assert on_disk - set(GENERATED) == {"hami-dra-driver@0.1.0.yaml"}


def test_lookup_and_hint_find_the_renamed_hami_key() -> None:
    keys = chartkeys.chart_keys("hami", "2.10.0")
    assert keys is not None
    assert keys.lookup(("scheduler", "kubeScheduler", "imageTag")) == 2
    assert keys.lookup(("scheduler", "kubeScheduler", "image", "tag")) is None
    assert keys.lookup(("devicePlugin", "nvidiaNodeSelector", "nvidia.com/gpu.present")) is None  # free-form
    assert chartkeys.chart_keys("hami", "2.10.3") is None  # exact only: see chartversions
    assert chartkeys.chart_keys("gpu-operator", "26.7.0") is chartkeys.chart_keys("gpu-operator", "v26.7.0")


def _tgz(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def test_chart_values_reads_a_packaged_chart_with_templates_and_subcharts(tmp_path: Path) -> None:
    sub = _tgz({"exporter/Chart.yaml": b"name: exporter\nversion: 1.0.0\n", "exporter/values.yaml": b"port: 9400\n"})
    chart = tmp_path / "gpu-stack-1.2.0.tgz"
    chart.write_bytes(
        _tgz(
            {
                "gpu-stack/Chart.yaml": b"name: gpu-stack\nversion: 1.2.0\ndependencies:\n"
                b"  - {name: exporter, alias: metrics, condition: metrics.enabled}\n",
                "gpu-stack/values.yaml": b"image:\n  tag: ''\n# extraFlags: []\n",
                "gpu-stack/templates/ds.yaml": b"args: {{ .Values.extraFlags | toJson }}\n",
                "gpu-stack/charts/exporter-1.0.0.tgz": sub,
            }
        )
    )
    keys = chartkeys.read_chart(chart)
    assert (keys.chart, keys.version) == ("gpu-stack", "1.2.0")
    assert keys.lookup(("extraFlags",)) is None  # read by a template
    assert keys.lookup(("metrics", "enabled")) is None  # a dependency condition
    assert keys.lookup(("metrics", "port")) is None  # the subchart's key under its alias
    assert keys.lookup(("metrics", "prot")) == 1
    manifest = """apiVersion: helm.cattle.io/v1
kind: HelmChart
metadata: {name: gpu-stack, namespace: kube-system}
spec:
  chart: gpu-stack
  version: 1.2.0
  valuesContent: |-
    image:
      tga: v1
"""
    report = lint(load_text("stack.yaml", manifest), Config(chart_values=(chart,)))
    [finding] = [f for f in report.findings if f.rule == "GS031"]
    assert (finding.line, finding.column) == (9, 7)
    assert finding.fix == "Did you mean `image.tag`?"


def test_chart_values_that_are_no_chart_are_a_usage_error(tmp_path: Path) -> None:
    from gpustack.errors import GpustackError

    with pytest.raises(GpustackError):
        lint(load_text("x.yaml", "a: 1\n"), Config(chart_values=(tmp_path / "missing.tgz",)))
