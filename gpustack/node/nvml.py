"""NVML, the library nvidia-smi and DCGM ask (through nvidia-ml-py, imported only here).

NVML talks to the running kernel driver, so it is asked only when the root is ``/``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpustack.node import upstream_docs
from gpustack.node.result import LayerResult, not_applicable, ok, problem
from gpustack.node.root import NodeRoot

LAYER = "nvml"


@dataclass(frozen=True)
class NvmlGpu:
    name: str
    memory_mib: int
    compute_capability: str
    mig: str  # enabled | disabled | not supported

    def __str__(self) -> str:
        return f"{self.name}, {self.memory_mib} MiB, compute {self.compute_capability}, MIG {self.mig}"


@dataclass(frozen=True)
class NvmlReport:
    driver_version: str
    gpus: tuple[NvmlGpu, ...]


class NvmlUnavailable(Exception):
    """NVML cannot be asked. With a ``fix`` it is the node's fault (a problem), else n/a."""

    def __init__(self, reason: str, fix: str | None = None) -> None:
        super().__init__(reason)
        self.fix = fix


def read() -> NvmlReport:
    try:
        import pynvml  # type: ignore[import-untyped]  # nvidia-ml-py ships no type hints
    except ImportError:
        raise NvmlUnavailable("nvidia-ml-py is not installed (pip install nvidia-ml-py)") from None
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as exc:
        raise _unavailable(pynvml, exc) from None
    try:
        count = pynvml.nvmlDeviceGetCount()
        gpus = tuple(_gpu(pynvml, pynvml.nvmlDeviceGetHandleByIndex(i)) for i in range(count))
        return NvmlReport(_text(pynvml.nvmlSystemGetDriverVersion()), gpus)
    except pynvml.NVMLError as exc:
        raise _unavailable(pynvml, exc) from None
    finally:
        pynvml.nvmlShutdown()


def fabric_states() -> tuple[str, ...]:
    """Each GPU's NVSwitch fabric state as `nvidia-smi -q` names it (Not Supported, Not Started,
    In Progress, Completed): NVML's nvmlDeviceGetGpuFabricInfo, which nvidia-smi reads too.
    ``NvmlUnavailable`` when NVML cannot be asked."""
    try:
        import pynvml
    except ImportError:
        raise NvmlUnavailable("nvidia-ml-py is not installed (pip install nvidia-ml-py)") from None
    names = {
        pynvml.NVML_GPU_FABRIC_STATE_NOT_SUPPORTED: "Not Supported",
        pynvml.NVML_GPU_FABRIC_STATE_NOT_STARTED: "Not Started",
        pynvml.NVML_GPU_FABRIC_STATE_IN_PROGRESS: "In Progress",
        pynvml.NVML_GPU_FABRIC_STATE_COMPLETED: "Completed",
    }
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as exc:
        raise _unavailable(pynvml, exc) from None
    try:
        states = []
        for index in range(pynvml.nvmlDeviceGetCount()):
            info = pynvml.c_nvmlGpuFabricInfo_t()
            try:
                pynvml.nvmlDeviceGetGpuFabricInfo(pynvml.nvmlDeviceGetHandleByIndex(index), info)
            except pynvml.NVMLError_NotSupported:
                info.state = pynvml.NVML_GPU_FABRIC_STATE_NOT_SUPPORTED  # before Hopper: no fabric state
            states.append(names.get(info.state, f"state {info.state}"))
        return tuple(states)
    except pynvml.NVMLError as exc:
        raise _unavailable(pynvml, exc) from None
    finally:
        pynvml.nvmlShutdown()


def _gpu(pynvml: Any, handle: Any) -> NvmlGpu:
    major, minor = pynvml.nvmlDeviceGetCudaComputeCapability(handle)
    try:
        current, _pending = pynvml.nvmlDeviceGetMigMode(handle)
        mig = "enabled" if current == pynvml.NVML_DEVICE_MIG_ENABLE else "disabled"
    except pynvml.NVMLError_NotSupported:
        mig = "not supported"
    return NvmlGpu(
        name=_text(pynvml.nvmlDeviceGetName(handle)),
        memory_mib=pynvml.nvmlDeviceGetMemoryInfo(handle).total // 2**20,
        compute_capability=f"{major}.{minor}",
        mig=mig,
    )


def _text(value: str | bytes) -> str:
    """Older nvidia-ml-py releases return bytes."""
    return value.decode() if isinstance(value, bytes) else value


def _unavailable(pynvml: Any, exc: Exception) -> NvmlUnavailable:
    """Turn an NVML error into what to do about it."""
    fixes = {
        pynvml.NVML_ERROR_LIBRARY_NOT_FOUND: "install the driver's user-space libraries "
        "(libnvidia-compute, part of nvidia-headless-open and nvidia-open)",
        pynvml.NVML_ERROR_DRIVER_NOT_LOADED: "load the kernel driver first (see the driver layer)",
        # Packages upgraded under a loaded module: nvidia-smi fails the same way until a reboot.
        pynvml.NVML_ERROR_LIB_RM_VERSION_MISMATCH: "the driver was upgraded but the old module "
        "is still loaded: reboot",
        pynvml.NVML_ERROR_NO_PERMISSION: "this user may not open /dev/nvidia*: check their modes",
    }
    code = getattr(exc, "value", None)
    return NvmlUnavailable(f"NVML: {exc}", fixes.get(code, "run `nvidia-smi` for details"))


def check(root: NodeRoot) -> LayerResult:
    if not root.is_live:
        return not_applicable(LAYER, f"NVML asks the running driver: skipped with --root {root.base}")
    try:
        report = read()
    except NvmlUnavailable as exc:
        if exc.fix is None:
            return not_applicable(LAYER, str(exc))
        return problem(LAYER, str(exc), fix=exc.fix, docs=upstream_docs.DRIVER)
    if not report.gpus:
        return problem(
            LAYER, "NVML sees no GPU", fix="fix the pci and driver layers first", docs=upstream_docs.DRIVER
        )
    listed = "; ".join(f"GPU {i}: {gpu}" for i, gpu in enumerate(report.gpus))
    return ok(LAYER, f"driver {report.driver_version}; {listed}")
