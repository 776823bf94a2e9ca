"""Which key data checks a release: a chart name and the version as written -> key data + note.

Releases pin charts every way there is: ``2.10.0``, ``v26.7.0``, a Flux or Argo CD range
(``>=0.17 <1``, ``0.20.x``, ``~0.17``, ``^24.9.0``), a patch release gpustack has no data
for, a Git revision, or nothing. ``resolve`` answers all of them, and says so whenever the data
used is not the exact version's: gpustack never stops checking silently.

- exact (``v`` prefix or not): that version's data, no note;
- a patch without data: the newest known patch of the same minor (patch releases keep their
  value keys), with a note;
- a range (Masterminds syntax as Flux and Argo CD read it; commas mean "and"): the newest
  known version inside it, with a note;
- nothing, ``*``, ``latest`` or a Git revision: the newest known version, with a note;
- a version between two known releases whose minor gpustack has no data for: the nearest known
  version's data, not certain, with a note naming both;
- a version or range before or after every known release: no data (nothing is checked) and a
  note naming the nearest known version.

``certain`` is False when the version that will really be installed is not known (ranges,
no pin): rules then report what they find as information only.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpustack.lint.charts import chartkeys

if TYPE_CHECKING:
    from gpustack.lint.charts.chartkeys import ChartKeys
    from gpustack.lint.context import LintContext
    from gpustack.lint.releases.release import HelmChartRelease

_EXACT = re.compile(r"v?\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]*)?")
_UNPINNED = frozenset({"", "*", "latest", "head"})


@dataclass(frozen=True)
class Resolution:
    keys: ChartKeys | None  # None: nothing to check (the note says why, when the chart is known)
    version: str | None  # the version whose data ``keys`` holds
    note: str | None = None  # None only for an exact match (or a chart gpustack has no data for)
    certain: bool = True  # the release installs ``version``'s keys for sure


def resolve(chart: str, raw: str | None, extra: tuple[ChartKeys, ...] = ()) -> Resolution:
    """The key data that checks values of ``chart`` pinned as ``raw`` (see the module docstring).
    ``extra``: charts read at run time (``--chart-values``), preferred over gpustack's data."""
    known = _known(chart, extra)
    if not known:
        return Resolution(None, None)
    text = (raw or "").strip()
    if text.lower() in _UNPINNED:
        return _newest_known(chart, known, extra, "no version pinned")
    wanted = chartkeys.normalise_version(text)
    if wanted in known:
        return Resolution(_load(chart, known[wanted], extra), known[wanted])
    if _EXACT.fullmatch(text):
        same_minor = [v for v in known if _minor(v) == _minor(wanted)]
        if same_minor:
            used = _newest(same_minor)
            return Resolution(
                _load(chart, known[used], extra), known[used],
                f"no key data for {chart} {text}: checked against {known[used]}, the same minor release",
            )
        return _outside(chart, text, wanted, known, extra)
    return _range(chart, text, known, extra)


def checked_releases(ctx: LintContext) -> Iterator[tuple[HelmChartRelease, Resolution, ChartKeys]]:
    """The set's chart releases that key data checks, each with its resolution and that key
    data (GS031's notes say why the others are not checked)."""
    from gpustack.lint.releases import dispatch

    for release in dispatch.releases(ctx):
        resolution = resolve(release.chart, release.version, ctx.chart_values)
        if resolution.keys is not None:
            yield release, resolution, resolution.keys


def read_of(
    chart: str, raw: str | None, alternatives: tuple[tuple[str, ...], ...], extra: tuple[ChartKeys, ...] = ()
) -> tuple[tuple[str, ...], ...]:
    """Of the key paths a rule could read a setting from (a key renamed across versions, or
    declared in one place and read in another), those the release's version reads; all of them
    when gpustack has no data for it."""
    keys = resolve(chart, raw, extra).keys
    return alternatives if keys is None else tuple(path for path in alternatives if keys.reads(path))


def _range(chart: str, text: str, known: dict[str, str], extra: tuple[ChartKeys, ...]) -> Resolution:
    import nodesemver  # only for ranges: 60 ms of import

    expression = nodesemver.valid_range(text.replace(",", " "), loose=True)
    if expression is None:  # a Git revision or branch, not a chart version
        return _newest_known(chart, known, extra, f"`{text}` is no chart version")
    match = nodesemver.max_satisfying(list(known), expression, loose=True)
    if match is None:
        lowest = re.search(r"\d+(?:\.\d+){0,2}", text)
        return _outside(chart, text, chartkeys.normalise_version(lowest.group()) if lowest else "0", known, extra)
    return Resolution(
        _load(chart, known[match], extra), known[match],
        f"version range `{text}`: checked against {chart} {known[match]}, the newest version in it that gpustack"
        " has key data for",
        certain=False,
    )


def _newest_known(chart: str, known: dict[str, str], extra: tuple[ChartKeys, ...], why: str) -> Resolution:
    """The newest version gpustack has key data for, when the release pins none (``why``)."""
    newest = _newest(known)
    return Resolution(
        _load(chart, known[newest], extra), known[newest],
        f"{why}: checked against {chart} {known[newest]}, the newest version gpustack has key data for",
        certain=False,
    )


def _outside(
    chart: str, text: str, wanted: str, known: dict[str, str], extra: tuple[ChartKeys, ...] = ()
) -> Resolution:
    target = chartkeys.version_key(wanted)
    nearest = min(known, key=lambda v: (_distance(chartkeys.version_key(v), target), [-p for p in chartkeys.version_key(v)]))
    listed = ", ".join(known[v] for v in sorted(known, key=chartkeys.version_key))
    older = [v for v in known if chartkeys.version_key(v) < target]
    newer = [v for v in known if chartkeys.version_key(v) > target]
    if older and newer:  # between two known releases: the nearest one's keys, as information
        below, above = known[_newest(older)], known[min(newer, key=chartkeys.version_key)]
        return Resolution(
            _load(chart, known[nearest], extra), known[nearest],
            f"no key data for {chart} {text}: checked against {known[nearest]}, the nearest of the versions that "
            f"bracket it ({below} and {above})",
            certain=False,
        )
    return Resolution(
        None, None,
        f"no key data for {chart} {text}, nor for its minor release: its values are not checked (nearest known"
        f" version: {known[nearest]}; known: {listed})",
    )


def _distance(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    width = max(len(a), len(b))
    a, b = a + (0,) * (width - len(a)), b + (0,) * (width - len(b))
    return tuple(abs(x - y) for x, y in zip(a, b, strict=True))


def _known(chart: str, extra: tuple[ChartKeys, ...]) -> dict[str, str]:
    """normalised version -> version as the data writes it."""
    known = {chartkeys.normalise_version(v): v for v in chartkeys.versions(chart)}
    known.update({chartkeys.normalise_version(k.version): k.version for k in extra if k.chart == chart})
    return known


def _load(chart: str, version: str, extra: tuple[ChartKeys, ...]) -> ChartKeys | None:
    for keys in extra:
        if keys.chart == chart and keys.version == version:
            return keys
    return chartkeys.chart_keys(chart, version)


def _newest(versions: list[str] | dict[str, str]) -> str:
    return max(versions, key=chartkeys.version_key)


def _minor(version: str) -> tuple[int, ...]:
    return chartkeys.version_key(version)[:2]
