"""One host step of the stack README, and the wording the steps share (pool lists, taints, sentences).

A ``Step`` is a numbered heading: on which nodes, the commands of its ``bash`` block, then what
to check or know. ``host_steps`` puts the steps in order; ``kubernetes_steps`` and ``host_steps``
build them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from gpustack.spec.models import GpuStack
from gpustack.spec.models.cluster import NodePool, SystemPool, Taint

Pool = NodePool | SystemPool


@dataclass(frozen=True)
class Step:
    """One numbered host step: on which nodes, the commands, then what to check or know."""

    title: str
    where: str
    commands: tuple[str, ...] = ()
    after: str = ""


def all_pools(stack: GpuStack) -> list[Pool]:
    return [*stack.spec.nodePools, *stack.spec.systemPools]


def pool_list(pools: Iterable[Pool]) -> str:
    names = [f"`{p.name}`" for p in pools]
    return ("pool " if len(names) == 1 else "pools ") + ", ".join(names)


def sentences(*sentences: str) -> str:
    return " ".join(s for s in sentences if s)


def taint_text(taint: Taint) -> str:
    key = taint.key if taint.value is None else f"{taint.key}={taint.value}"
    return f"{key}:{taint.effect}"


def step_markdown(heading: str, step: Step) -> list[str]:
    """One step as the README writes it: its ``###`` heading, where, the bash block, what follows."""
    lines = ["", f"### {heading}", "", f"{step.where}{':' if step.commands else '.'}"]
    if step.commands:
        lines += ["", "```bash", *step.commands, "```"]
    if step.after:
        lines += ["", step.after]
    return lines
