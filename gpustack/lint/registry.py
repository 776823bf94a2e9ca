"""The rule contract. Each module in ``gpustack.lint.rules`` defines ``RULE = Rule(...)``;
``gpustack.lint.rules.RULES`` lists them explicitly, and a test proves it matches ``policies/``.

Scopes (the engine iterates, rules never search for their targets):
- ``pod``: ``check(pod: PodSpec, ctx: LintContext) -> Iterable[Hit]``, once per pod spec found
  in any object (Pods, workload templates, CRDs with pod templates).
- ``object``: ``check(resource: Resource, ctx) -> Iterable[Hit]``, once per object whose kind
  is in ``kinds`` (every object when ``kinds`` is empty).
- ``set``: ``check(ctx) -> Iterable[Hit]``, once per root (``roots.py``), over its whole set.

Pod and object rules are file-local unless they say ``reads_set``: the engine runs them over
one file at a time, with a context that holds that file's objects only (``engine.py``), so
that their findings on a file depend on that file, the settings and at most one ``set_fact``
(plain data the rule computes over the whole set, once per root), and the lint cache can keep
them.
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
    kinds: frozenset[str | None] = frozenset()  # None: documents without a kind
    # ``values(ctx)``: also check the chart values of the set, once per run (``--partial``
    # too): a pod or object rule whose meaning extends to the Helm values that render such
    # objects (GS004: a device plugin release without runtimeClassName).
    values: Callable[..., Iterable[Hit]] | None = None
    # A pod or object rule whose check reads other objects of the set (``ctx.resources``,
    # ``ctx.pod_specs``, chart releases, an index over the set) beyond its ``set_fact``:
    # run over the whole set like a set rule, never one file at a time. A function of the
    # context says it for some settings only.
    reads_set: bool | Callable[[Any], bool] = False
    # What the check reads of the whole set, as plain data (it goes into the lint cache's
    # keys): ``set_fact(ctx)``, read in the check with ``ctx.set_fact(set_fact)``.
    set_fact: Callable[[Any], Any] | None = None

    def file_local(self, ctx: Any) -> bool:
        """Whether the check's hits on a file depend on that file alone, the settings of
        ``ctx`` and its ``set_fact``."""
        if self.scope == "set":
            return False
        return not (self.reads_set(ctx) if callable(self.reads_set) else self.reads_set)

    def applies_to(self, kind: Any) -> bool:
        return not self.kinds or kind in self.kinds
