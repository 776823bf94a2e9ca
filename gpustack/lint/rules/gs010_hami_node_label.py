"""GS010: HAMi's device plugin waits for a node label nobody sets.

The HAMi chart's plugin DaemonSet selects ``gpu: "on"`` (``devicePlugin.nvidiaNodeSelector``,
``nvidianodeSelector`` up to v2.7; reference §7), a HAMi convention that neither NFD nor GFD
sets: no plugin pod is scheduled until someone runs ``kubectl label node … gpu=on``
(seed 001 §11). Helm merges a values map into the default one, so overriding the selector
with other keys keeps ``gpu: "on"`` unless it is set to null.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.lint import sets
from gpustack.lint.context import LintContext
from gpustack.lint.model import Hit, Resource
from gpustack.lint.registry import Rule

LABEL, VALUE = "gpu", "on"
SELECTOR_KEYS = ("nvidiaNodeSelector", "nvidianodeSelector")
FIX = (
    "Select nodes by a label NFD or GFD sets, e.g. `nvidia.com/gpu.present: \"true\"` or "
    "`feature.node.kubernetes.io/pci-10de.present: \"true\"` (with chart values, set `gpu: null`)."
)


def _selects_gpu_on(selector: object) -> bool:
    # An unquoted `gpu: on` reads as the boolean true (YAML 1.1), still meant as gpu=on.
    value = selector.get(LABEL) if isinstance(selector, dict) else None
    return value is True or value == VALUE


def check(resource: Resource, ctx: LintContext) -> Iterator[Hit]:
    pods = [pod for pod in ctx.pod_specs if pod.resource is resource]
    for plugin in sets.device_plugins(resource, pods):
        if plugin.vendor != "hami":
            continue
        if plugin.pod is not None and _selects_gpu_on(plugin.pod.spec.get("nodeSelector")):
            path = (*plugin.pod.path, "nodeSelector", LABEL)
        elif plugin.release is not None:
            selector = {LABEL: VALUE}  # the chart's default
            for key in SELECTOR_KEYS:
                user = sets.get_value(plugin.release.values, "devicePlugin", key, default={})
                selector = dict(sets.coalesce(selector, user if isinstance(user, dict) else {}))
            if not _selects_gpu_on(selector):
                continue
            path = plugin.path
        else:
            continue
        yield Hit(
            resource,
            path,
            f"{plugin} selects nodes labelled gpu=on, a label neither NFD nor GFD sets: "
            "no plugin pod runs until nodes are labelled by hand",
            fix=FIX,
        )


RULE = Rule("GS010", "object", check, frozenset({"DaemonSet", "HelmChart", "Application", "HelmRelease"}))
