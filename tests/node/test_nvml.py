"""The NVML layer against a stand-in for libnvidia-ml (nvidia-ml-py's functions replaced)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pynvml  # type: ignore[import-untyped]
import pytest

from gpustack.node import nvml
from gpustack.node.result import Status
from gpustack.node.root import NodeRoot

LIVE = NodeRoot()


def raises(code: int) -> Callable[..., Any]:
    def call(*_: Any) -> Any:
        raise pynvml.NVMLError(code)

    return call


@pytest.fixture
def h200(monkeypatch: pytest.MonkeyPatch) -> None:
    """One H200 as NVML describes it (KINDS: 143771 MiB), MIG off, driver 580.159.04."""
    fakes: dict[str, Callable[..., Any]] = {
        "nvmlInit": lambda: None,
        "nvmlShutdown": lambda: None,
        "nvmlSystemGetDriverVersion": lambda: "580.159.04",
        "nvmlDeviceGetCount": lambda: 1,
        "nvmlDeviceGetHandleByIndex": lambda index: index,
        "nvmlDeviceGetName": lambda _: b"NVIDIA H200",  # bytes, as older releases return
        "nvmlDeviceGetMemoryInfo": lambda _: SimpleNamespace(total=143771 * 2**20),
        "nvmlDeviceGetCudaComputeCapability": lambda _: (9, 0),
        "nvmlDeviceGetMigMode": lambda _: (pynvml.NVML_DEVICE_MIG_DISABLE, pynvml.NVML_DEVICE_MIG_DISABLE),
    }
    for name, fake in fakes.items():
        monkeypatch.setattr(pynvml, name, fake)


def test_nvml_describes_each_gpu(h200: None) -> None:
    result = nvml.check(LIVE)
    assert result.status is Status.OK
    assert result.detail == "driver 580.159.04; GPU 0: NVIDIA H200, 143771 MiB, compute 9.0, MIG disabled"


def test_nvml_on_a_gpu_without_mig(h200: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pynvml, "nvmlDeviceGetMigMode", raises(pynvml.NVML_ERROR_NOT_SUPPORTED))
    assert nvml.read().gpus[0].mig == "not supported"


def test_nvml_with_mig_enabled(h200: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pynvml, "nvmlDeviceGetMigMode", lambda _: (pynvml.NVML_DEVICE_MIG_ENABLE, 1))
    assert nvml.read().gpus[0].mig == "enabled"


@pytest.mark.parametrize(
    ("code", "fix"),
    [
        (pynvml.NVML_ERROR_LIBRARY_NOT_FOUND, "libnvidia-compute"),
        (pynvml.NVML_ERROR_DRIVER_NOT_LOADED, "driver layer"),
        (pynvml.NVML_ERROR_LIB_RM_VERSION_MISMATCH, "reboot"),
        (pynvml.NVML_ERROR_UNKNOWN, "nvidia-smi"),
    ],
)
def test_nvml_errors_are_problems_with_a_fix(h200: None, monkeypatch: pytest.MonkeyPatch, code: int, fix: str) -> None:
    monkeypatch.setattr(pynvml, "nvmlInit", raises(code))
    result = nvml.check(LIVE)
    assert result.status is Status.PROBLEM
    assert fix in str(result.fix)


def test_nvml_error_after_init_still_shuts_down(h200: None, monkeypatch: pytest.MonkeyPatch) -> None:
    shut: list[bool] = []
    monkeypatch.setattr(pynvml, "nvmlShutdown", lambda: shut.append(True))
    monkeypatch.setattr(pynvml, "nvmlDeviceGetCount", raises(pynvml.NVML_ERROR_GPU_IS_LOST))
    assert nvml.check(LIVE).status is Status.PROBLEM
    assert shut == [True]


def test_nvml_sees_no_gpu(h200: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pynvml, "nvmlDeviceGetCount", lambda: 0)
    assert nvml.check(LIVE).status is Status.PROBLEM


def test_nvml_without_nvidia_ml_py(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import raises ImportError
    result = nvml.check(LIVE)
    assert result.status is Status.NA
    assert "nvidia-ml-py is not installed" in result.detail


def test_nvml_is_not_asked_under_another_root(h200: None, l4_vm: Any) -> None:
    result = nvml.check(l4_vm.root)
    assert result.status is Status.NA
    assert "skipped with --root" in result.detail
