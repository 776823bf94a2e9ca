"""GS036's evidence: a warning where a workload of the set asks for two or more GPUs, info
where none does (the flag guards requests the set does not make yet)."""

from __future__ import annotations

CONFIG = """\
apiVersion: v1
kind: ConfigMap
metadata: { name: time-slicing, namespace: kube-system }
data:
  any: |
    version: v1
    sharing:
      timeSlicing:
        resources:
          - name: nvidia.com/gpu
            replicas: 4
"""

WORKLOAD = """\
---
apiVersion: apps/v1
kind: Deployment
metadata: { name: vllm, namespace: ml }
spec:
  selector: { matchLabels: { app: vllm } }
  template:
    metadata: { labels: { app: vllm } }
    spec:
      runtimeClassName: nvidia
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.0
          args: ["--tensor-parallel-size", "GPUS"]
          resources:
            limits: { nvidia.com/gpu: GPUS }
"""


def _gs036(lint, text: str) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    return [(f.severity, f.message) for f in lint(text) if f.rule == "GS036"]


def test_a_two_gpu_workload_makes_it_a_warning(lint) -> None:  # type: ignore[no-untyped-def]
    ((severity, message),) = _gs036(lint, CONFIG + WORKLOAD.replace("GPUS", "2"))
    assert severity == "warning" and "Deployment ml/vllm asks for more than one" in message


def test_without_a_multi_gpu_workload_it_is_info_and_says_so(lint) -> None:  # type: ignore[no-untyped-def]
    for text in (CONFIG, CONFIG + WORKLOAD.replace("GPUS", "1")):
        ((severity, message),) = _gs036(lint, text)
        assert severity == "info" and "no workload of the set asks for more than one yet" in message
