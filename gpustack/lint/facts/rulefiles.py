"""Which documents hold Prometheus rules: PrometheusRule objects, and Prometheus's own rule
files (``rule_files:`` of its config,
https://prometheus.io/docs/prometheus/latest/configuration/recording_rules/): a document of
``groups:`` alone, each group with ``rules``. Apart from ``promql``, which parses what they
hold, so that telling a file's shape (``unread``) imports no PromQL code.
"""

from __future__ import annotations

from gpustack.lint.model import Resource

RULE_GROUP_KIND = "PrometheusRule"
# What the rules on PromQL read: PrometheusRules, and rule files (no kind).
RULE_KINDS: frozenset[str | None] = frozenset({RULE_GROUP_KIND, None})


def is_rule_file(resource: Resource) -> bool:
    """A Prometheus rule file: no kind, ``groups`` its only key, each group with a ``rules`` list."""
    groups = resource.data.get("groups")
    return (
        resource.kind is None
        and resource.data.keys() == {"groups"}
        and isinstance(groups, list)
        and bool(groups)
        and all(isinstance(group, dict) and isinstance(group.get("rules"), list) for group in groups)
    )
