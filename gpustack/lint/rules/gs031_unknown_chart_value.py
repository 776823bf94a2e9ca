"""GS031: a chart value key that no template of the chart, at that version, reads.

Helm renders templates from the values and ignores keys no template reads: a typo or a key
the chart renamed changes nothing, silently. HAMi's chart replaced
``scheduler.kubeScheduler.imageTag`` by ``scheduler.kubeScheduler.image.tag`` in v2.7.0: on
chart 2.10.0 a pin with the old key does nothing. Keys come from ``gpustack.lint.charts.chartkeys``
(read from the charts' templates, every packaged version) or ``--chart-values``; the version
from ``chartversions.resolve`` (ranges, patch releases, no pin: with a note). A version no
key data covers is a limit of gpustack's knowledge, not the user's problem: the engine reports
it as a note, not a finding. Keys below a
subtree the templates take whole (``toYaml``) are not judged; keys ``values.yaml`` declares
but no template reads are GS042's. A key written null or empty asks for nothing (Helm drops
a null key) and is not reported. A values file of hundreds of keys is a copy of a chart's whole
values.yaml, often of another version: its unread keys are info (a copied default changes
nothing; the message says which case to look for). In a values file whose chart only its path
and keys tell, a top-level block named after a chart gpustack knows (``dcgm-exporter:``) is not
judged: that is how a fork or an umbrella chart configures a dependency it adds, and Helm hands
the block to that subchart (https://helm.sh/docs/chart_template_guide/subcharts_and_globals/).
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack import charts
from gpustack.lint.charts import chartversions, valuehints
from gpustack.lint.charts.chartkeys import ABSENT
from gpustack.lint.context import LintContext
from gpustack.lint.model import Hit, Severity
from gpustack.lint.registry import Rule
from gpustack.lint.releases import dispatch
from gpustack.lint.releases.helmvalues import ValuesLayer
from gpustack.lint.releases.release import HelmChartRelease


# A values file that writes this many keys is a copy of a chart's whole values.yaml: nobody sets
# hundreds of keys by hand (a chart's own values.yaml: kube-prometheus-stack's about 1,500, the
# GPU Operator's about 400; users' files: tens).
COPY_SIZE = 200


def check(ctx: LintContext) -> Iterator[Hit]:
    for release in dispatch.releases(ctx):
        resolution = chartversions.resolve(release.chart, release.version, ctx.chart_values)
        for layer in release.layers:
            paths = list(valuehints.written(layer))
            copied = len(paths) if len(paths) >= COPY_SIZE else None
            for path in paths:
                if not valuehints.asks_nothing(layer, path):
                    yield from _check_key(release, layer, path, resolution, copied)


def _check_key(
    release: HelmChartRelease,
    layer: ValuesLayer,
    path: tuple[str, ...],
    resolution: chartversions.Resolution,
    copied: int | None,
) -> Iterator[Hit]:
    """The finding on one key; info where the version is not certain and other versions read
    it, or where the layer is a copy of a whole values.yaml (``copied``: its key count), whose
    unread keys are most likely that version's defaults, which change nothing."""
    if release.inferred and len(path) == 1 and path[0] in charts.registry():
        return  # a fork's or an umbrella's dependency: Helm hands the block to that subchart
    keys, version = resolution.keys, resolution.version or release.version
    rename = valuehints.rename(release.chart, path, version)
    elsewhere = None
    if keys is not None:
        state, index = keys.state(path)
        # Report the first unread key once, not every key below it.
        if state != ABSENT or index != len(path) - 1:
            return
        elsewhere = valuehints.other_versions(keys, path)
        hint = rename or valuehints.did_you_mean(keys, path)
    elif rename is not None:
        hint = rename
    else:
        return
    where = layer.where(path)
    if where is None:
        return
    if keys is None:
        what = ""
    elif elsewhere:
        what = f" at this version ({elsewhere})"
    else:
        what = " at any version gpustack knows"
    note = f" ({resolution.note})" if resolution.note and keys is not None else ""
    if copied is not None:
        note += (f"; the file writes {copied} keys, a copy of the chart's whole values.yaml (of another version, it"
                 " seems): a default copied with it changes nothing, a value changed in the copy is lost")
    certain = resolution.certain or (keys is not None and not elsewhere)
    yield Hit(
        layer.resource,
        where,
        f"{release.owner}: `{'.'.join(path)}` is read by no template of chart {release.chart} {version}{what}:"
        f" Helm ignores it{note}",
        severity=None if certain and copied is None else Severity.INFO,
        fix=_sentence(hint) if hint else "Remove it, or check the chart's values.yaml for the key meant.",
    )


def _sentence(hint: str) -> str:
    return hint if hint.endswith("?") else f"{hint}."


RULE = Rule("GS031", "set", check)
