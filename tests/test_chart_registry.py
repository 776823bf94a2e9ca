"""The chart registry (specs/charts.yaml) agrees with the linter's chart data and the spec's
defaults, and the linter's chart facts come from it."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest

from gpustack import charts
from gpustack.lint.charts import chartkeys
from gpustack.lint.facts import registered
from gpustack.shipped import lint_data

REPO = Path(__file__).resolve().parents[1]
ROLES = {
    "device-plugin", "feature-discovery", "gpu-operator", "gpu-sharing", "dra-driver", "metrics-exporter",
    "monitoring-stack", "pod-network",
}
# Spec section (JSON Schema $defs) → the chart its `version` pins.
SPEC_VERSIONS = {
    "DevicePlugin": "nvidia-device-plugin",
    "GpuOperator": "gpu-operator",
    "Nfd": "node-feature-discovery",
    "DcgmExporter": "dcgm-exporter",
    "Monitoring": "kube-prometheus-stack",
    "Hami": "hami",
}


def key_data() -> dict[str, list[str]]:
    """Chart name → versions, of every chart the linter has key data for."""
    folder = resources.files("gpustack.lint").joinpath("data/chart-keys")
    data = [json.loads(entry.read_text(encoding="utf-8")) for entry in folder.iterdir() if entry.name.endswith(".json")]
    return {chart["chart"]: chart["versions"] for chart in data}


def by_any_name() -> dict[str, charts.Chart]:
    registry = charts.registry().values()
    return {name: chart for chart in registry for name in (chart.name, chart.source_name) if name}


def test_every_chart_with_key_data_is_in_the_registry():
    assert set(key_data()) <= set(by_any_name())


@pytest.mark.parametrize("name", sorted(key_data()))
def test_the_pinned_version_has_key_data(name):
    chart = by_any_name()[name]
    if chart.role == "dra-driver" and chart.source_name == name:
        # Key data of the source folder at its development version (tests/render/test_helm_keys.py).
        return
    assert chart.version.lstrip("v") in {version.lstrip("v") for version in key_data()[name]}


@pytest.mark.parametrize(("section", "name"), sorted(SPEC_VERSIONS.items()))
def test_the_spec_defaults_are_the_pinned_versions(section, name):
    schema = json.loads((REPO / "specs" / "gpustack.schema.json").read_text(encoding="utf-8"))
    assert schema["$defs"][section]["properties"]["version"]["default"] == charts.chart(name).version


def test_every_chart_has_a_known_role_and_an_installable_source():
    for chart in charts.registry().values():
        assert chart.role in ROLES, chart.name
        assert chart.repository.startswith("https://"), chart.name
        assert (chart.path is not None) == chart.repository.endswith(".git"), chart.name


def test_dra_drivers_agree_with_the_linters_driver_table():
    drivers = {chart.dra_driver for chart in charts.registry().values() if chart.role == "dra-driver"}
    assert drivers == set(lint_data("dra-drivers.yaml"))
    for name in charts.DRA_DRIVER_CHARTS.values():
        chart = charts.chart(name)
        assert chart.role == "dra-driver" and chart.dra_driver in chart.device_classes


def test_classes_that_hand_out_no_gpus_are_classes_the_chart_creates():
    for chart in charts.registry().values():
        assert set(chart.non_gpu_device_classes) <= set(chart.device_classes), chart.name


@pytest.mark.parametrize(
    ("chart", "bundled"),
    [(chart, bundled) for chart in charts.registry().values() for bundled in chart.bundles if bundled.values],
    ids=lambda item: getattr(item, "name", None) or getattr(item, "component", None),
)
def test_every_bundles_values_key_is_read_by_the_chart(chart, bundled):
    """The linter finds a bundled component's values under the bundle's key (GS014's exporter,
    GS032's NFD, GS021's GFD, …): the chart's templates read that key at every version gpustack
    has key data for."""
    name = chart.source_name or chart.name
    assert chartkeys.versions(name), f"no key data for {name}"
    for version in chartkeys.versions(name):
        keys = chartkeys.chart_keys(name, version)
        assert keys is not None and keys.reads((bundled.values,)), f"{name} {version} reads no {bundled.values}"


LINTER_ROLES = ("device-plugin", "feature-discovery", "gpu-operator", "gpu-sharing", "metrics-exporter", "monitoring-stack")


@pytest.mark.parametrize("role", LINTER_ROLES)
def test_the_roles_the_linter_names_a_chart_by_have_one_chart(role):
    assert registered.chart_of_role(role) in charts.registry()


def test_the_linters_chart_facts_come_from_the_registry():
    assert registered.plugin_vendors() == {"nvidia-device-plugin": "nvidia", "gpu-operator": "nvidia", "hami": "hami"}
    assert set(registered.gpu_dra_drivers()) == {"gpu.nvidia.com", "hami-core-gpu.project-hami.io"}
    assert "compute-domain-daemon.nvidia.com" in registered.non_gpu_device_classes()
    assert not registered.gpu_device_classes() & registered.non_gpu_device_classes()
    # Releases name NVIDIA's DRA driver chart as NGC publishes it, or as its source folder.
    assert {"nvidia-dra-driver-gpu", "dra-driver-nvidia-gpu"} <= registered.names_of_roles("dra-driver")


def test_crds_says_which_packaged_charts_ship_a_crds_folder():
    """`crds` (Flux's upgrade.crds: CreateReplace) agrees with the real chart at its pinned version."""
    import tarfile

    from tests.cluster.deploy import CHARTS

    checked = 0
    for chart in charts.registry().values():
        packaged = CHARTS / f"{chart.name}-{chart.version.removeprefix('v')}.tgz"
        if not packaged.is_file():
            packaged = CHARTS / f"{chart.name}-{chart.version}.tgz"
        if not packaged.is_file():
            continue
        with tarfile.open(packaged) as archive:
            ships = any("/crds/" in name and name.endswith((".yaml", ".yml")) for name in archive.getnames())
        assert chart.crds == ships, chart.name
        checked += 1
    if not checked:
        pytest.skip(f"no packaged chart in {CHARTS}")
