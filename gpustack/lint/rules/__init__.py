"""The rule registry: every rule module, listed explicitly (sorted by id).

A test proves this dict and ``policies/GS*.yaml`` describe the same rules.
"""

from __future__ import annotations

from gpustack.lint.registry import Rule

RULES: dict[str, Rule] = {rule.id: rule for rule in ()}
