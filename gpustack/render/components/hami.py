"""HAMi: one GPU split between pods by memory (nvidia.com/gpumem) and cores (nvidia.com/gpucores).

Values for the hami chart 2.10.0 (https://github.com/Project-HAMi/HAMi). HAMi's device plugin advertises
nvidia.com/gpu itself, so the spec checks refuse NVIDIA's device plugin on the same pools.

HAMi's device plugin is NVIDIA's, forked: it hands GPUs over as ``NVIDIA_VISIBLE_DEVICES`` by
default, which a pod's own env overrides, around HAMi's limits too (gpustack/render/gpu_isolation.py).
Its ``volume-mounts`` strategy is NVIDIA's code (``getAllocateResponse``,
https://github.com/Project-HAMi/HAMi/blob/v2.10.0/pkg/device-plugin/nvidiadevice/nvinternal/plugin/server.go),
set by the chart's ``devicePlugin.deviceListStrategy`` from chart 2.8; the plugin container is
privileged and the vGPU monitor has CAP_SYS_ADMIN (values.yaml), so both still see every GPU.
"""

from __future__ import annotations

from typing import Any

from gpustack.errors import Problem, SpecError
from gpustack.lint.charts.chartkeys import version_key
from gpustack.render import gpu_isolation
from gpustack.render.component import Contribution, RenderContext, chart_release
from gpustack.render.components import nfd, runtime
from gpustack.render.requests import requests
from gpustack.spec.models import GpuStack
from gpustack.spec.pools import hami_pool_labels, hami_pools

RELEASE = "hami"
NAMESPACE = "kube-system"  # where HAMi's README installs it
WAVE = 1  # with the other device plugins, after NFD
CHART_NODE_LABEL = "gpu"  # the chart's devicePlugin.nvidiaNodeSelector: {gpu: "on"}
SCHEDULER_NAME = "hami-scheduler"  # the chart's schedulerName
# The chart pulls kube-scheduler from a mirror (registry.cn-hangzhou.aliyuncs.com): from the
# Kubernetes project's own registry instead. On Kubernetes >= 1.22 it pulls the webhook's
# certificate generator from a personal Docker Hub copy of a 2021 release
# (liangjw/kube-webhook-certgen:v1.1.1). Its upstream, ingress-nginx's kube-webhook-certgen, was
# retired with ingress-nginx in March 2026 (https://kubernetes.io/blog/2025/11/11/ingress-nginx-retirement/);
# jkroepke/kube-webhook-certgen continues it with the same create/patch flags the chart passes
# (--cert-name, --key-name, --host, --namespace, --secret-name; --webhook-name,
# --patch-validating: https://github.com/jkroepke/kube-webhook-certgen#command-line-options), and
# kube-prometheus-stack 88.5.3 pins it at this tag (its values.yaml,
# prometheusOperator.admissionWebhooks.patch.image). HAMi's own images
# (docker.io/projecthami/hami) are the project's and stay.
KUBE_SCHEDULER_IMAGE = {"registry": "registry.k8s.io", "repository": "kube-scheduler"}
CERTGEN_IMAGE = {"registry": "ghcr.io", "repository": "jkroepke/kube-webhook-certgen", "tag": "1.8.7"}
# The chart publishes the scheduler's Service (extender and webhook on 443, its metrics) and the
# device plugin's vGPU monitor as NodePorts (31998, 31993, 31992) on every node. No client needs
# them there: kube-scheduler reaches the extender in its own pod (KubeSchedulerConfiguration's
# urlPrefix https://127.0.0.1:443), the API server the webhook through the Service
# (clientConfig.service), Prometheus the monitor through its endpoints (hami_monitoring.py)
# (https://github.com/Project-HAMi/HAMi/tree/master/charts/hami/templates/scheduler/configmap.yaml,
# .../scheduler/webhook.yaml).
SERVICE = {"type": "ClusterIP"}
FIRST_LIST_STRATEGY = (2, 8, 0)  # the first chart with devicePlugin.deviceListStrategy


def values(stack: GpuStack) -> dict[str, Any]:
    hami = stack.spec.sharing.hami
    device_plugin: dict[str, Any] = {
        "deviceSplitCount": hami.splitCount,
        "deviceMemoryScaling": hami.memoryScaling,
        "deviceCoreScaling": hami.coreScaling,
        # The chart's README assumes nvidia is containerd's default runtime; K3s registers it as
        # RuntimeClass nvidia only, which K3s and the runtime module create.
        "runtimeClassName": runtime.RUNTIME_CLASS,
        "nvidiaNodeSelector": _node_selector_values(stack),
    }
    tolerations = nfd.gpu_tolerations(stack, chart_defaults=())
    if tolerations:
        device_plugin["tolerations"] = tolerations
    strategy = gpu_isolation.plugin_strategy(stack)
    if strategy:
        device_plugin["deviceListStrategy"] = strategy
    device_plugin["resources"] = requests("device-plugin")
    device_plugin["monitor"] = {"resources": requests("hami-monitor")}
    device_plugin["service"] = dict(SERVICE)
    scheduler_image = dict(KUBE_SCHEDULER_IMAGE)
    if hami.schedulerImageTag:
        # Chart >= 2.7 key; the pre-2.7 scheduler.kubeScheduler.imageTag is
        # ignored by 2.10. Unset, the chart derives the tag from the cluster version.
        scheduler_image["tag"] = hami.schedulerImageTag
    scheduler: dict[str, Any] = {
        "kubeScheduler": {"image": scheduler_image, "resources": requests("hami-scheduler")},
        "extender": {"resources": requests("hami-scheduler")},
        # Explicit, since pods reach hami-scheduler through it unless they name it themselves.
        "admissionWebhook": {"enabled": hami.admissionWebhook},
        "patch": {"imageNew": dict(CERTGEN_IMAGE)},
        "service": dict(SERVICE),
    }
    return {"devicePlugin": device_plugin, "scheduler": scheduler}


def node_selector(stack: GpuStack) -> dict[str, str]:
    """NFD's GPU label (never the chart's ``gpu: "on"``, which nobody sets), plus
    the labels that single out HAMi's pools when it serves only some of them."""
    return {nfd.GPU_LABEL: "true", **hami_pool_labels(stack)}


def _node_selector_values(stack: GpuStack) -> dict[str, str | None]:
    # Helm merges maps with the chart's defaults: null removes its gpu: "on".
    return {CHART_NODE_LABEL: None, **node_selector(stack)}


def build(chart: Any, ctx: RenderContext) -> Contribution:
    stack = ctx.stack
    if not stack.spec.sharing.hami.enabled:
        return Contribution()
    if gpu_isolation.plugin_strategy(stack) and version_key(stack.spec.sharing.hami.version) < FIRST_LIST_STRATEGY:
        raise SpecError(Problem(
            f"hami chart {stack.spec.sharing.hami.version} has no devicePlugin.deviceListStrategy (from 2.8.0): its "
            "plugin would hand GPUs over in NVIDIA_VISIBLE_DEVICES, which the nodes' toolkit refuses from "
            "unprivileged containers; use hami 2.8.0 or newer, or set cluster.acceptVisibleDevicesEnvvar: true",
            ctx.spec_file, path="spec.sharing.hami.version"))
    release = chart_release(
        "hami",
        name=RELEASE,
        version=stack.spec.sharing.hami.version,
        namespace=NAMESPACE,
        values=values(stack),
        wave=WAVE,
    )
    return Contribution(releases=[release], notes=_notes(stack))


def _notes(stack: GpuStack) -> list[str]:
    pools = ", ".join(f"`{p.name}`" for p in hami_pools(stack))
    selector = ", ".join(f"`{key}={value}`" for key, value in node_selector(stack).items())
    hami = stack.spec.sharing.hami
    return [
        f"HAMi shares the GPUs of pools {pools}: each GPU is advertised as {hami.splitCount} × `nvidia.com/gpu`; "
        "pods ask for `nvidia.com/gpumem` (MiB) and `nvidia.com/gpucores` (%) next to `nvidia.com/gpu: 1`, "
        "and see only their share.",
        f"HAMi's device plugin runs on nodes labelled {selector} instead of the chart's `gpu=on`, "
        "which nothing sets unless a person labels each node by hand.",
        "HAMi's scheduler runs kube-scheduler "
        + (
            f"`{hami.schedulerImageTag}` (`scheduler.kubeScheduler.image.tag`)"
            if hami.schedulerImageTag
            else "at the cluster's own version, which chart 2.10 derives itself"
        )
        + "; `scheduler.kubeScheduler.imageTag` is the pre-2.7 key, which 2.10 ignores. It comes from registry.k8s.io, "
        "not the chart's mirror; the webhook's certificate generator is the maintained "
        f"`{CERTGEN_IMAGE['registry']}/{CERTGEN_IMAGE['repository']}:{CERTGEN_IMAGE['tag']}` (as in kube-prometheus-stack), "
        "not the chart's 2021 copy of the retired ingress-nginx one.",
        _scheduling_note(hami.admissionWebhook, hami.schedulerName),
        "HAMi's scheduler and vGPU monitor Services are ClusterIP, not the chart's NodePorts on every node: "
        f"read them with `kubectl -n {NAMESPACE} port-forward`.",
        "Inside a HAMi share, ratios such as vLLM's `--gpu-memory-utilization` apply to the share, not to the "
        "card (0.28 × 8000 MiB = 2240 MiB); Deployments on shared GPUs use `strategy: Recreate`, since a "
        "rolling update needs a second share that the card may not have.",
    ]


def _scheduling_note(webhook: bool, scheduler_name: bool) -> str:
    how = []
    if webhook:
        how.append(
            "HAMi's mutating webhook (`scheduler.admissionWebhook.enabled: true`) sets it on pods asking for HAMi "
            "resources; its failurePolicy is Ignore, so a pod created while the webhook is down would reach the "
            "default scheduler"
        )
    if scheduler_name:
        how.append("the rendered workloads on HAMi's pools name it themselves (`schedulerName`)")
    return f"Pods on shared GPUs must be placed by `{SCHEDULER_NAME}`: " + "; ".join(how) + "."
