"""The lint's side: what the rules that claim a pod never runs say of each workload.

A scenario is linted as a user would lint it: its spec written to a file and named as the
context (``--spec``), its workloads as one manifest stream, through the real loader and engine.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from gpustack.lint.engine import lint
from gpustack.lint.input.load import load_text
from gpustack.lint.policy.config import Config
from tests.differential.scenarios import Scenario

# The rules whose finding says the pod stays Pending for good, with the scheduler's words
# for it (what its filter plugins report per node: NodeAffinity, TaintToleration, NodeResourcesFit).
SELECTOR = "didn't match Pod's node affinity/selector"
TAINT = "untolerated taint"
INSUFFICIENT = "Insufficient"
UNALLOCATABLE = "cannot allocate all claims"  # the DynamicResources filter
CEL_ERROR = "CEL runtime error"  # the same filter, on a selector that fails on a device (no such key)
SPEC_FILE = "gpustack.yaml"
PENDING_RULES = {
    "GS001": (SELECTOR,),  # a PCI class 0300 selector
    "GS024": (INSUFFICIENT,),  # a MIG profile no pool advertises
    "GS026": (SELECTOR,),  # a selector no pool matches
    "GS027": (INSUFFICIENT,),  # more than one node offers
    "GS028": (TAINT,),  # the taints of every pool untolerated
    "GS030": (CEL_ERROR, UNALLOCATABLE),  # a claim's selector reads a name the driver does not publish
    "GS032": (SELECTOR,),  # an NFD PCI label the stack's NFD never sets
    "GS063": (UNALLOCATABLE,),  # a claim of more whole GPUs than a node has, or of a product no pool has
}
# The rule whose finding says a Deployment's rollout never completes.
ROLLOUT_RULE = "GS005"
CLAIMS = {*PENDING_RULES, ROLLOUT_RULE}


def verdicts(scenario: Scenario, folder: Path) -> dict[str, set[str]]:
    """Workload name → the CLAIMS rules that fire on it (errors of the run fail)."""
    folder.mkdir(parents=True, exist_ok=True)
    spec = folder / SPEC_FILE
    spec.write_text(yaml.safe_dump(scenario.spec, sort_keys=False))
    text = yaml.safe_dump_all([*scenario.claims, *scenario.workloads], sort_keys=False)
    loaded = load_text(f"{scenario.name}.yaml", text)
    assert not loaded.errors, loaded.errors
    report = lint(loaded, Config(spec=spec), jobs=1)
    assert not report.errors, report.errors
    found: dict[str, set[str]] = {workload["metadata"]["name"]: set() for workload in scenario.workloads}
    users = _claim_users(scenario)
    for finding in report.findings:
        if finding.rule in CLAIMS and finding.object is not None:
            for name in users.get((finding.object.kind, finding.object.name), {finding.object.name} & found.keys()):
                found[name].add(finding.rule)
    return found


def _claim_users(scenario: Scenario) -> dict[tuple[str, str], set[str]]:
    """(ResourceClaim or ResourceClaimTemplate, name) → the pods that name it: a finding on a
    claim is a verdict on each of them."""
    users: dict[tuple[str, str], set[str]] = {}
    for workload in scenario.workloads:
        for reference in workload["spec"].get("resourceClaims", []) if workload["kind"] == "Pod" else []:
            for field, kind in (("resourceClaimName", "ResourceClaim"), ("resourceClaimTemplateName", "ResourceClaimTemplate")):
                if field in reference:
                    users.setdefault((kind, reference[field]), set()).add(workload["metadata"]["name"])
    return users
