"""GS011: a GPU plugin's driver root that does not match where the driver is installed.

DRA kubelet plugins and NVIDIA's device plugin look for the driver under ``nvidiaDriverRoot``
(env ``NVIDIA_DRIVER_ROOT``; HAMi's DRA plugin also reads ``HOST_DRIVER_ROOT``). Upstream's
default is ``/``, a host-installed driver; ``/run/nvidia/driver`` is the GPU Operator's
driver container mount (https://github.com/Project-HAMi/k8s-dra-driver). A HAMi DRA manifest
written for the operator, applied on a host driver: its init container waits forever for a driver
under /run/nvidia/driver (bind-mounting / there works around it; the value is the fix).
The reverse, ``/`` with the operator's driver, finds no driver either.

With ``--spec``: a warning when every pool's ``driver.source`` contradicts the root. Without
one: info only when the set itself says so, through a GPU Operator (ClusterPolicy or chart
release) whose ``driver.enabled`` is false (host driver) or on (operator driver).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator
from typing import Any

from gpustack.lint.context import LintContext
from gpustack.lint.facts import clusterpolicy, registered
from gpustack.lint.facts.consumers import env_vars
from gpustack.lint.facts.podspec import subject
from gpustack.lint.model import Hit, Path, PodSpec, Resource, Severity, get_value
from gpustack.lint.registry import Rule
from gpustack.lint.releases import dispatch

OPERATOR_ROOT = "/run/nvidia/driver"
HOST_ROOT = "/"
ROOTS = {HOST_ROOT: "host", OPERATOR_ROOT: "operator"}
ENV_NAMES = frozenset({"NVIDIA_DRIVER_ROOT", "HOST_DRIVER_ROOT"})
# The charts with a top-level nvidiaDriverRoot value: NVIDIA's device plugin and the DRA drivers.
ROOT_ROLES = ("device-plugin", "dra-driver")
WHERE = {"host": "a host-installed driver (at /)", "operator": f"the GPU Operator's driver container ({OPERATOR_ROOT})"}


def _source_of(root: Any) -> str | None:
    """``host`` or ``operator`` for the two known roots, None for any other value."""
    if not isinstance(root, str) or not root.strip():
        return None
    return ROOTS.get(posixpath.normpath(root.strip()).replace("//", "/"))


def _installed(ctx: LintContext) -> tuple[str, str, Severity] | None:
    """(driver source, what says so, severity): the spec's pools, else the set's GPU Operator."""
    if ctx.cluster is not None:
        sources = {pool.driver_source for pool in ctx.cluster.pools}
        if len(sources) != 1:
            return None
        source = sources.pop()
        return source, f"the spec's node pools use {WHERE[source]}", Severity.WARNING
    for resource in clusterpolicy.cluster_policies(ctx):
        return _operator(resource.get(("spec", "driver", "enabled")), str(resource.ref))
    for release in dispatch.releases(ctx):
        if release.chart == registered.chart_of_role("gpu-operator"):
            return _operator(get_value(release.values, "driver", "enabled"), str(release))
    return None


def _operator(enabled: Any, who: str) -> tuple[str, str, Severity]:
    source = "host" if enabled is False else "operator"
    setting = "driver.enabled: false" if enabled is False else "its driver on"
    return source, f"{who} ({setting}) means {WHERE[source]}", Severity.INFO


def _hit(resource: Resource, path: Path, setting: str, root: str, ctx: LintContext) -> Iterator[Hit]:
    installed = ctx.set_fact(_installed)
    found = _source_of(root)
    if installed is None or found is None or found == installed[0]:
        return
    source, because, severity = installed
    right = HOST_ROOT if source == "host" else OPERATOR_ROOT
    yield Hit(
        resource,
        path,
        f"{setting}, but {because}: the plugin finds no driver there and never starts "
        "(its init container waits forever)",
        severity=severity,
        fix=f"Set the driver root to {right}.",
    )


def check(pod: PodSpec, ctx: LintContext) -> Iterator[Hit]:
    if not pod.system_component:
        return
    for container in pod.containers():
        for var in env_vars(container):
            if var.name in ENV_NAMES and var.value is not None:
                setting = f"{subject(pod, container)} sets {var.name}={var.value}"
                yield from _hit(pod.resource, var.value_path, setting, var.value, ctx)


def check_values(ctx: LintContext) -> Iterator[Hit]:
    for release in dispatch.releases(ctx):
        root = get_value(release.values, "nvidiaDriverRoot")
        if release.chart in registered.names_of_roles(*ROOT_ROLES) and isinstance(root, str):
            resource, path = release.where("nvidiaDriverRoot")
            yield from _hit(resource, path, f"{release} sets nvidiaDriverRoot: {root}", root, ctx)


RULE = Rule("GS011", "pod", check, values=check_values, set_fact=_installed)
