"""Lint verdicts against the scheduler's decisions, per workload and per rule.

For each workload, the PENDING_RULES that fired and what the scheduler did:

- ``confirmed``: a rule fired, the pod stays Pending, and the scheduler's reasons for the
  scenario's own nodes include the rule's (``verdicts.PENDING_RULES``), or every node failed
  a filter the scheduler runs before the one that would give the rule's reason (it reports
  each node's first failure: TaintToleration, then NodeAffinity, then NodeResourcesFit, the
  order of https://github.com/kubernetes/kubernetes/blob/master/pkg/scheduler/apis/config/v1/default_plugins.go);
- ``contradicted``: a rule fired and the pod was scheduled: a disagreement, unless
  (``hami-only``) it was scheduled on a pool HAMi serves and the finding says why HAMi
  refuses it there: HAMi gives each vGPU of a container its own card, a fit its own scheduler
  decides (https://github.com/Project-HAMi/HAMi, its webhook hands such pods to
  ``hami-scheduler``); kube-scheduler, all the harness runs, sees only GPUs × splitCount;
- ``other reason``: a rule fired, the pod stays Pending, but for none of the fired rules'
  reasons: a disagreement (the rule is right by luck);
- ``missed``: no rule fired, and the pod stays Pending for a reason that holds on an empty
  cluster (node labels, taints, or a request over every node's allocatable): a disagreement,
  unless the pod selects by a label the spec does not describe (``unjudged``: the selector
  rules leave those open by design, policies/GS026.yaml);
- ``contended``: no rule fired, and the pod waits for GPUs other pods of its scenario hold:
  no rule claims that, so it is no disagreement;
- ``scheduled``: no rule fired and the pod was scheduled.

A Deployment's rollout (GS005, ``rollouts.py``) is ``confirmed`` when GS005 fired and the
rollout got stuck, ``contradicted`` when it fired and the update completed (``hami-only``
where its pods ran on a HAMi pool, as above), ``missed`` when
it did not fire and the update got stuck, ``scheduled`` when neither; a Deployment whose
first rollout never completed without GS005 is ``never ran`` (the pod rules speak of it).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from gpustack.lint.facts.quantities import parse_quantity
from tests.differential.declared import DeclaredNode
from tests.differential.cluster import Observed
from tests.differential.rollouts import Rolled
from tests.differential.verdicts import (
    CEL_ERROR,
    CLAIMS,
    INSUFFICIENT,
    PENDING_RULES,
    ROLLOUT_RULE,
    SELECTOR,
    TAINT,
    UNALLOCATABLE,
)

DISAGREEMENTS = ("contradicted", "other reason", "missed")
# The scheduler's filters in the order it runs them: a node reports the first it fails.
FILTER_ORDER = (TAINT, SELECTOR, INSUFFICIENT, UNALLOCATABLE, CEL_ERROR)
# GS063 judges whether a node has the whole GPUs a DRA claim asks for; a claim it leaves open
# (MIG devices, a class and a request that both test the product, firstAvailable) that the
# scheduler cannot allocate is a coverage gap, listed in the table's last rule row, not a disagreement.
DRA_GAP = "DRA claims (no rule)"
# The rule a missed reason belongs to (MIG profiles: GS024; other resources: GS027).
MISSED_BY = {SELECTOR: "GS026", TAINT: "GS028", UNALLOCATABLE: DRA_GAP}


@dataclass(frozen=True)
class Outcome:
    scenario: int
    workload: str
    rules: frozenset[str]
    kind: str
    message: str
    rollout: bool = False  # a Deployment's rollout, not a pod's scheduling
    family: str = "s"  # the scenario's (tests/differential/scenarios.Scenario.family)

    @property
    def disagrees(self) -> bool:
        return self.kind in DISAGREEMENTS and not (self.kind == "missed" and self.blamed() == {DRA_GAP})

    def blamed(self) -> frozenset[str]:
        """The rules a disagreement counts against (the fired ones, or for a miss its reason's)."""
        if self.kind != "missed":
            return self.rules
        if self.rollout:
            return frozenset({ROLLOUT_RULE})
        reasons = _reason_texts(self.message)
        if any(UNALLOCATABLE in reason for reason in reasons):
            # Nodes the pod could use but for its DRA claim: the miss is the claim's, whatever
            # kept it off the other nodes (a taint of another pool, say)
            return frozenset({DRA_GAP})
        return frozenset(_missed_rule(reason) for reason in reasons)


def outcome(seed: int, workload: dict[str, Any], rules: set[str], observed: Observed,
            own: list[DeclaredNode], judged: Callable[[str], bool], hami: set[str], claim_fits: bool = False) -> Outcome:
    """``judged(key)``: whether the lint knows every node's value of label ``key``; ``hami``:
    the pools HAMi serves; ``claim_fits``: whether an empty node has the devices of the pod's
    DRA claim (then a claim not allocated waits on other pods)."""
    name = workload["metadata"]["name"]
    text = "; ".join(f"{count} {reason}" for reason, count in sorted(observed.reasons.items()))
    if rules and not observed.pending:
        pool = next(node.pool for node in own if node.name == observed.node)
        kind = "hami-only" if rules == {"GS027"} and pool in hami else "contradicted"
        return Outcome(seed, name, frozenset(rules), kind, f"scheduled on {observed.node}")
    if rules:
        said = any(_explains(word, observed.reasons) for rule in rules for word in PENDING_RULES[rule])
        return Outcome(seed, name, frozenset(rules), "confirmed" if said else "other reason", text)
    if not observed.pending:
        return Outcome(seed, name, frozenset(), "scheduled", "")
    static = all((INSUFFICIENT not in reason or _over_every_node(workload, reason, own))
                 and (UNALLOCATABLE not in reason or not claim_fits) for reason in observed.reasons)
    if not static:
        return Outcome(seed, name, frozenset(), "contended", text)
    unknown = any(SELECTOR in reason for reason in observed.reasons) and not all(map(judged, label_keys(workload)))
    return Outcome(seed, name, frozenset(), "unjudged" if unknown else "missed", text)


def rollout_outcome(seed: int, workload: dict[str, Any], rules: set[str], rolled: Rolled,
                    own: list[DeclaredNode], hami: set[str]) -> Outcome:
    """``hami``: the pools HAMi serves; an update that completed there is ``hami-only``."""
    name, fired = workload["metadata"]["name"], ROLLOUT_RULE in rules
    claimed = frozenset(rules & {ROLLOUT_RULE})
    if not rolled.first:
        return Outcome(seed, name, claimed, "confirmed" if fired else "never ran", rolled.state, True)
    if fired:
        on_hami = any(node.pool in hami for node in own if node.name in rolled.nodes)
        kind = ("hami-only" if on_hami else "contradicted") if rolled.update else "confirmed"
        return Outcome(seed, name, claimed, kind, rolled.state, True)
    return Outcome(seed, name, claimed, "scheduled" if rolled.update else "missed", rolled.state, True)


def _explains(word: str, reasons: Counter[str]) -> bool:
    """Whether the scheduler gave the reason ``word``, or every node failed an earlier filter."""
    if any(word in reason for reason in reasons):
        return True
    rank = FILTER_ORDER.index(word)
    return all(any(earlier in reason for earlier in FILTER_ORDER[:rank]) for reason in reasons)


def label_keys(workload: dict[str, Any]) -> set[str]:
    """The node label keys of the pod's nodeSelector and required node affinity."""
    spec = workload["spec"]
    required = spec.get("affinity", {}).get("nodeAffinity", {}).get("requiredDuringSchedulingIgnoredDuringExecution", {})
    terms = required.get("nodeSelectorTerms", [])
    return {*spec.get("nodeSelector", {}), *(e["key"] for t in terms for e in t.get("matchExpressions", []))}


def _over_every_node(workload: dict[str, Any], reason: str, own: list[DeclaredNode]) -> bool:
    """Whether the pod asks for more of the resource named in ``Insufficient <resource>`` than
    any node of the scenario has allocatable (then no other pod is to blame)."""
    resource = reason.split(INSUFFICIENT, 1)[1].strip()
    most = max((parse_quantity(node.allocatable.get(resource, "0")) or Fraction(0) for node in own), default=Fraction(0))
    return effective_request(workload["spec"], resource) > most


def effective_request(pod: Mapping[str, Any], resource: str) -> Fraction:
    """Kubernetes' effective request: the regular containers' sum, or the largest init container."""
    def of(container: Mapping[str, Any]) -> Fraction:
        resources = container.get("resources", {})
        value = resources.get("limits", {}).get(resource, resources.get("requests", {}).get(resource, 0))
        return parse_quantity(str(value)) or Fraction(0)

    regular = sum((of(c) for c in pod["containers"]), Fraction(0))
    return max([regular, *(of(c) for c in pod.get("initContainers", []))])


def _reason_texts(message: str) -> list[str]:
    return [part.split(" ", 1)[1] for part in message.split("; ") if " " in part]


def _missed_rule(reason: str) -> str:
    for word, rule in MISSED_BY.items():
        if word in reason:
            return rule
    return "GS024" if "nvidia.com/mig-" in reason else "GS027"


def table(outcomes: list[Outcome]) -> list[dict[str, Any]]:
    """Per rule: findings, confirmed, and each kind of disagreement; then a row for all."""
    rows = []
    for rule in sorted(CLAIMS):
        fired = [o for o in outcomes if rule in o.rules]
        kinds = Counter(o.kind for o in fired)
        missed = sum(1 for o in outcomes if o.kind == "missed" and rule in o.blamed())
        rows.append({"rule": rule, "findings": len(fired), "confirmed": kinds["confirmed"],
                     "hami-only": kinds["hami-only"], "contradicted": kinds["contradicted"],
                     "other reason": kinds["other reason"], "missed": missed})
    rows.append({"rule": DRA_GAP, "findings": 0, "confirmed": 0, "hami-only": 0, "contradicted": 0, "other reason": 0,
                 "missed": sum(1 for o in outcomes if o.kind == "missed" and DRA_GAP in o.blamed())})
    kinds = Counter(o.kind for o in outcomes)
    rows.append({"rule": "all", "findings": sum(1 for o in outcomes if o.rules), "confirmed": kinds["confirmed"],
                 "contradicted": kinds["contradicted"], "other reason": kinds["other reason"],
                 "missed": kinds["missed"], "scheduled": kinds["scheduled"], "contended": kinds["contended"],
                 "unjudged": kinds["unjudged"], "hami-only": kinds["hami-only"], "never ran": kinds["never ran"],
                 "workloads": len(outcomes)})
    return rows


def markdown(rows: list[dict[str, Any]]) -> str:
    columns = ("rule", "findings", "confirmed", "hami-only", "contradicted", "other reason", "missed")
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(str(row[c]) for c in columns) + " |" for row in rows]
    return "\n".join(lines)
