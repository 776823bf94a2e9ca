"""Values files that nothing maps to a chart, whose chart their path and keys tell.

``helm install -f kubernetes/gpu-operator/values.yaml`` leaves no trace in the repository of
which chart the file is for, yet its path and keys say it plainly. A file of no Kubernetes
objects that no release, chart folder, ``.gpustack.yaml`` ``values:`` or ``--chart`` takes is
linted as the values of a chart gpustack has key data for when

- its path names the chart: the chart's name, its name in its source repository, or a name
  repositories give its values (``pathNames`` in specs/charts.yaml: ``kube-prometheus``), as
  whole words of the path (``infra/values/gpu-operator-values.yaml``); and
- its top-level keys fit the chart: at least two thirds of them are keys of the chart at some
  version gpustack knows, and at least two of those are distinctive (keys of at most two of the
  charts gpustack knows: ``nodeSelector`` or ``image`` fit any chart, ``driver`` or
  ``migStrategy`` few). ``global`` and blocks named after a chart gpustack knows
  (``dcgm-exporter:``, a dependency's values in a fork or an umbrella chart) are not counted.

Where a path names several charts, the one with the most distinctive keys is taken. The
version is not known: the release has none, so rules check the newest key data and say so
(``chartversions.resolve``), as warnings at most. A file whose path names a chart and whose
keys do not fit stays unchecked, with a note that says why (``why_unchecked``), and so does one
whose chart an object of the set releases without taking the file (a copy, or an alternative).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache

from gpustack import charts
from gpustack.lint.charts import chartkeys
from gpustack.lint.model import Resource, posix_path

# Keys of at most this many charts' values are distinctive.
_DISTINCTIVE_IN_AT_MOST = 2
_MIN_DISTINCTIVE = 2
_MIN_SHARE_KNOWN = 2 / 3
# Shared by every chart and its subcharts: says nothing of which chart a file is for.
_IGNORED = frozenset({"global"})


@dataclass(frozen=True)
class Fit:
    """How ``keys`` (a file's top-level keys) fit ``chart``'s values."""

    chart: str  # the key data's name
    keys: tuple[str, ...]
    known: tuple[str, ...]
    distinctive: tuple[str, ...]

    @property
    def fits(self) -> bool:
        return len(self.distinctive) >= _MIN_DISTINCTIVE and len(self.known) >= _MIN_SHARE_KNOWN * len(self.keys)


def inferred_chart(file: str, resources: Sequence[Resource]) -> str | None:
    """The chart (its key data's name) whose values ``file`` holds, by its path and keys; None
    when its path names no chart gpustack has key data for or its keys fit none it names."""
    fits = [fit for fit in _fits(file, resources) if fit.fits]
    return max(fits, key=_strength).chart if fits else None


def data_names(chart: str) -> tuple[str, ...]:
    """The key data names of the chart a release names ``chart`` (published or source name)."""
    return _by_name().get(chart.lower(), (chart,))


def untaken_release(file: str, resources: Sequence[Resource], declared: Mapping[str, str]) -> tuple[str, str] | None:
    """The chart whose values ``file``'s path and keys tell, and what releases that chart in
    the set (``declared``), where that release does not take the file; None otherwise."""
    fits = [fit for fit in _fits(file, resources) if fit.fits]
    if not fits:
        return None
    chart = max(fits, key=_strength).chart
    return (chart, declared[chart]) if chart in declared else None


def why_unchecked(file: str, resources: Sequence[Resource], declared: Mapping[str, str]) -> str | None:
    """Why a file whose path names a chart is not linted as that chart's values, or None (its
    path names none). ``declared``: the charts (key data names, ``data_names``) that the set releases
    otherwise, each with what releases it."""
    fits = _fits(file, resources)
    if not fits:
        return None
    fit = max(fits, key=lambda fit: (fit.fits, *_strength(fit)))
    if untaken_release(file, resources, declared) is not None:
        return (
            f"not checked: its path and keys tell chart {fit.chart}, but the set's release of it ({declared[fit.chart]})"
            " does not take this file: a copy or an alternative; if that release does take it, map the file"
            " (`values:` in .gpustack.yaml) with the release's version"
        )
    if fit.chart in resources[0].data:
        return (
            f"not checked: its path names chart {fit.chart}, but its values sit below `{fit.chart}`, as those of a"
            f" chart that depends on {fit.chart}: gpustack reads such values as the values.yaml of that chart's folder"
            " (beside its Chart.yaml), not from another file"
        )
    if not fit.keys:
        found = "it sets no values"
    else:
        found = (
            f"its top-level keys do not fit that chart's values ({len(fit.known)} of {len(fit.keys)} are the chart's"
            f" keys, {len(fit.distinctive)} of them distinctive{_listed(fit.distinctive)}; gpustack takes a file"
            " whose keys are at least two thirds the chart's, with two distinctive ones)"
        )
    return (
        f"not checked: its path names chart {fit.chart}, but {found}; if it is a chart's values file, name the"
        " chart (`values:` in .gpustack.yaml, or --chart NAME[@VERSION])"
    )


def _strength(fit: Fit) -> tuple[int, int]:
    return len(fit.distinctive), len(fit.known)


def _listed(keys: tuple[str, ...]) -> str:
    return f": {', '.join(f'`{key}`' for key in keys)}" if keys else ""


def _fits(file: str, resources: Sequence[Resource]) -> list[Fit]:
    named = _named_charts(file)
    if not named or not resources:
        return []
    subcharts = charts.registry()  # a block named after a chart is a dependency's values
    keys = tuple(key for key in resources[0].data if isinstance(key, str) and key not in _IGNORED and key not in subcharts)
    fits = []
    for chart in named:
        top, distinctive = _top_keys(chart), _distinctive_keys(chart)
        known = tuple(key for key in keys if key in top)
        fits.append(Fit(chart, keys, known, tuple(key for key in known if key in distinctive)))
    return fits


def _named_charts(file: str) -> list[str]:
    """The charts (key data names) the path of ``file`` names, as whole words."""
    path = posix_path(file).lower().replace("_", "-")
    return list(dict.fromkeys(chart for match in _path_names().finditer(path) for chart in _by_name()[match.group(1)]))


@cache
def _by_name() -> Mapping[str, tuple[str, ...]]:
    """Each name a path may give a chart -> the key data names of the charts it names."""
    from gpustack import charts

    found: dict[str, list[str]] = {}
    for chart in charts.registry().values():
        data = chart.source_name or chart.name
        if data not in chartkeys.shipped_charts():
            continue
        for name in dict.fromkeys((chart.name, chart.source_name, *chart.path_names)):
            if name:
                found.setdefault(name.lower(), []).append(data)
    return {name: tuple(charts_named) for name, charts_named in found.items()}


@cache
def _path_names() -> re.Pattern[str]:
    names = sorted(_by_name(), key=len, reverse=True)
    return re.compile(r"(?<![a-z0-9])(" + "|".join(map(re.escape, names)) + r")(?![a-z0-9])")


@cache
def _top_keys(chart: str) -> frozenset[str]:
    """The top-level keys of ``chart`` at any version gpustack has key data for."""
    versions = chartkeys.versions(chart)
    keys = chartkeys.chart_keys(chart, versions[-1]) if versions else None
    return keys.data.top_keys() if keys is not None else frozenset()


@cache
def _distinctive_keys(chart: str) -> frozenset[str]:
    counts = Counter(key for other in chartkeys.shipped_charts() for key in _top_keys(other))
    return frozenset(key for key in _top_keys(chart) if counts[key] <= _DISTINCTIVE_IN_AT_MOST)
