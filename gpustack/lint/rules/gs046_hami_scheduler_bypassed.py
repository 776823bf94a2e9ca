"""GS046: a pod asks for HAMi's resources but nothing sends it to hami-scheduler.

HAMi shares a GPU by memory (``nvidia.com/gpumem``) and cores (``nvidia.com/gpucores``), and
only its scheduler (``hami-scheduler``) accounts for the shares: it picks the card and writes
the device annotations HAMi's device plugin reads at allocation. A pod reaches it when it names
it (``schedulerName: hami-scheduler``) or when HAMi's mutating webhook sets that on pods asking
for its resources (chart value ``scheduler.admissionWebhook.enabled``, true by default). With
the webhook off and no ``schedulerName``, the default scheduler places the pod: a gpumem-only
pod stays Pending (no node advertises the resource), one with ``nvidia.com/gpu`` lands by
count alone and HAMi's plugin fails its allocation
(https://github.com/Project-HAMi/HAMi/blob/master/charts/hami/values.yaml).

The rule needs HAMi in the set (its chart release or device plugin) to know the webhook's state;
``nvidia.com/gpu`` counts as a HAMi resource only then.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.lint.context import LintContext
from gpustack.lint.facts import deviceplugins, quantities
from gpustack.lint.model import Hit, PodSpec, Resource, get_value
from gpustack.lint.registry import Rule
from gpustack.lint.releases import dispatch

SCHEDULER = "hami-scheduler"
# The webhook HAMi's chart renders (templates/scheduler/webhook.yaml: name vgpu.hami.io).
WEBHOOK = "vgpu.hami.io"
FIX = (
    f"Set `schedulerName: {SCHEDULER}` on the pod template, or enable HAMi's webhook "
    "(chart value `scheduler.admissionWebhook.enabled: true`)."
)


def check(ctx: LintContext) -> Iterator[Hit]:
    hami = _hami(ctx)
    if hami is None:
        return
    webhook, where = hami
    for pod in ctx.pod_specs:
        if pod.system_component or not _asks_hami(pod):
            continue
        name = pod.spec.get("schedulerName")
        if name == SCHEDULER or webhook:
            continue
        path = (*pod.path, "schedulerName") if name else pod.path
        reason = f"names scheduler {name!r}" if name else "names no scheduler"
        yield Hit(
            pod.resource,
            path,
            f"asks for HAMi resources but {reason} and {where}: the default scheduler places it without HAMi's "
            "device accounting",
            fix=FIX,
        )


def _asks_hami(pod: PodSpec) -> bool:
    for container in pod.containers():
        for name in quantities.gpu_requests(container):
            if name == "nvidia.com/gpu" or quantities.is_shared_gpu_resource(name):
                return True
    return False


def _hami(ctx: LintContext) -> tuple[bool, str] | None:
    """Whether HAMi's webhook is on, and when it is off, a phrase saying why; None without HAMi in the set."""
    if any(_is_hami_webhook(r) for r in ctx.of_kind("MutatingWebhookConfiguration")):
        return True, ""
    for release in dispatch.releases(ctx):
        plugin = deviceplugins.release_plugin(release)
        if plugin is None or plugin.vendor != "hami":
            continue
        if get_value(release.values, "scheduler", "admissionWebhook", "enabled") is False:
            return False, f"{release} turns HAMi's webhook off"
        return True, ""
    plugins = [
        plugin
        for resource in ctx.of_kind("DaemonSet")
        for plugin in deviceplugins.device_plugins(resource, ctx.pods_of(resource))
        if plugin.vendor == "hami"
    ]
    if plugins:
        return False, f"{plugins[0]} runs without HAMi's webhook in the set"
    return None


def _is_hami_webhook(resource: Resource) -> bool:
    hooks = resource.data.get("webhooks")
    return isinstance(hooks, list) and any(isinstance(h, dict) and h.get("name") == WEBHOOK for h in hooks)


RULE = Rule("GS046", "set", check)
