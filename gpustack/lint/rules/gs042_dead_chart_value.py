"""GS042: a value key the chart declares in its values.yaml but no template of it reads.

A key that values.yaml sets or documents looks right to anyone reading the chart, and passes
GS031 as a key the chart has; if no template reads it, setting it changes nothing. The NVIDIA
device plugin chart (0.15.0 to 0.20.0) declares ``gfd.sleepInterval`` and ``gfd.noTimestamp``
while its GFD template reads the top-level ``sleepInterval`` and ``noTimestamp``: a release that
sets the declared keys keeps GFD's 60 s relabelling and its churning timestamp label. Which keys
are read comes from the charts' templates (``gpustack.lint.charts.chartkeys``), per version. A null
or empty value, or the chart's own default, is not reported: it asks for nothing (a block
copied from values.yaml).
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.lint.charts import chartversions, valuehints
from gpustack.lint.charts.chartkeys import DECLARED
from gpustack.lint.context import LintContext
from gpustack.lint.model import Hit, Severity
from gpustack.lint.registry import Rule


def check(ctx: LintContext) -> Iterator[Hit]:
    for release, resolution, keys in chartversions.checked_releases(ctx):
        for layer in release.layers:
            for path in valuehints.written(layer):
                # The topmost declared-only key once, not every key below it.
                if keys.state(path)[0] != DECLARED or (len(path) > 1 and keys.state(path[:-1])[0] == DECLARED):
                    continue
                if valuehints.asks_nothing(layer, path) or valuehints.sets_default(layer, path, keys):
                    continue
                where = layer.where(path)
                if where is None:
                    continue
                elsewhere = valuehints.other_versions(keys, path)
                note = f" ({resolution.note})" if resolution.note else ""
                yield Hit(
                    layer.resource,
                    where,
                    f"{release.owner}: `{'.'.join(path)}` is declared in the values.yaml of chart {release.chart}"
                    f" {keys.version} but read by none of its templates: setting it changes nothing"
                    + (f" ({elsewhere})" if elsewhere else "") + note,
                    severity=None if resolution.certain else Severity.INFO,
                    fix=_fix(valuehints.did_you_mean(keys, path)),
                )


def _fix(hint: str | None) -> str:
    if hint is None:
        return "Remove it, or find in the chart's templates the key that does what it should."
    return hint.replace("Did you mean", "The templates read").replace("?", ": set that instead.")


RULE = Rule("GS042", "set", check)
