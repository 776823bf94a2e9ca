"""Prometheus's and Alertmanager's storage as kube-prometheus-stack turns the values into their
custom resources, checked against the chart's own CRDs (what the operator then reads)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from real_charts import CrdSchemas, Helm, objects
from render_helpers import render_file, write_spec

pytestmark = pytest.mark.e2e


def storage_resources(helm_binary: str, tmp_path: Path, **monitoring: Any) -> dict[str, dict[str, Any]]:
    """The Prometheus and Alertmanager resources, by kind, valid against the chart's CRDs."""
    rendered, _ = render_file(Path(write_spec(tmp_path, monitoring=monitoring)))
    [release] = [r for r in rendered.releases if r.chart == "kube-prometheus-stack"]
    docs = objects(Helm(helm_binary, rendered.ctx.stack.spec.cluster.minor).template(release, release.values, tmp_path, crds=True))
    schemas = CrdSchemas()
    schemas.add(docs)
    found = {doc["kind"]: doc for doc in docs if doc["kind"] in ("Prometheus", "Alertmanager")}
    for doc in found.values():
        assert not list(schemas.problems(doc)), doc["kind"]
    return found


def test_claims_by_default_with_a_size_bound_below_the_volume(helm_binary: str, tmp_path: Path):
    found = storage_resources(helm_binary, tmp_path)
    prometheus = found["Prometheus"]["spec"]
    assert prometheus["retentionSize"] == "40GB"
    assert prometheus["storage"]["volumeClaimTemplate"]["spec"]["resources"]["requests"]["storage"] == "50Gi"
    assert "volumeClaimTemplate" in found["Alertmanager"]["spec"]["storage"]


def test_without_persistence_bounded_emptydirs(helm_binary: str, tmp_path: Path):
    found = storage_resources(helm_binary, tmp_path, persistence=False, prometheusStorage="20Gi")
    assert found["Prometheus"]["spec"]["storage"] == {"emptyDir": {"sizeLimit": "20Gi"}}
    assert found["Prometheus"]["spec"]["retentionSize"] == "16GB"
    assert found["Alertmanager"]["spec"]["storage"] == {"emptyDir": {"sizeLimit": "2Gi"}}
