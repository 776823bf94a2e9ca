"""The rule contract. Each module in ``gpustack.lint.rules`` defines ``RULE = Rule(...)``;
``gpustack.lint.rules.MODULES`` lists them explicitly, and a test proves it matches ``policies/``.

Scopes (the engine iterates, rules never search for their targets):
- ``pod``: ``check(pod: PodSpec, ctx: LintContext) -> Iterable[Hit]``, once per pod spec found
  in any object (Pods, workload templates, CRDs with pod templates).
- ``object``: ``check(resource: Resource, ctx) -> Iterable[Hit]``, once per object whose kind
  is in ``kinds`` (every object when ``kinds`` is empty).
- ``set``: ``check(ctx) -> Iterable[Hit]``, once per root (``roots.py``), over its whole set;
  with ``kinds``, only for a set that holds an object of one of them (the rule finds nothing
  in another).

Pod and object rules are file-local unless they say ``reads_set``: the engine runs them over
one file at a time, with a context that holds that file's objects only (``engine.py``), so
that their findings on a file depend on that file, the settings and at most one ``set_fact``
(plain data the rule computes over the whole set, once per root), and the lint cache can keep
them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib import import_module
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


@dataclass(frozen=True)
class Deferred:
    """A rule whose module is not imported yet: an object rule of ``kinds`` or a set rule with
    ``kinds`` (``Rule``'s contract: it finds nothing where its targets hold no object of them)
    that reads nothing else before it runs (no ``values``, ``reads_set`` or ``set_fact``). The
    engine imports it only where the targets hold such an object (``load``), so that a run pays
    for the rules its input can wake: most of a one-file lint is importing. ``rules/__init__.py``
    lists which; a test compares each with its module's ``RULE``."""

    id: str
    scope: Scope
    kinds: frozenset[str | None]
    module: str  # dotted, ``gpustack.lint.rules.gs012_orphan_resource_claim``
    values: None = None
    set_fact: None = None

    def file_local(self, ctx: Any) -> bool:
        return self.scope != "set"

    def load(self) -> Rule:
        return rule_of(self.module)


def rule_of(module: str) -> Rule:
    """The ``RULE`` of a rule module (its dotted name), the module imported."""
    rule: Rule = import_module(module).RULE
    return rule
