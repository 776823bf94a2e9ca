"""GS051: a chart value given as a map where the chart wants a list.

Charts copy list values whole into their manifests (``toYaml .Values.extraEnv`` under a
container's ``env:``, ``range`` over ``tolerations``). Given a map instead (``extraEnv:
{NVIDIA_VISIBLE_DEVICES: all}``, the env-as-map shape app-template accepts), the chart renders a
mapping where Kubernetes wants a list (``tolerations``), or entries beside the list that are no
field of the object (dcgm-exporter's env: unknown container fields, tests/e2e/test_list_values.py):
Helm's schema validation rejects the manifest, and with it off the setting is lost. Which keys want a list comes from the
charts themselves (``chartkeys``: the default in values.yaml is a list, the templates take it
whole, no template tests its kind), per version.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from gpustack.lint.charts import chartversions
from gpustack.lint.context import LintContext
from gpustack.lint.model import Hit, Severity, get_value
from gpustack.lint.registry import Rule


def check(ctx: LintContext) -> Iterator[Hit]:
    for release, resolution, keys in chartversions.checked_releases(ctx):
        for path in keys.list_keys():
            value = get_value(release.values, *path)
            if not isinstance(value, Mapping) or not value:
                continue
            resource, where = release.where(*path)
            note = f" ({resolution.note})" if resolution.note else ""
            yield Hit(
                resource,
                where,
                f"{release.owner}: `{'.'.join(path)}` is a map, but chart {release.chart} {keys.version} wants a list "
                "(its values.yaml default is one and its templates copy it whole into the manifest): the chart renders "
                "a mapping where Kubernetes expects a list (or entries beside it that are no field of the object): Helm's "
                "schema validation rejects the release, and without it the setting is lost" + note,
                severity=None if resolution.certain else Severity.WARNING,
                fix="Write it as a list, as the chart's values.yaml shows (env: `- name: NAME` / `value: VALUE` items).",
            )


RULE = Rule("GS051", "set", check)
