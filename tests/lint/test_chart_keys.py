"""gpustack's chart key data: fresh against the packaged charts, right on the keys that matter,
and charts read at run time.

The data files are made by ``python -m gpustack.lint.charts.generate_keys`` from ../shared/reference/charts
(every packaged version) and Cilium's chart from the Go module proxy (tests/cluster/cilium.py); the
DRA driver of NVIDIA from its values.yaml alone (no package).
"""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from gpustack.lint.charts import chartfiles, chartkeys, generate_keys
from gpustack.lint.charts.chartkeys import ABSENT, DECLARED, PASSTHROUGH, READ
from gpustack.lint.engine import lint
from gpustack.lint.input.load import load_text
from gpustack.lint.policy.config import Config
from tests.cluster import cilium
from tests.cluster.deploy import Unavailable
from tests.cluster.support import unavailable

DATA = Path(chartkeys.__file__).parents[1] / "data" / "chart-keys"
VALUES_ONLY = {
    "dra-driver-nvidia-gpu": (
        "chart-values/NVIDIA__k8s-dra-driver-gpu__deployments__helm__dra-driver-nvidia-gpu__values.yaml",
        "0.5.0-dev",
    ),
}


def _cilium() -> Path:
    """Cilium's chart (the pod network's, specs/charts.yaml), packaged from the Go module proxy."""
    try:
        return cilium.chart()
    except Unavailable as missing:
        unavailable(str(missing))
        raise


def test_data_is_fresh_from_the_packaged_charts(shared: Path) -> None:
    packages = [*sorted((shared / "reference" / "charts").glob("*.tgz")), _cilium()]
    generated = generate_keys.generate(packages)
    for name, (values, version) in VALUES_ONLY.items():
        generated[name] = generate_keys.generate_values_only(shared / "reference" / values, name, version)
    command = ("python -m gpustack.lint.charts.generate_keys ../shared/reference/charts/*.tgz "
               f"{cilium.cache_root()}/cilium-*.tgz --out gpustack/lint/data/chart-keys")
    assert {p.stem for p in DATA.glob("*.json")} == set(generated), f"regenerate with `{command}`"
    for name, data in generated.items():
        assert (DATA / f"{name}.json").read_text() == generate_keys.dump(data), f"{name} is stale: `{command}`"


def _state(chart: str, version: str, key: str) -> str:
    keys = chartkeys.chart_keys(chart, version)
    assert keys is not None
    state, _ = keys.state(tuple(key.split(".")))
    return state


@pytest.mark.parametrize(
    ("chart", "version", "key", "state"),
    [
        # read by a template, shown only in a comment of values.yaml (or not at all)
        ("kube-prometheus-stack", "88.5.3", "alertmanager.alertmanagerSpec.configSecret", READ),
        ("kube-prometheus-stack", "45.31.1", "alertmanager.alertmanagerSpec.configSecret", READ),
        ("kube-prometheus-stack", "88.5.3", "kubeScheduler.service.selector", PASSTHROUGH),
        ("kube-prometheus-stack", "88.5.3", "kubeEtcd.service.selector", PASSTHROUGH),
        ("gpu-operator", "v26.7.0", "validator.driver.env", PASSTHROUGH),
        ("gpu-operator", "v23.9.2", "validator.driver.env", PASSTHROUGH),
        # declared under gfd, read at the top level (0.15.0 on); a subchart of its own in 0.14.5
        ("nvidia-device-plugin", "0.20.0", "gfd.sleepInterval", DECLARED),
        ("nvidia-device-plugin", "0.15.1", "gfd.noTimestamp", DECLARED),
        ("nvidia-device-plugin", "0.20.0", "sleepInterval", READ),
        ("nvidia-device-plugin", "0.14.5", "gfd.sleepInterval", READ),
        ("nvidia-device-plugin", "0.14.5", "sleepInterval", ABSENT),
        # the subchart's keys under its alias, its condition read
        ("nvidia-device-plugin", "0.20.0", "nfd.worker.config", PASSTHROUGH),  # toYaml into nfd-worker.conf
        ("nvidia-device-plugin", "0.20.0", "nfd.enabled", READ),
        # HAMi's rename in 2.7
        ("hami", "2.6.1", "scheduler.kubeScheduler.imageTag", READ),
        ("hami", "2.10.0", "scheduler.kubeScheduler.imageTag", ABSENT),
        ("hami", "2.10.0", "scheduler.kubeScheduler.image.tag", READ),
        ("hami", "2.10.0", "devicePlugin.nvidiaNodeSelector.any-label", PASSTHROUGH),
    ],
)
def test_key_states(chart: str, version: str, key: str, state: str) -> None:
    assert _state(chart, version, key) == state


def test_every_packaged_version_has_data(shared: Path) -> None:
    for package in (shared / "reference" / "charts").glob("*.tgz"):
        chart, version = package.stem.rsplit("-", 1)
        assert chartkeys.chart_keys(chart, version) is not None, package.name


def test_the_data_stays_small() -> None:
    """Every version of every chart in well under a megabyte (measured: about 385 kB, value kinds included)."""
    assert sum(p.stat().st_size for p in DATA.glob("*.json")) < 400_000


def test_versions_reading_names_where_a_key_lives() -> None:
    keys = chartkeys.chart_keys("hami", "2.10.0")
    assert keys is not None
    assert keys.versions_reading(("scheduler", "kubeScheduler", "imageTag")) == ["2.5.3", "2.6.1"]


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
                "gpu-stack/templates/ds.yaml": b"args: {{ .Values.extraFlags | toJson }}\n"
                b"image: {{ .Values.image.tag }}\n",
                "gpu-stack/charts/exporter-1.0.0.tgz": sub,
            }
        )
    )
    keys = chartfiles.read_chart(chart)
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
