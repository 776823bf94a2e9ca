"""GS008: vLLM's ``--gpu-memory-utilization`` set low under a HAMi memory limit.

HAMi virtualises VRAM: a container limited to ``nvidia.com/gpumem: 8000`` sees an 8000 MiB
GPU. vLLM's ratio applies to what it sees, so 0.28 meant as "28% of the 23034 MiB L4" gives
0.28 × 8000 = 2240 MiB, less than the model, and the pod crash-loops.
With a spec the card's memory V is known: fire when u ≤ M / V, i.e. when u × V
fits inside the limit M, so u was presumably computed against the card (0.28 ≤ 8000 / 23034).
Without a spec V is unknown: fire when the ratio is below 0.5, the range where it was almost
surely computed against the whole card.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from fractions import Fraction

from gpustack.lint.context import LintContext
from gpustack.lint.facts.podspec import command_parts, subject
from gpustack.lint.facts.quantities import HAMI_MEMORY, gpu_amounts
from gpustack.lint.facts.scheduling import reachable_pools
from gpustack.lint.model import Container, Hit, Path, PodSpec
from gpustack.lint.registry import Rule

THRESHOLD = 0.5
_FLAG = r"--gpu[-_]memory[-_]utilization"
_INLINE = re.compile(_FLAG + r"""(?:=|\s+)["']?([0-9]*\.?[0-9]+)""")
_ALONE = re.compile(r"^\s*" + _FLAG + r"\s*$")
FIX = (
    "Raise --gpu-memory-utilization (e.g. 0.8–0.9): HAMi already caps the container's memory, "
    "and the ratio applies to that cap, not to the card."
)


def memory_utilization(container: Container) -> Iterator[tuple[Path, float]]:
    """Each ``--gpu-memory-utilization`` value in command/args, also inside ``sh -c`` strings."""
    parts = list(command_parts(container))
    for index, (path, text) in enumerate(parts):
        for match in _INLINE.finditer(text):
            yield path, float(match.group(1))
        if _ALONE.match(text) and index + 1 < len(parts):
            value_path, value = parts[index + 1]
            try:
                yield value_path, float(value.strip("\"' "))
            except ValueError:
                continue


def _memory_limit(container: Container) -> tuple[str, Fraction] | None:
    amounts = gpu_amounts(container)
    return next(((name, amounts[name]) for name in HAMI_MEMORY if name in amounts), None)


def check(pod: PodSpec, ctx: LintContext) -> Iterator[Hit]:
    if pod.system_component:
        return
    for container in pod.containers():
        limit = _memory_limit(container)
        if limit is None:
            continue
        name, amount = limit
        meant_for_the_card = _meant_for_the_card(pod, ctx, name, amount)
        for path, ratio in memory_utilization(container):
            if not meant_for_the_card(ratio):
                continue
            if name == "nvidia.com/gpumem":
                seen = f"the virtual {amount} MiB: {float(ratio * amount):.0f} MiB"
            else:
                seen = f"the {amount}% of the card HAMi allows"
            yield Hit(
                pod.resource,
                path,
                f"{subject(pod, container)} runs with --gpu-memory-utilization {ratio} under HAMi's "
                f"{name} limit: vLLM takes {ratio} of {seen}, not {ratio} of the card",
                fix=FIX,
            )


def _meant_for_the_card(pod: PodSpec, ctx: LintContext, name: str, amount: Fraction) -> Callable[[float], bool]:
    """Whether a ratio reads as computed against the whole card: u ≤ M / V with a spec (V the
    largest card among the pools the pod can reach: the benefit of the doubt), else u < 0.5."""
    pools = reachable_pools(pod, ctx.cluster) if ctx.cluster is not None else ()
    if not pools:
        return lambda ratio: ratio < THRESHOLD
    if name == "nvidia.com/gpumem":
        limit = float(amount / max(pool.gpu.memory_mib for pool in pools))
    else:  # nvidia.com/gpumem-percentage
        limit = float(amount / 100)
    return lambda ratio: ratio <= limit


RULE = Rule("GS008", "pod", check)
