"""``dradevices.pool_gpu``: a pool's GPU as NVIDIA's DRA driver publishes it, judged by GFD's
product, never refusing a device whose real name (NVML's, hyphens or spaces) could pass."""

from __future__ import annotations

import pytest

from gpustack.lint.facts.dradevices import GPU_CLASS_SELECTOR, admits, pool_gpu

NAME = "device.attributes['gpu.nvidia.com'].productName"


@pytest.mark.parametrize(
    ("selector", "product", "admitted"),
    [
        (f"{NAME} == 'NVIDIA L4'", "NVIDIA-L4", True),
        (f"{NAME} == 'NVIDIA L4'", "NVIDIA-L40S", False),  # a prefix is no equality
        (f"{NAME} == 'NVIDIA A100-SXM4-80GB'", "NVIDIA-A100-SXM4-80GB", True),  # NVML keeps these hyphens
        (f"{NAME}.startsWith('NVIDIA A100-SXM4')", "NVIDIA-A100-SXM4-80GB", True),
        (f"{NAME}.startsWith('NVIDIA H100')", "NVIDIA-A100-SXM4-80GB", False),
        (f"{NAME}.contains('L40')", "NVIDIA-L4", False),
        (f"{NAME}.endsWith('80GB HBM3')", "NVIDIA-H100-80GB-HBM3", True),
        (f"{NAME} != 'NVIDIA L4'", "NVIDIA-L4", True),  # a test it does not read stays open
    ],
)
def test_a_pool_gpu_is_refused_only_where_no_real_name_could_pass(selector: str, product: str, admitted: bool) -> None:
    expressions = [GPU_CLASS_SELECTOR, selector]
    assert admits(expressions, pool_gpu(product, expressions)) is admitted


def test_a_pool_gpu_is_a_whole_gpu() -> None:
    mig_only = [GPU_CLASS_SELECTOR.replace("'gpu'", "'mig'")]
    assert admits(mig_only, pool_gpu("NVIDIA-L4", mig_only)) is False
