"""The node layers under Kubernetes: driver, container toolkit, containerd's nvidia runtime.

Host-installed layers cannot be applied with kubectl: they are the README's host steps
(host_steps.py; on Talos, system extensions: talos_steps.py). The one Kubernetes object is
RuntimeClass ``nvidia``, emitted only where nobody else owns it: K3s registers its own when it
finds nvidia-container-runtime and the GPU Operator creates one (``operator.runtimeClass``). Two
owners would fight over it. Talos's toolkit extension registers the containerd runtime only, so
the RuntimeClass is gpustack's there as on kubeadm.
"""

from __future__ import annotations

from typing import Any

from gpustack.render.component import Contribution, RenderContext, add_object
from gpustack.spec.models import GpuStack

RUNTIME_CLASS = "nvidia"


def owns_runtime_class(stack: GpuStack) -> bool:
    """Whether gpustack must create RuntimeClass nvidia (kubeadm or Talos without the GPU Operator)."""
    return stack.spec.cluster.distribution in ("kubeadm", "talos") and not stack.spec.gpuOperator.enabled


def runtime_class() -> dict[str, Any]:
    return {
        "apiVersion": "node.k8s.io/v1",
        "kind": "RuntimeClass",
        "metadata": {"name": RUNTIME_CLASS},
        "handler": RUNTIME_CLASS,
    }


def build(chart: Any, ctx: RenderContext) -> Contribution:
    if owns_runtime_class(ctx.stack):
        add_object(chart, runtime_class())
    return Contribution()
