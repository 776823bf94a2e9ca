"""NVSwitch boards: NVLink error counters and Fabric Manager's state, collected and alerted on.

On HGX/DGX 8-GPU boards (spec.pools.on_nvswitch) the GPUs talk through NVSwitches that NVIDIA
Fabric Manager configures; without it CUDA fails on every GPU of the node
(https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/). dcgm-exporter's CSVs
leave the NVLink error counters commented out (``customMetrics`` in
https://github.com/NVIDIA/dcgm-exporter/blob/main/deployment/values.yaml) and do not list
Fabric Manager's state, so gpustack's collectors CSV adds them where a pool has such boards:

- ``DCGM_FI_DEV_NVLINK_*_ERROR_COUNT_TOTAL`` (fields 409, 419, 429, 439), in every exporter;
- ``DCGM_FI_DEV_FABRIC_MANAGER_STATUS`` (field 170, a ``dcgmFabricManagerStatus_t``: 0 not
  supported, 1 not started, 2 in progress, 3 success, 4 failure, 5 unrecognised, 6 NVML too old;
  https://github.com/NVIDIA/DCGM/blob/master/dcgmlib/dcgm_structs.h). The exporter resolves CSV
  names through go-dcgm's field table, which has it from its DCGM 4.0 headers
  (https://github.com/NVIDIA/go-dcgm/pull/77): only exporters on DCGM 4 or later get it.

Fields a GPU does not support are skipped by the exporter, so one CSV still serves every pool.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpustack.render.components import dcgm_exporter
from gpustack.render.components.alert_series import SeriesModel
from gpustack.spec.models import GpuStack
from gpustack.spec.models.cluster import NodePool
from gpustack.spec.models.monitoring import Alerts
from gpustack.spec.pools import on_nvswitch

RECOVERY_ERRORS = "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL"
CRC_DATA_ERRORS = "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL"
NVLINK_ERROR_FIELDS = (
    ("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "Total number of NVLink flow-control CRC errors."),
    (CRC_DATA_ERRORS, "Total number of NVLink data CRC errors."),
    ("DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", "Total number of NVLink retries."),
    (RECOVERY_ERRORS, "Total number of NVLink recovery errors."),
)
FABRIC_STATUS = "DCGM_FI_DEV_FABRIC_MANAGER_STATUS"
FABRIC_FIELD = (FABRIC_STATUS, "Fabric Manager status (3: success, 4: failure, 1: not started).")
FM_NOT_SUPPORTED, FM_SUCCESS = 0, 3
FIRST_FABRIC_DCGM = (4,)
# NVLink errors alerted on: recovery (the link went down and was retrained) and data CRC errors
# (corrupted payloads); flit CRC errors and replays are retried by the link itself.
NVLINK_WINDOW = "15m"


def pools(stack: GpuStack) -> list[NodePool]:
    return [pool for pool in stack.spec.nodePools if on_nvswitch(pool)]


def fabric_status_known(stack: GpuStack) -> bool:
    """Whether the stack's exporter image runs DCGM 4 or later (the field's name resolves)."""
    version = dcgm_exporter.dcgm_version(stack)
    return version is not None and version >= FIRST_FABRIC_DCGM


def fields(stack: GpuStack) -> tuple[tuple[str, str], ...]:
    """The CSV rows this stack adds: none without NVSwitch boards."""
    if not pools(stack):
        return ()
    return NVLINK_ERROR_FIELDS + ((FABRIC_FIELD,) if fabric_status_known(stack) else ())


def csv_reason(stack: GpuStack) -> list[str]:
    """The CSV comment above the rows."""
    boards = pools(stack)
    if not boards:
        return ["Left out: no pool is an NVSwitch board (HGX/DGX 8-GPU)."]
    names = ", ".join(pool.name for pool in boards)
    lines = [f"Collected for the NVSwitch boards of pools {names}; other GPUs skip them."]
    if not fabric_status_known(stack):
        lines.append(f"{FABRIC_STATUS} left out: this exporter image's DCGM is older than 4 or unknown.")
    return lines


def rules(stack: GpuStack, alerts: Alerts, series: SeriesModel, make: Callable[..., dict[str, Any]]) -> list[dict[str, Any]]:
    """NVLink errors (warning) and Fabric Manager not running (critical), on NVSwitch stacks only."""
    if not pools(stack):
        return []
    result = [
        make(
            "GPUNvlinkErrors",
            f"({series.per_gpu(_increase, RECOVERY_ERRORS)}) > 0 or ({series.per_gpu(_increase, CRC_DATA_ERRORS)}) > 0",
            None, "warning",
            f"{series.where()}{series.workload()} had {{{{ $value }}}} NVLink recovery or data CRC errors in "
            f"{NVLINK_WINDOW}",
            f"An NVLink of the GPU was recovered (retrained after going down) or carried corrupted data within "
            f"{NVLINK_WINDOW} ({RECOVERY_ERRORS}, {CRC_DATA_ERRORS}): collective operations slow down or fail. "
            "Check `nvidia-smi nvlink -e` on the node and the XID alerts (XID 74); reseat or replace the board "
            "at the next drain if the errors recur.",
        )
    ]
    if fabric_status_known(stack):
        result.append(
            make(
                "GPUFabricManagerDown",
                series.per_gpu(_not_running, FABRIC_STATUS),
                alerts.gpuGoneFor, "critical",
                f"{series.where()}{series.workload()}: NVIDIA Fabric Manager is not running (status {{{{ $value }}}})",
                f"DCGM has reported the GPU's Fabric Manager status as other than success (3) for {alerts.gpuGoneFor} "
                "(1: not started, 2: in progress, 4: failure): CUDA fails on every GPU of the NVSwitch board "
                "until Fabric Manager has trained the fabric. Check `systemctl status nvidia-fabricmanager` (or "
                "the GPU Operator's driver pod, which runs it) and that its version is the driver's exactly.",
            )
        )
    return result


def _increase(selector: str) -> str:
    return f"increase({selector}[{NVLINK_WINDOW}])"


def _not_running(selector: str) -> str:
    """Any state but success, and but "not supported" (a GPU Fabric Manager does not manage)."""
    return f"({selector} != {FM_SUCCESS}) > {FM_NOT_SUPPORTED}"
