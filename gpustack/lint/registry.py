"""The rule contract. Each module in ``gpustack.lint.rules`` defines ``RULE = Rule(...)``;
``gpustack.lint.rules.RULES`` lists them explicitly, and a test proves it matches ``policies/``.

Scopes (the engine iterates, rules never search for their targets):
- ``pod``: ``check(pod: PodSpec, ctx: LintContext) -> Iterable[Hit]``, once per pod spec found
  in any object (Pods, workload templates, CRDs with pod templates).
- ``object``: ``check(resource: Resource, ctx) -> Iterable[Hit]``, once per object whose kind
  is in ``kinds`` (every object when ``kinds`` is empty).
- ``set``: ``check(ctx) -> Iterable[Hit]``, once per root (``roots.py``), over its whole set.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from gpustack.lint.model import Hit

Scope = Literal["pod", "object", "set"]


@dataclass(frozen=True)
class Rule:
    id: str
    scope: Scope
    check: Callable[..., Iterable[Hit]]
    kinds: frozenset[str] = frozenset()
    # ``values(ctx)``: also check the chart values of the set, once per run (``--partial``
    # too): a pod or object rule whose meaning extends to the Helm values that render such
    # objects (GS004: a device plugin release without runtimeClassName).
    values: Callable[..., Iterable[Hit]] | None = None

    def applies_to(self, kind: Any) -> bool:
        return not self.kinds or kind in self.kinds
