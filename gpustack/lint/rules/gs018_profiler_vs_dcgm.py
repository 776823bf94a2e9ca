"""GS018: a CUPTI profiler in a pod on nodes where DCGM Exporter reads profiling counters.

GPU performance counters open to one process at a time. DCGM Exporter holds them to collect
``DCGM_FI_PROF_*``, so Nsight Compute (``ncu``), Utilyze (``utlz``) and Nsight Systems' GPU
metrics sampling (``nsys … --gpu-metrics-device``) fail with
``NVPA_STATUS_RESOURCE_UNAVAILABLE`` until the exporter is taken off the node.
A plain ``nsys profile`` traces CUDA calls without the counters and is fine.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from gpustack.lint.context import LintContext
from gpustack.lint.facts.consumers import is_gpu_workload
from gpustack.lint.facts.podspec import command_parts, subject
from gpustack.lint.model import Container, Hit, Path, PodSpec
from gpustack.lint.registry import Rule

_BEFORE, _AFTER = r"(?:^|[\s;&|(`'\"/])", r"(?=$|[\s;&|)`'\"])"
_COUNTER_PROFILER = re.compile(_BEFORE + r"(ncu|nv-nsight-cu-cli|utlz)" + _AFTER)
_NSYS = re.compile(_BEFORE + r"nsys" + _AFTER)
_GPU_METRICS = re.compile(r"--gpu-metrics-devices?\b")
FIX = (
    "Run the profiler on a node without DCGM Exporter's profiling metrics (pause the exporter "
    "there, or drop DCGM_FI_PROF_* from its collectors), or use plain `nsys profile`."
)


def profilers(container: Container) -> Iterator[tuple[Path, str]]:
    """Each command/args string that runs a counter-based profiler, with the tool's name."""
    parts = list(command_parts(container))
    runs_nsys = any(_NSYS.search(text) for _, text in parts)
    for path, text in parts:
        if match := _COUNTER_PROFILER.search(text):
            yield path, match.group(1)
        elif runs_nsys and _GPU_METRICS.search(text):
            yield path, "nsys --gpu-metrics-device"


def check(pod: PodSpec, ctx: LintContext) -> Iterator[Hit]:
    if not is_gpu_workload(pod):
        return
    for container in pod.containers():
        for path, tool in profilers(container):
            yield Hit(
                pod.resource,
                path,
                f"{subject(pod, container)} runs {tool}, which needs the GPU performance counters "
                "that DCGM Exporter holds for DCGM_FI_PROF_* (NVPA_STATUS_RESOURCE_UNAVAILABLE)",
                fix=FIX,
            )


RULE = Rule("GS018", "pod", check)
