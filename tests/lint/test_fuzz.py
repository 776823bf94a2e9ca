"""Hypothesis: random text and random YAML-shaped data through the loader and every shipped
rule. Nothing raises, positions stay in range, and no rule fails with an internal error."""

from __future__ import annotations

import json
from typing import Any

from fuzz_support import scalars, yaml_like
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpustack.lint.engine import lint
from gpustack.lint.input.load import load_bytes, load_text

# Words the rules look for, so that random documents reach deep into their logic.
WORDS = [
    "apiVersion", "kind", "metadata", "name", "namespace", "annotations", "labels", "spec", "template",
    "containers", "initContainers", "image", "env", "value", "resources", "limits", "requests",
    "nvidia.com/gpu", "nvidia.com/gpumem", "securityContext", "privileged", "volumes", "hostPath", "path",
    "runtimeClassName", "nodeSelector", "resourceClaims", "strategy", "type", "args", "command",
    "Deployment", "Pod", "DaemonSet", "PrometheusRule", "ResourceClaim", "apps/v1", "v1", "groups", "rules",
    "expr", "NVIDIA_VISIBLE_DEVICES", "all", "/dev", "gpustack.io/ignore", "GS001", "on", "0", "-1", "1.5",
    "items", "List", "jobTemplate", "workerGroupSpecs", "s3://m", "--gpu-memory-utilization",
]  # fmt: skip
leaves = scalars(WORDS, text_size=12, nan=False)
data = yaml_like(WORDS, leaves, width=4, max_leaves=40)
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check(text: str) -> None:
    loaded = load_text("fuzz.yaml", text)
    report = lint(loaded)
    internal = [error for error in report.errors if error.message.startswith("internal error")]
    assert internal == []
    lines = text.count("\n") + 1
    for finding in report.findings:
        assert 1 <= finding.line <= lines
        assert finding.column >= 1


@FUZZ
@given(st.lists(st.sampled_from(list("ab:-[]{}&*!|>'\"#\n \t,?%@`") + WORDS), max_size=60))
def test_yaml_like_text(tokens: list[str]) -> None:
    check("".join(tokens))


@FUZZ
@given(st.binary(max_size=200))
def test_random_bytes(content: bytes) -> None:
    load_bytes("fuzz.yaml", content)


@FUZZ
@given(st.lists(data, min_size=1, max_size=3))
def test_random_documents(documents: list[Any]) -> None:
    check("---\n".join(json.dumps(document) + "\n" for document in documents))


@FUZZ
@given(st.lists(st.dictionaries(st.sampled_from(WORDS), data, max_size=6), min_size=1, max_size=3))
def test_random_objects_with_pod_templates(objects: list[dict[str, Any]]) -> None:
    workloads = [
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "w"},
         "spec": {"template": {"metadata": obj, "spec": {**obj, "containers": [obj, {"name": "c", **obj}]}}}}
        for obj in objects
    ]  # fmt: skip
    check("---\n".join(json.dumps(workload) + "\n" for workload in workloads))
