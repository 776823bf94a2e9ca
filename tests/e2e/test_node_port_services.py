"""GS058 against the real charts: for HAMi (before and after ``service.type`` became a value) and
dcgm-exporter, the real ``helm template`` renders a NodePort or LoadBalancer Service exactly where
gpustack reports the release's values, and gpustack reports exactly those Services in the
rendered output (HAMi's scheduler Service selects its leader by a label set at run time)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from real_charts import charts_dir, find_helm, objects

from gpustack.lint.engine import lint
from gpustack.lint.input.load import load_text
from gpustack.lint.policy.config import Config

CLUSTER_IP = {"scheduler": {"service": {"type": "ClusterIP"}}, "devicePlugin": {"service": {"type": "ClusterIP"}}}
# chart, version, values
CASES = [
    ("hami", "2.5.3", {}),
    ("hami", "2.5.3", CLUSTER_IP),  # 2.5 writes NodePort into its templates
    ("hami", "2.6.1", CLUSTER_IP),
    ("hami", "2.10.0", {}),
    ("hami", "2.10.0", {"devicePlugin": {"service": {"type": "ClusterIP"}}}),
    ("hami", "2.10.0", CLUSTER_IP),
    ("hami", "2.9.0", {"dra": {"enabled": True}}),
    ("dcgm-exporter", "4.8.2", {}),
    ("dcgm-exporter", "4.8.2", {"service": {"type": "NodePort"}}),
    ("dcgm-exporter", "4.8.2", {"service": {"type": "LoadBalancer"}}),
]


def _template(chart: str, version: str, values: dict[str, Any], tmp_path: Path) -> str:
    values_file = tmp_path / "values.yaml"
    values_file.write_text(yaml.safe_dump(values), "utf-8")
    done = subprocess.run(
        [find_helm(), "template", "gpu", str(charts_dir() / f"{chart}-{version}.tgz"), "-n", "gpu", "-f", str(values_file)],
        capture_output=True, text=True, check=True,
    )
    return done.stdout


def _findings(name: str, text: str) -> list[str]:
    report = lint(load_text(name, text), Config())
    return [f.object.name or "" if f.object else "" for f in report.findings if f.rule == "GS058"]


@pytest.mark.parametrize(("chart", "version", "values"), CASES, ids=[f"{c}-{v}-{sorted(x)}" for c, v, x in CASES])
def test_gpustack_reports_what_helm_publishes(chart: str, version: str, values: dict[str, Any], tmp_path: Path) -> None:
    rendered = _template(chart, version, values, tmp_path)
    published = sorted(
        o["metadata"]["name"] for o in objects(rendered)
        if o["kind"] == "Service" and o["spec"].get("type") in ("NodePort", "LoadBalancer")
    )
    assert sorted(_findings("rendered.yaml", rendered)) == published

    release = {
        "apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease", "metadata": {"name": "gpu", "namespace": "gpu"},
        "spec": {"chart": {"spec": {"chart": chart, "version": version, "sourceRef": {"kind": "HelmRepository", "name": "r"}}},
                 "values": values},
    }
    assert bool(_findings("release.yaml", yaml.safe_dump(release))) == bool(published)
