"""GS007: ``NVIDIA_VISIBLE_DEVICES`` set by hand in a workload.

Under the nvidia runtime this variable decides which GPUs the hook injects. The device plugin
sets it to the UUIDs the scheduler allocated (seed 001 §6); a manifest that sets ``all`` or
device ids exposes GPUs that other pods were given, and a pod without a GPU request gets
GPUs the scheduler never counted. ``void`` and ``none`` hide GPUs and are fine; GPU system
components that must see every GPU are exempt.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.lint.context import LintContext
from gpustack.lint.gpu import VISIBLE_DEVICES, visible_devices
from gpustack.lint.model import Hit, PodSpec
from gpustack.lint.podspec import subject
from gpustack.lint.registry import Rule

FIX = (
    f"Remove {VISIBLE_DEVICES} from the env and request GPUs through resources (or a claim); "
    "the device plugin sets it to the allocated GPUs."
)


def check(pod: PodSpec, ctx: LintContext) -> Iterator[Hit]:
    if pod.system_component:
        return
    for container in pod.containers():
        var = visible_devices(container)
        if var is None:
            continue
        yield Hit(
            pod.resource,
            var.value_path,
            f"{subject(pod, container)} sets {VISIBLE_DEVICES}={var.value}: the nvidia runtime "
            "exposes these GPUs whatever the scheduler allocated",
            fix=FIX,
        )


RULE = Rule("GS007", "pod", check)
