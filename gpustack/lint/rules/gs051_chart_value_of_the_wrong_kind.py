"""GS051: a chart value of another kind than the chart's templates want (a map, a list, a scalar).

Helm keeps a user's value whatever its kind: given a list or a scalar where the chart's default
is a map it only warns (``cannot overwrite table with non table``), given a map where the
default is not one, ``skipped value … Not a table``. The templates then get what they were not
written for. Charts copy list values whole into their manifests (``toYaml .Values.extraEnv``
under a container's ``env:``, ``range`` over ``tolerations``): a map there renders a mapping
where Kubernetes wants a list, or entries beside the list that are no field of the object
(dcgm-exporter's env: unknown container fields, tests/e2e/test_list_values.py). A template that
reads a key below a map value (``.Values.gfd.enabled``) cannot read it from a list or a
scalar, ``false`` included, and the release fails to render; one that copies the map
(``toYaml .Values.affinity``) renders a list where Kubernetes wants an object. A scalar written as a map or list renders Go's
``map[…]`` text into the manifest. Which kind each key wants comes from each chart version
(``chartkeys.value_kinds``: the kind of its values.yaml default, where no template tests the
kind); null (Helm deletes the key), empty maps and lists, and a false or empty value where the
template copies a map whole ask for nothing and are left alone.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from gpustack.lint.charts import chartversions
from gpustack.lint.charts.chartkeys import LIST, MAP, OBJECT, SCALAR
from gpustack.lint.context import LintContext
from gpustack.lint.model import Hit, Severity, get_value
from gpustack.lint.registry import Rule

_KIND_NAMES = {LIST: "a list", MAP: "a map", OBJECT: "a map", SCALAR: "a single value"}
_WHAT_HAPPENS = {
    LIST: "its templates copy it whole into the manifest: the chart renders a mapping where Kubernetes expects a list"
    " (or entries beside it that are no field of the object): Helm's schema validation rejects the release, and"
    " without it the setting is lost",
    MAP: "its templates read keys below it: Helm keeps the value with a warning (`cannot overwrite table with non"
    " table`) and the chart fails to render (`can't evaluate field`), so the release is never installed",
    OBJECT: "its templates copy it whole as an object: Helm keeps the value with a warning (`cannot overwrite table"
    " with non table`) and the chart renders it where Kubernetes expects an object, so the release is rejected",
    SCALAR: "its templates write it as one value: the manifest gets Go's text of the value (`map[…]`, `[…]`), which"
    " Kubernetes rejects or reads as another setting",
}
_FIXES = {
    LIST: "Write it as a list, as the chart's values.yaml shows (env: `- name: NAME` / `value: VALUE` items).",
    MAP: "Write it as a map, as the chart's values.yaml shows (a switch goes below it: `enabled: false`).",
    OBJECT: "Write it as a map, as the chart's values.yaml shows (to clear it, `{}` or null).",
    SCALAR: "Write it as one value, as the chart's values.yaml shows.",
}


def check(ctx: LintContext) -> Iterator[Hit]:
    for release, resolution, keys in chartversions.checked_releases(ctx):
        for path, wanted in keys.value_kinds():
            given = _wrong_kind(wanted, get_value(release.values, *path))
            if given is None:
                continue
            resource, where = release.where(*path)
            note = f" ({resolution.note})" if resolution.note else ""
            yield Hit(
                resource,
                where,
                f"{release.owner}: `{'.'.join(path)}` is {_KIND_NAMES[given]}, but chart {release.chart} {keys.version}"
                f" wants {_KIND_NAMES[wanted]} (its values.yaml default is one and {_WHAT_HAPPENS[wanted]}){note}",
                severity=None if resolution.certain else Severity.WARNING,
                fix=_FIXES[wanted],
            )


def _wrong_kind(wanted: str, value: Any) -> str | None:
    """The kind of ``value`` where the chart wants another (``wanted``); None where it is the
    kind wanted or asks for nothing."""
    given = _given_kind(value)
    if given is None or given == wanted or {given, wanted} == {MAP, OBJECT}:
        return None
    if wanted == OBJECT and given == SCALAR and not value:
        return None  # false or "": a template that copies the map whole writes nothing for it
    return given


def _given_kind(value: Any) -> str | None:
    """The kind of a user's value; None where it asks for nothing (null, an empty map or list)."""
    if value is None:
        return None
    if isinstance(value, Mapping):
        return MAP if value else None
    if isinstance(value, list):
        return LIST if value else None
    return SCALAR


RULE = Rule("GS051", "set", check)
