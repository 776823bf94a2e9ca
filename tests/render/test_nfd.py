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
