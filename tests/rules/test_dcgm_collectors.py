"""GS064's evidence: what the set's DCGM exporters collect decides the severity, or silence."""

from __future__ import annotations

from gpustack.lint.facts.dcgm_collectors import csv_fields, default_collected

ALERT = """\
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata: { name: gpu, namespace: monitoring }
spec:
  groups:
    - name: gpu
      rules:
        - alert: GPUPowerThrottled
          expr: rate(DCGM_FI_DEV_POWER_VIOLATION[5m]) > 0
"""

EXPORTER_WITH_IMAGE_FILE = """\
---
apiVersion: apps/v1
kind: DaemonSet
metadata: { name: dcgm-exporter, namespace: monitoring }
spec:
  selector: { matchLabels: { app: dcgm-exporter } }
  template:
    metadata: { labels: { app: dcgm-exporter } }
    spec:
      containers:
        - name: exporter
          image: registry.example/gpu/dcgm-exporter:4.5.3-4.8.2-ubuntu22.04
          args: ["--collectors", "/opt/counters/all.csv"]
"""


def test_without_an_exporter_the_defaults_are_assumed_and_said(lint) -> None:  # type: ignore[no-untyped-def]
    (finding,) = [f for f in lint(ALERT) if f.rule == "GS064"]
    assert finding.severity == "info"
    assert "default counters (no exporter in the set)" in finding.message


def test_a_counters_file_baked_into_the_image_silences_it(lint) -> None:  # type: ignore[no-untyped-def]
    assert [f for f in lint(ALERT + EXPORTER_WITH_IMAGE_FILE) if f.rule == "GS064"] == []


def test_csv_fields_skip_comments_and_read_the_first_column() -> None:
    text = "# Format\n# DCGM_FI_DEV_POWER_VIOLATION, counter, x\nDCGM_FI_DEV_GPU_UTIL ,  gauge, GPU utilization (in %).\n\n"
    assert csv_fields(text) == {"DCGM_FI_DEV_GPU_UTIL"}


def test_the_defaults_leave_the_violation_and_ecc_counters_out() -> None:
    assert "DCGM_FI_DEV_GPU_UTIL" in default_collected()
    assert not {"DCGM_FI_DEV_POWER_VIOLATION", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "DCGM_FI_PROF_SM_ACTIVE"} & default_collected()
