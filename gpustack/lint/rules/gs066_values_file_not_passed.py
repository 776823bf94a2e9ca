"""GS066: a values file written for a chart the set releases, which that release does not take.

A file whose path and keys tell its chart (``releases/inferred``: ``values/nvidia-device-plugin.yaml``
with the chart's distinctive keys) while the set's release of that chart lists other values, or
none: its settings never reach the chart (a helmfile's environment values, a Zarf or Fleet entry
without ``valuesFiles``). Info: a script or pipeline the set does not hold may pass the file, or
it may be a copy kept on purpose.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.lint.context import LintContext
from gpustack.lint.model import Hit, resources_by_file
from gpustack.lint.registry import Rule
from gpustack.lint.releases import dispatch, inferred
from gpustack.lint.unread import untaken


def check(ctx: LintContext) -> Iterator[Hit]:
    declared, files = untaken(resources_by_file(ctx.resources), dispatch.releases(ctx))
    for file, resources in files:
        if file in ctx.values_files:
            continue
        found = inferred.untaken_release(file, resources, declared)
        if found is None:
            continue
        chart, owner = found
        yield Hit(
            resources[0],
            (),
            f"values file {file} is written for chart {chart} (its path and keys), but the set's release of it "
            f"({owner}) does not take it: its settings never reach the chart (assumed: nothing outside the set "
            "passes it)",
            fix=f"List the file in the release's values ({owner}), or remove it if it is a copy.",
        )


# Values files have no kind: a set that holds no document without one has none to judge.
RULE = Rule("GS066", "set", check, frozenset({None}))
