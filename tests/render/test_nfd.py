"""Node Feature Discovery: one NFD, labels for 0300 and 0302 classes, relabel interval from the spec."""

from __future__ import annotations

from render_helpers import release


def test_values(render_spec):
    rendered, _ = render_spec(nfd={"sleepInterval": "300s"})
    values = release(rendered, "node-feature-discovery")
    assert values["worker"]["config"]["core"] == {"sleepInterval": "300s"}
    assert values["master"]["config"]["extraLabelNs"] == ["nvidia.com"]
    assert "tolerations" not in values["worker"]


def test_disabled_nfd_says_how_nodes_get_labelled(render_spec):
    rendered, _ = render_spec(nfd={"enabled": False})
    assert "node-feature-discovery" not in {r.name for r in rendered.releases}
    assert any("nvidia.com/gpu.present=true" in note for note in rendered.notes["nfd"])
    # Still no second NFD from the device plugin chart.
    assert release(rendered, "nvidia-device-plugin")["nfd"] == {"enabled": False}


def test_nfd_runs_at_node_critical_priority_through_the_key_its_version_has(render_spec):
    """As the GPU Operator's bundled NFD: one top-level key from chart 0.16 (never the worker's
    as well, which 0.16+ would write twice), the worker's before."""
    values = release(render_spec()[0], "node-feature-discovery")
    assert values["priorityClassName"] == "system-node-critical"
    assert "priorityClassName" not in values["worker"]
    old = release(render_spec(nfd={"version": "0.15.7"})[0], "node-feature-discovery")
    assert "priorityClassName" not in old and old["worker"]["priorityClassName"] == "system-node-critical"
