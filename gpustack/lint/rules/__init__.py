"""The rule registry: every rule module, listed explicitly (sorted by id).

A test proves this dict and ``policies/GS*.yaml`` describe the same rules.
"""

from __future__ import annotations

from gpustack.lint.registry import Rule
from gpustack.lint.rules import gs009_duplicate_gpu_device_plugins
from gpustack.lint.rules import gs010_hami_node_label
from gpustack.lint.rules import gs012_orphan_resource_claim
from gpustack.lint.rules import gs014_prometheusrule_not_selected
from gpustack.lint.rules import gs015_xid_alert_coverage
from gpustack.lint.rules import gs017_gpu_vector_match_without_node

RULES: dict[str, Rule] = {
    rule.id: rule
    for rule in (
        gs009_duplicate_gpu_device_plugins.RULE,
        gs010_hami_node_label.RULE,
        gs012_orphan_resource_claim.RULE,
        gs014_prometheusrule_not_selected.RULE,
        gs015_xid_alert_coverage.RULE,
        gs017_gpu_vector_match_without_node.RULE,
    )
}
