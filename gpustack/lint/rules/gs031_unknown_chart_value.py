"""GS031: a chart value key that the chart, at that version, does not have.

Helm renders templates from the values and ignores keys no template reads: a typo or a key
the chart renamed changes nothing, silently. Seed 001 §11 pinned HAMi's kube-scheduler with
``scheduler.kubeScheduler.imageTag``, a key HAMi's chart replaced by
``scheduler.kubeScheduler.image.tag`` in v2.7.0 (upstream-facts §0): on chart 2.10.0 the pin
did nothing. Keys come from ``gpustack.lint.chartkeys`` (gpustack's data for the charts it
renders, or ``--chart-values``); free-form maps are not checked, unknown charts and versions not
at all. An unpinned release is checked against the newest version gpustack knows, as info.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping
from typing import Any

from gpustack.lint import chartkeys, chartversions, sets
from gpustack.lint.chartkeys import ChartKeys
from gpustack.lint.context import LintContext
from gpustack.lint.model import Hit, Severity
from gpustack.lint.registry import Rule

def check(ctx: LintContext) -> Iterator[Hit]:
    for release in sets.releases(ctx):
        resolution = chartversions.resolve(release.chart, release.version, ctx.chart_values)
        if resolution.keys is None and resolution.note is not None:
            yield Hit(release.resource, release.path, f"{release.owner}: {resolution.note}.", severity=Severity.INFO)
        for layer in release.layers:
            for path in _written(layer):
                yield from _check_key(release, layer, path, resolution)


def _written(layer: sets.ValuesLayer) -> Iterator[tuple[str, ...]]:
    """Every key path a layer writes: the leaves and maps of a tree, each ``--set`` key."""
    if layer.written is not None:
        yield from layer.written
        return

    def walk(values: Mapping[str, Any], prefix: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
        for key, value in values.items():
            yield (*prefix, key)
            if isinstance(value, Mapping):
                yield from walk(value, (*prefix, key))

    yield from walk(layer.values, ())


def _check_key(
    release: sets.HelmChartRelease,
    layer: sets.ValuesLayer,
    path: tuple[str, ...],
    resolution: chartversions.Resolution,
) -> Iterator[Hit]:
    keys, version = resolution.keys, resolution.version or release.version
    rename = _rename(release.chart, path, version)
    if keys is not None:
        index = keys.lookup(path)
        # Report the first unknown key once, not every key below it.
        if index is None or index != len(path) - 1:
            return
        hint = rename or _closest(keys, path)
    elif rename is not None:
        hint = rename
    else:
        return
    where = layer.where(path)
    if where is None:
        return
    note = f" ({resolution.note})" if resolution.note and keys is not None else ""
    yield Hit(
        layer.resource,
        where,
        f"{release.owner}: `{'.'.join(path)}` is not a value of chart {release.chart} {version}: Helm ignores it{note}",
        severity=None if resolution.certain else Severity.INFO,
        fix=_sentence(hint) if hint else "Remove it, or check the chart's values.yaml for the key meant.",
    )


def _rename(chart: str, path: tuple[str, ...], version: str | None) -> str | None:
    """A hint when ``path`` is one side of a rename that ``version`` does not have."""
    for rename in chartkeys.renames(chart):
        newer = version is None or chartkeys.version_key(version) >= chartkeys.version_key(rename.since)
        if newer and path == rename.old:
            return f"The chart renamed it to `{'.'.join(rename.new)}` in {rename.since}"
        if not newer and path == rename.new:
            return f"This key exists from chart {rename.since} on; before it is `{'.'.join(rename.old)}`"
    return None


def _sentence(hint: str) -> str:
    return hint if hint.endswith("?") else f"{hint}."


def _normalise(text: str) -> str:
    return text.lower().replace(".", "").replace("_", "").replace("-", "")


def _closest(keys: ChartKeys, path: tuple[str, ...]) -> str | None:
    """The existing key closest to the unknown one, among the keys under the same parent
    (``imageTag`` → ``image.tag``)."""
    parent, unknown = path[:-1], path[-1]
    candidates = {_normalise(".".join(c)): c for c in keys.siblings(parent)}
    match = difflib.get_close_matches(_normalise(unknown), list(candidates), n=1, cutoff=0.6)
    return f"Did you mean `{'.'.join((*parent, *candidates[match[0]]))}`?" if match else None


RULE = Rule("GS031", "set", check)
