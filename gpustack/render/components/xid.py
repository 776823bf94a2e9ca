"""XID alerts: one per resolution bucket of NVIDIA's XID catalogue (gpustack/lint/data/xid-catalogue.yaml).

They read the exporter's ``DCGM_EXP_XID_ERRORS_COUNT`` (XIDs per code in the last 5 minutes,
code in label ``xid``) rather than the last-XID gauge, so a repeat of the same code is seen too;
fatal buckets keep firing for ``xidKeepFiringFor`` after the window, since the GPU stays broken.
An XID belongs to the GPU: the series of its MIG instances are folded into one alert per GPU.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

from gpustack.render.components.alert_series import SeriesModel
from gpustack.shipped import lint_data
from gpustack.spec.models.monitoring import Alerts

XID_COUNT_METRIC = "DCGM_EXP_XID_ERRORS_COUNT"
# dcgm-exporter's --xid-count-window-size default (5 minutes), the window of the count above.
XID_WINDOW = "5 minutes"
CATALOGUE_URL = "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html"


@dataclass(frozen=True)
class XidBucket:
    """An XID catalogue resolution bucket and the alert gpustack makes of it."""

    action: str  # the catalogue's resolution bucket, e.g. RESET_GPU
    fatal: bool  # critical, and keeps firing: the GPU stays broken until the action is taken
    codes: tuple[int, ...]
    alert: str
    summary: str
    listed_only: bool = False  # IGNORE codes: only those monitoring.alerts.criticalXids lists


@cache
def catalogue() -> tuple[XidBucket, ...]:
    """The buckets of the catalogue table, in its order."""
    return tuple(
        XidBucket(
            action=row["action"],
            fatal=row["fatal"],
            codes=tuple(row["codes"]),
            alert=row["alert"],
            summary=row["summary"],
            listed_only=row.get("listedOnly", False),
        )
        for row in lint_data("xid-catalogue.yaml")["buckets"]
    )


_UNLISTED = XidBucket(
    "UNKNOWN", False, (), "GPUXidListed",
    "XID listed in monitoring.alerts.criticalXids, not in gpustack's catalogue", listed_only=True,
)

AlertMaker = Callable[..., dict[str, Any]]


def xid_rules(alerts: Alerts, series: SeriesModel, make: AlertMaker) -> list[dict[str, Any]]:
    """One alert per bucket; IGNORE and unknown codes only where the spec lists them."""
    listed = set(alerts.criticalXids)
    known = {code for bucket in catalogue() for code in bucket.codes}
    unknown = replace(_UNLISTED, codes=tuple(sorted(listed - known)))
    result = []
    for bucket in (*catalogue(), unknown):
        codes = tuple(c for c in bucket.codes if not bucket.listed_only or c in listed)
        if codes:
            result.append(_xid_alert(alerts, series, make, bucket, codes))
    return result


def xid_expr(series: SeriesModel, codes: tuple[int, ...]) -> str:
    """An XID of one of ``codes`` within the exporter's count window, one series per GPU and code."""
    matcher = f'xid=~"{"|".join(str(code) for code in codes)}"'
    return f"({series.per_gpu(str, XID_COUNT_METRIC, matcher=matcher, keep=('xid',))}) > 0"


def _xid_alert(
    alerts: Alerts, series: SeriesModel, make: AlertMaker, bucket: XidBucket, codes: tuple[int, ...]
) -> dict[str, Any]:
    keep = alerts.xidKeepFiringFor if bucket.fatal else None
    lasting = f" The alert keeps firing {keep} after the last occurrence." if keep else ""
    rule = make(
        bucket.alert,
        xid_expr(series, codes),
        None, "critical" if bucket.fatal else "warning",
        f"XID {{{{ $labels.xid }}}} on {series.where()}{series.workload()} ({{{{ $value }}}} in {XID_WINDOW}): "
        f"{bucket.summary}",
        f"The driver reported XID {', '.join(map(str, codes))} (NVIDIA's XID catalogue, {CATALOGUE_URL}: "
        f"{bucket.action}) within the last {XID_WINDOW}: {bucket.summary}.{lasting}",
        keep_firing_for=keep,
    )
    rule["labels"]["xid_action"] = bucket.action
    return rule
