"""Targets: a root's pod specs and objects grouped by kind once, for the rules that visit them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gpustack.lint.model import PodSpec, Resource
from gpustack.lint.registry import Deferred, Rule


class Targets:
    """Pod specs and objects grouped by kind once per run, in input order: a rule for
    Deployments visits Deployments only, instead of asking every object its kind."""

    def __init__(self, pods: Sequence[PodSpec], resources: Sequence[Resource]) -> None:
        self.pods = pods
        self.resources = resources
        self.pods_by_kind: dict[str | None, list[PodSpec]] = {}
        self.resources_by_kind: dict[str | None, list[Resource]] = {}
        for pod in self.pods:
            self.pods_by_kind.setdefault(pod.resource.kind, []).append(pod)
        for resource in self.resources:
            self.resources_by_kind.setdefault(resource.kind, []).append(resource)

    def of(self, rule: Rule) -> Sequence[PodSpec] | Sequence[Resource]:
        pods = rule.scope == "pod"
        everything = self.pods if pods else self.resources
        if not rule.kinds:
            return everything
        if len(rule.kinds) == 1:
            by_kind: Mapping[str | None, Sequence[Any]] = self.pods_by_kind if pods else self.resources_by_kind
            return by_kind.get(next(iter(rule.kinds)), ())
        return [target for target in everything if rule.applies_to(_kind_of(target))]

    def woken(self, rules: Sequence[Rule | Deferred]) -> list[Rule]:
        """The rules that may find something here: an object or set rule with kinds (deferred or
        not) finds nothing where no object of them is, unless it checks chart values too; a
        deferred one is imported where it may."""
        kinds = self.resources_by_kind.keys()
        return [
            rule.load() if isinstance(rule, Deferred) else rule
            for rule in rules
            if not rule.kinds or rule.scope == "pod" or rule.values is not None or not kinds.isdisjoint(rule.kinds)
        ]


def _kind_of(target: PodSpec | Resource) -> str | None:
    return target.resource.kind if isinstance(target, PodSpec) else target.kind
