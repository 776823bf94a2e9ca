"""What the linted set says about containerd's default runtime on the GPU nodes (GS004).

A pod without ``runtimeClassName`` gets its GPUs only where nvidia is containerd's default
runtime, or where the devices reach it through CDI whatever the runtime. The set may say so
itself, in files that are not Kubernetes objects (the loader reads them like any document):

- a Talos machine-config patch (``machine.files``) or full machine config, or a talhelper
  ``talconfig.yaml`` (patches inline as YAML strings, ``nodes[].machineFiles``), writing
  containerd config with ``default_runtime_name`` into ``/etc/cri/conf.d/``
  (https://www.talos.dev/latest/talos-guides/configuration/nvidia-gpu/);
- a K3s or RKE2 ``config.yaml`` with ``default-runtime`` (the agent's "Set the default runtime in
  containerd");
- the GPU Operator (a chart release or a ``ClusterPolicy``): its toolkit makes nvidia the default
  unless ``CONTAINERD_SET_AS_DEFAULT`` is false (the toolkit's own default is true); from chart
  v25.10.0 on, ``cdi.enabled`` is on by default and containerd injects the devices through CDI
  (https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/cdi.html);
- NVIDIA's device plugin chart before 0.12.0, which has no ``runtimeClassName`` value: its
  plugin reads GPUs through NVML, so it runs only where nvidia is the default runtime;
- on kubeadm, NVIDIA's static device plugin DaemonSet without ``runtimeClassName``, as NVIDIA
  publishes it: the plugin's README makes nvidia containerd's default runtime a prerequisite
  (https://github.com/NVIDIA/k8s-device-plugin#prerequisites), and kubeadm has no convention
  of its own. On K3s, RKE2, k0s and Talos, whose documented way is the ``nvidia``
  RuntimeClass, the same DaemonSet is the mistake GS004 is for, not evidence.

Containerd TOML outside YAML is not read: the linter reads YAML and JSON only. The evidence is a
function of the documents given (one set, or one root of a set), computed once per context.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gpustack.lint.charts import chartkeys, chartversions
from gpustack.lint.facts import clusterpolicy, deviceplugins, registered, talos
from gpustack.lint.facts.clusterconfig import k3s_default_runtime
from gpustack.lint.model import Path, Resource, get_value
from gpustack.lint.releases import dispatch

if TYPE_CHECKING:
    from gpustack.lint.context import LintContext

SET_AS_DEFAULT = ("CONTAINERD_SET_AS_DEFAULT", "NVIDIA_RUNTIME_SET_AS_DEFAULT")
CDI_BY_DEFAULT = (25, 10, 0)  # the first GPU Operator chart with cdi.enabled: true
PLUGIN_RUNTIME_CLASS = (0, 12, 0)  # the first nvidia-device-plugin chart with runtimeClassName
STATIC_PLUGIN_DISTRIBUTION = "kubeadm"  # where NVIDIA's static plugin manifest is evidence
_FALSE = frozenset({"false", "0", "f"})


@dataclass(frozen=True)
class Evidence:
    """One place in the set that settles how GPU pods without a RuntimeClass start."""

    gpus_without_class: bool  # True: nvidia is the default, or CDI injects; False: runc is
    resource: Resource
    path: Path
    what: str  # for messages: what the place says

    def __str__(self) -> str:
        line, _ = self.resource.locate(self.path)
        return f"{self.what}, {self.resource.file}:{line}"


def default_runtime(ctx: LintContext) -> Evidence | None:
    """The set's verdict: the first evidence found when all of it agrees, else None (no
    evidence, or some saying nvidia and some runc: the nodes differ and the set cannot tell
    which are the GPU nodes)."""
    return ctx.memo(("runtimeevidence",), lambda: _verdict(ctx))


def _verdict(ctx: LintContext) -> Evidence | None:
    found = [*_from_documents(ctx.resources), *_from_releases(ctx), *_from_static_plugins(ctx)]
    if not found or len({evidence.gpus_without_class for evidence in found}) > 1:
        return None
    return found[0]


# --- node configs -----------------------------------------------------------------------------


def _from_documents(resources: tuple[Resource, ...]) -> Iterator[Evidence]:
    for resource in resources:
        if (runtime := k3s_default_runtime(resource)) is not None:
            yield Evidence(runtime == "nvidia", resource, ("default-runtime",), f"K3s/RKE2 config sets default-runtime: {runtime}")
        elif talos.is_talconfig(resource):
            yield from _talconfig(resource)
        elif resource.kind is None:
            yield from _machine_files(resource, (), resource.data)


def _talconfig(resource: Resource) -> Iterator[Evidence]:
    """Its patches' ``machine.files`` and its nodes' ``machineFiles``."""
    for path, patch in talos.talconfig_patches(resource):
        yield from _machine_files(resource, path, patch)
    for index, node in enumerate(resource.data["nodes"]):
        if isinstance(node, Mapping):
            yield from _files(resource, ("nodes", index, "machineFiles"), node.get("machineFiles"))


def _machine_files(resource: Resource, path: Path, config: Mapping[str, Any]) -> Iterator[Evidence]:
    """A Talos machine config (or patch): ``machine.files``."""
    yield from _files(resource, (*path, "machine", "files"), get_value(config, "machine", "files"))


def _files(resource: Resource, path: Path, files: Any) -> Iterator[Evidence]:
    for index, file in enumerate(files if isinstance(files, list) else ()):
        if not isinstance(file, Mapping) or not str(file.get("path", "")).startswith(talos.CRI_DROP_IN):
            continue
        content = file.get("content")
        for runtime in talos.DEFAULT_RUNTIME.findall(content if isinstance(content, str) else ""):
            yield Evidence(
                runtime == "nvidia",
                resource,
                (*path, index, "content"),
                f"Talos machine config writes default_runtime_name = \"{runtime}\" to {file['path']}",
            )


# --- the GPU Operator and the device plugin ---------------------------------------------------


def _from_releases(ctx: LintContext) -> Iterator[Evidence]:
    for release in dispatch.releases(ctx):
        if release.chart == registered.chart_of_role("gpu-operator"):
            resource, path = release.where("toolkit")
            yield from _operator(release.values, resource, path, f"{release}", _cdi_by_default(release.version))
        elif release.chart == registered.chart_of_role("device-plugin") and _before(release.version, PLUGIN_RUNTIME_CLASS):
            yield Evidence(
                True,
                release.resource,
                release.path,
                f"{release} has no runtimeClassName value (added in 0.12.0): its plugin reads GPUs only where nvidia "
                "is the default runtime",
            )
    for resource in clusterpolicy.cluster_policies(ctx):
        spec = resource.get(("spec",))
        if isinstance(spec, Mapping):
            yield from _operator(spec, resource, ("spec", "toolkit"), str(resource.ref), cdi_default=False)


def _from_static_plugins(ctx: LintContext) -> Iterator[Evidence]:
    """On kubeadm, NVIDIA's device plugin DaemonSets that set no runtimeClassName."""
    if ctx.distribution != STATIC_PLUGIN_DISTRIBUTION:
        return
    for resource in ctx.of_kind("DaemonSet"):
        for plugin in deviceplugins.device_plugins(resource, ctx.pods_of(resource)):
            if plugin.vendor == "nvidia" and plugin.pod is not None and not plugin.pod.spec.get("runtimeClassName"):
                yield Evidence(
                    True,
                    resource,
                    plugin.pod.path,
                    f"{plugin} sets no runtimeClassName on kubeadm, as NVIDIA's static manifest: its README makes "
                    "nvidia containerd's default runtime a prerequisite",
                )


def _operator(values: Mapping[str, Any], resource: Resource, path: Path, name: str, cdi_default: bool) -> Iterator[Evidence]:
    """The GPU Operator's ``cdi`` and ``toolkit`` settings (chart values or ClusterPolicy spec)."""
    cdi = get_value(values, "cdi", "enabled")
    if cdi is True or (cdi is None and cdi_default):
        yield Evidence(True, resource, path, f"{name} injects GPUs through CDI (cdi.enabled)")
        return
    if get_value(values, "toolkit", "enabled") is False:
        return  # the host's toolkit: the set says nothing of its default
    setting = _set_as_default(get_value(values, "toolkit", "env"))
    default = setting is None or setting.lower() not in _FALSE
    said = "leaves CONTAINERD_SET_AS_DEFAULT at true" if setting is None else f"sets CONTAINERD_SET_AS_DEFAULT={setting}"
    yield Evidence(default, resource, path, f"{name}'s toolkit {said}")


def _set_as_default(env: Any) -> str | None:
    for item in env if isinstance(env, list) else ():
        if isinstance(item, Mapping) and item.get("name") in SET_AS_DEFAULT and item.get("value") is not None:
            value = item["value"]
            return str(value).lower() if isinstance(value, bool) else str(value)
    return None


def _cdi_by_default(version: str | None) -> bool:
    """Whether the chart version that will be installed turns CDI on by default (v25.10.0 on);
    a range or no pin: the newest version gpustack knows inside it."""
    resolved = chartversions.resolve(registered.chart_of_role("gpu-operator"), version).version or version
    return resolved is not None and chartkeys.version_key(resolved) >= CDI_BY_DEFAULT


def _before(version: str | None, first: tuple[int, ...]) -> bool:
    """Whether a release pins an exact chart version older than ``first`` (ranges and no pin: no)."""
    exact = version is not None and re.fullmatch(r"v?\d+\.\d+\.\d+", version.strip())
    return bool(exact) and chartkeys.version_key(str(version)) < first
