"""NVSwitch boards get NVLink error counters and Fabric Manager's state, collected and alerted on;
every GPU is held to its own slowdown temperature. How the alerts fire: tests/render/test_promtool.py."""

from __future__ import annotations

from render_helpers import release
from test_monitoring import csv_rows

from gpustack.render.components import nvswitch_monitoring

HGX_POOL = [{"name": "hgx", "gpu": {"model": "H100-80GB-SXM", "count": 8}}]
# Four SXM GPUs link directly: no NVSwitch, no Fabric Manager.
FOUR_SXM_POOL = [{"name": "quad", "gpu": {"model": "H100-80GB-SXM", "count": 4}}]
NVLINK_ROWS = [name for name, _ in nvswitch_monitoring.NVLINK_ERROR_FIELDS]


def rule_names(tree: dict[str, str]) -> set[str]:
    return {line.split(": ")[1] for text in tree.values() for line in text.splitlines() if "- alert: " in line}


def test_nvswitch_boards_collect_nvlink_errors_and_fabric_state_and_alert_on_them(render_spec):
    rendered, tree = render_spec(nodePools=HGX_POOL)
    rows = csv_rows(release(rendered, "dcgm-exporter")["customMetrics"])
    assert set(NVLINK_ROWS) <= set(rows) and nvswitch_monitoring.FABRIC_STATUS in rows
    assert {"GPUNvlinkErrors", "GPUFabricManagerDown"} <= rule_names(tree)


def test_gpus_on_no_nvswitch_board_collect_and_alert_on_none(render_spec):
    for pools in (None, FOUR_SXM_POOL):
        rendered, tree = render_spec(**({"nodePools": pools} if pools else {}))
        csv = release(rendered, "dcgm-exporter")["customMetrics"]
        assert not {*NVLINK_ROWS, nvswitch_monitoring.FABRIC_STATUS} & set(csv_rows(csv))
        assert "no pool is an NVSwitch board" in csv
        assert not {"GPUNvlinkErrors", "GPUFabricManagerDown"} & rule_names(tree)


def test_an_exporter_before_dcgm_4_gets_no_fabric_field_nor_its_alert(render_spec):
    # dcgm-exporter chart 3.6.1 runs DCGM 3.3.9, whose go-dcgm field table lacks the field: the
    # exporter would refuse the CSV.
    rendered, tree = render_spec(nodePools=HGX_POOL, monitoring={"dcgmExporter": {"version": "3.6.1"}})
    csv = release(rendered, "dcgm-exporter")["customMetrics"]
    assert nvswitch_monitoring.FABRIC_STATUS not in csv_rows(csv) and set(NVLINK_ROWS) <= set(csv_rows(csv))
    assert "older than 4" in csv
    assert "GPUFabricManagerDown" not in rule_names(tree) and "GPUNvlinkErrors" in rule_names(tree)


def test_every_stack_collects_the_slowdown_temperature_its_alert_compares_with(render_spec):
    rendered, tree = render_spec(monitoring={"alerts": {"temperatureMarginCelsius": 3}})
    assert "DCGM_FI_DEV_SLOWDOWN_TEMP" in csv_rows(release(rendered, "dcgm-exporter")["customMetrics"])
    [rule] = [text for path, text in tree.items() if path.endswith("monitoring.yaml")]
    assert "(DCGM_FI_DEV_SLOWDOWN_TEMP > 0) - 3)" in rule
