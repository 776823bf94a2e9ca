"""The CEL selectors of the spec's extra DeviceClasses, as render writes them and lint reads them.

A class selects its driver's devices of one type, narrowed by the spec's selectors. NVIDIA's
driver publishes whole GPUs (type gpu) and MIG devices (type mig, with their profile) alike, a
MIG device carrying its parent's productName (k8s-dra-driver-gpu,
cmd/gpu-kubelet-plugin/deviceinfo.go): without a type a class for whole GPUs admits MIG slices
(GS045). HAMi's driver publishes its shares as type hami-gpu (Project-HAMi/k8s-dra-driver,
cmd/hami-kubelet-plugin/hami_core.go).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpustack.spec.models.components import DeviceClassSpec

NVIDIA_DRIVER = "gpu.nvidia.com"


def device_type(spec: DeviceClassSpec, driver: str) -> list[str]:
    """The selectors of the kind of device the class means, for the DRA driver named ``driver``."""
    attributes = f"device.attributes['{driver}']"
    if driver != NVIDIA_DRIVER:
        return [f"{attributes}.type == 'hami-gpu'"]
    if spec.migProfile is None:
        return [f"{attributes}.type == 'gpu'"]
    return [f"{attributes}.type == 'mig'", f"{attributes}.profile == '{spec.migProfile}'"]


def class_selectors(spec: DeviceClassSpec, driver: str) -> list[str]:
    """Every CEL selector of the class: its driver, its device type, then the spec's own."""
    return [f"device.driver == '{driver}'", *device_type(spec, driver), *spec.selectors]
