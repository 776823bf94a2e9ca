"""Cross-field checks: combinations the schema alone cannot refuse.

Each check yields ``(path, message)``; the message names what to change. The loader turns
paths into ``file:line:col``. The checks themselves live by subject: ``pool_checks`` (the
cluster and its node pools) and ``component_checks`` (what is deployed on them); this module
says which run and in what order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from gpustack.spec import chart_checks, component_checks, control_plane_checks, dra_checks, pool_checks, talos_checks
from gpustack.spec.models import GpuStack
from gpustack.spec.pool_checks import Finding

CHECKS: tuple[Callable[[GpuStack], Iterator[Finding]], ...] = (
    pool_checks.check_vendor,
    pool_checks.check_unique_pools,
    pool_checks.check_cluster,
    control_plane_checks.check_control_plane,
    talos_checks.check_talos,
    pool_checks.check_driver_source,
    pool_checks.check_mig,
    pool_checks.check_pool_partitioning,
    component_checks.check_profiling,
    component_checks.check_hami,
    component_checks.check_dra,
    component_checks.check_feature_gates,
    pool_checks.check_labelling_interval,
    component_checks.check_workloads,
)


# Checks of what the rendered stack needs, not of the cluster it describes: `gpustack lint
# --spec` takes a spec of GPU pools alone as context.
RENDER_CHECKS: tuple[Callable[[GpuStack], Iterator[Finding]], ...] = (
    pool_checks.check_system_pool,
    pool_checks.check_fabric_manager_off,
    chart_checks.check_chart_versions,
    dra_checks.check_dra_selectors,
    component_checks.check_runbook_base,
    component_checks.check_delivery,
)


def check(stack: GpuStack, *, render: bool = True) -> list[Finding]:
    """All cross-field problems; GPU models first since later checks read the catalogue."""
    unknown = list(pool_checks.check_gpu_models(stack))
    if unknown:
        return unknown
    rules = CHECKS + RENDER_CHECKS if render else CHECKS
    return [finding for rule in rules for finding in rule(stack)]
