"""What the linted set says about containerd's default runtime on the GPU nodes (GS004).

A pod without ``runtimeClassName`` gets its GPUs only where nvidia is containerd's default
runtime, or where the devices reach it through CDI whatever the runtime. The set may say so
itself, in files that are not Kubernetes objects (the loader reads them like any document):

- a Talos machine-config patch (``machine.files``) or full machine config, a talhelper
  ``talconfig.yaml`` (patches inline as YAML strings, ``nodes[].machineFiles``) or an Omni config
  patch (``spec.data``), writing containerd config with ``default_runtime_name`` into
  ``/etc/cri/conf.d/`` (https://www.talos.dev/latest/talos-guides/configuration/nvidia-gpu/), in
  the TOML table containerd reads for the nodes' CRI config version (``containerdconfig.CRI_DEFAULT_TABLES``:
  version 3 from Talos v1.8 on, per the set's installer image or ``talosVersion``, else the
  drop-in's own ``version``; neither said: version 3, today's Talos, assumed). In the other table the key
  is not read and runc stays the default: that is evidence of runc, and a pitfall of its own
  (``misplaced_defaults``, GS004). The containerd 1.x table where nothing says the release is
  no evidence either way (Talos v1.7 and older read it), only a pitfall to check;
- a Karpenter node class on Bottlerocket for a GPU node pool (``hostdriver.bottlerocket_node_classes``):
  Bottlerocket's NVIDIA variants make nvidia containerd's default runtime
  (https://github.com/bottlerocket-os/bottlerocket-core-kit/blob/a10182f974abd19de803bb7a324b5a0bdeab4ced/packages/containerd/containerd-config-toml_k8s_nvidia_containerd_sock:
  ``default_runtime_name = "nvidia"``, the containerd template of the ``k8s`` variants' ``nvidia`` flavor);
- a K3s or RKE2 ``config.yaml`` with ``default-runtime`` (the agent's "Set the default runtime in
  containerd");
- the GPU Operator (a chart release or a ``ClusterPolicy``): its toolkit makes nvidia the default
  unless ``CONTAINERD_SET_AS_DEFAULT`` is false (the toolkit's own default is true); from chart
  v25.10.0 on, ``cdi.enabled`` is on by default and containerd injects the devices through CDI
  (https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/cdi.html);
- a host script or setup note of the set that makes nvidia the default runtime
  (``input/hostscripts``: ``nvidia-ctk runtime configure --set-as-default``, containerd's
  ``default_runtime_name = "nvidia"``, Docker's or K3s's ``default-runtime``);
- NVIDIA's device plugin chart before 0.12.0, which has no ``runtimeClassName`` value: its
  plugin reads GPUs through NVML, so it runs only where nvidia is the default runtime;
- on kubeadm, NVIDIA's static device plugin DaemonSet without ``runtimeClassName``, as NVIDIA
  publishes it: the plugin's README makes nvidia containerd's default runtime a prerequisite
  (https://github.com/NVIDIA/k8s-device-plugin#prerequisites), and kubeadm has no convention
  of its own. On K3s, RKE2, k0s and Talos, whose documented way is the ``nvidia``
  RuntimeClass, the same DaemonSet is the mistake GS004 is for, not evidence.

On OpenShift (``facts/openshift.py``: its API groups, an OperatorHub Subscription, the GPU Operator's
``platform.openshift``) CRI-O runs the pods and the GPU Operator's toolkit installs NVIDIA's OCI hook
into CRI-O's hooks folder, which CRI-O applies to every container (NVIDIA/gpu-operator
``controllers/object_controls.go``, the toolkit's ``crio-hooks`` volume;
https://docs.nvidia.com/datacenter/cloud-native/openshift/latest/index.html): that evidence wins over
any containerd setting of the set, which CRI-O does not read.

Other containerd configs of the set (a ConfigMap's value, a K3s or RKE2 ``config.toml.tmpl`` or
``config-v3.toml.tmpl``, a ``config.toml``: ``containerdconfig``) are no evidence (nothing says
which nodes read them), but a ``version = 3`` config that keeps its default runtime or runtime
tables in version 2's table, where containerd 2 does not read them, is the same pitfall
(``misplaced_defaults``). The evidence is a function of the documents given (one set, or one root
of a set), computed once per context.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gpustack.lint.charts import chartkeys, chartversions
from gpustack.lint.facts import (
    clusterpolicy,
    containerdconfig,
    deviceplugins,
    hostdriver,
    hostscripts,
    openshift,
    registered,
    talos,
)
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
CONTAINERD_PLUGIN = "io.containerd."  # a ConfigMap value that may be containerd config


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
    which are the GPU nodes). Evidence of OpenShift wins over the rest (CRI-O reads none of it)."""
    return ctx.memo(("runtimeevidence",), lambda: _verdict(ctx))


@dataclass(frozen=True)
class Misplaced:
    """A CRI config whose ``default_runtime_name`` (or runtime table) sits in a table containerd
    does not read."""

    resource: Resource
    path: Path
    where: str  # the config, for messages: ``Talos CRI drop-in /etc/cri/conf.d/…``, ``ConfigMap …``
    said: str  # ``default_runtime_name = "nvidia"``, ``the runtime table runtimes.nvidia``
    table: str
    version: int  # the CRI config version the nodes' containerd reads (assumed 3 when not known)
    known: str | None  # what says the version (the drop-in's ``version``, a Talos release); None: assumed
    runtime_table: str | None = None  # the runtime a misplaced runtimes table means to register

    @property
    def wanted(self) -> str:
        return containerdconfig.CRI_DEFAULT_TABLES[self.version]

    @property
    def certain(self) -> bool:
        """Whether the table is wrong whatever the release: the version is known, or the table is
        neither containerd's 1.x nor its 2.x one."""
        return self.known is not None or self.table not in containerdconfig.CRI_DEFAULT_TABLES.values()


def misplaced_defaults(ctx: LintContext) -> tuple[Misplaced, ...]:
    """The set's CRI configs that name a default runtime other than runc, or a runtime, in a table
    containerd does not read, so that runc stays the default."""
    return _documents(ctx)[1]


def _verdict(ctx: LintContext) -> Evidence | None:
    hooked = [Evidence(True, resource, path, f"{what}: on OpenShift CRI-O applies NVIDIA's OCI hook to every container")
              for resource, path, what in openshift.evidence(ctx)]
    if hooked:
        return hooked[0]
    found = [*_documents(ctx)[0], *_bottlerocket(ctx), *_from_releases(ctx), *_from_static_plugins(ctx)]
    if not found or len({evidence.gpus_without_class for evidence in found}) > 1:
        return None
    return found[0]


# --- node configs -----------------------------------------------------------------------------


def _documents(ctx: LintContext) -> tuple[tuple[Evidence, ...], tuple[Misplaced, ...]]:
    return ctx.memo(("runtimeevidence", "documents"), lambda: _read_documents(ctx))


def _read_documents(ctx: LintContext) -> tuple[tuple[Evidence, ...], tuple[Misplaced, ...]]:
    reader = _DropIns(_talos_config_version(ctx))
    for resource in ctx.resources:
        if resource.kind is not None and resource.kind != "ConfigMap":  # nodes' files have no kind
            continue
        if (runtime := k3s_default_runtime(resource)) is not None:
            reader.evidence.append(
                Evidence(runtime == "nvidia", resource, ("default-runtime",), f"K3s/RKE2 config sets default-runtime: {runtime}"))
        elif resource.kind == "ConfigMap":
            reader.config_map(resource)
        elif hostscripts.says(resource, hostscripts.KEY):
            reader.evidence.append(Evidence(
                True, resource, (hostscripts.KEY,), f"the host script {hostscripts.described(resource)} makes nvidia the default runtime"))
        elif containerdconfig.is_config_file(resource):
            text = resource.data[containerdconfig.FILE_KEY]
            reader.config(resource, (containerdconfig.FILE_KEY,), f"containerd config {os.path.basename(resource.file)}", text,
                          containerdconfig.implied_version(resource.file))
        elif resource.kind is None:
            for path, config in talos.machine_configs(resource):
                reader.files(resource, (*path, "machine", "files"), get_value(config, "machine", "files"))
            if talos.is_talconfig(resource):
                for index, node in enumerate(resource.data["nodes"]):
                    if isinstance(node, Mapping):
                        reader.files(resource, ("nodes", index, "machineFiles"), node.get("machineFiles"))
    return tuple(reader.evidence), tuple(reader.misplaced)


def _talos_config_version(ctx: LintContext) -> tuple[int, str] | None:
    """The CRI config version the set's Talos releases run (and what says it), when they agree."""
    releases = hostdriver.host_stack(ctx).releases
    versions = {talos.cri_config_version(release) for _, release in releases}
    if len(versions) != 1:
        return None
    where, release = releases[0]
    return versions.pop(), f"Talos v{release[0]}.{release[1]}, per {where}"


class _DropIns:
    """Talos ``machine.files`` entries in ``/etc/cri/conf.d/``: their evidence and misplaced keys;
    other containerd configs: their misplaced keys."""

    def __init__(self, release_version: tuple[int, str] | None) -> None:
        self.release_version = release_version
        self.evidence: list[Evidence] = []
        self.misplaced: list[Misplaced] = []

    def files(self, resource: Resource, path: Path, files: Any) -> None:
        for index, file in enumerate(files if isinstance(files, list) else ()):
            if not isinstance(file, Mapping) or not str(file.get("path", "")).startswith(talos.CRI_DROP_IN):
                continue
            content = file.get("content")
            where = (*path, index, "content")
            for found in containerdconfig.default_runtimes(content if isinstance(content, str) else ""):
                self._default(resource, where, str(file["path"]), found)

    def config_map(self, resource: Resource) -> None:
        data = resource.get(("data",))
        for key, text in data.items() if isinstance(data, Mapping) else ():
            if isinstance(text, str) and CONTAINERD_PLUGIN in text:
                self.config(resource, ("data", key), f"{resource.ref} ({key})", text, None)

    def config(self, resource: Resource, where: Path, what: str, text: str, implied: int | None) -> None:
        """A containerd config that is not a Talos drop-in: misplaced where its own version (or the
        one its file name implies) is 3 and it writes version 2's table, which containerd 2 does
        not read (a version 2 config is converted, so either table may be read: not judged)."""
        settings = containerdconfig.runtime_settings(text)
        read = {(s.table_entry, s.runtime) for s in settings if s.table == containerdconfig.CRI_DEFAULT_TABLES[3]}
        for found in settings:
            version = found.version or implied
            if version != 3 or found.table == containerdconfig.CRI_DEFAULT_TABLES[3] or found.runtime == "runc":
                continue
            if (found.table_entry, found.runtime) in read:  # written in both tables: version 3's is read
                continue
            known = "its version = 3" if found.version else f"K3s reads {containerdconfig.VERSION_3_TEMPLATE} as version 3"
            runtime = found.runtime if found.table_entry else None
            self.misplaced.append(Misplaced(resource, where, what, found.said, found.table, 3, known, runtime))

    def _default(self, resource: Resource, where: Path, file: str, found: containerdconfig.DefaultRuntime) -> None:
        said = f'Talos machine config writes default_runtime_name = "{found.runtime}" to {file}'
        version, known = self._version(found)
        if found.table is None or found.table == containerdconfig.CRI_DEFAULT_TABLES[version]:
            self.evidence.append(Evidence(found.runtime == "nvidia", resource, where, said))
            return
        if found.runtime == "runc":  # read or not, runc is the default
            self.evidence.append(Evidence(False, resource, where, said))
            return
        self.misplaced.append(Misplaced(resource, where, f"Talos CRI drop-in {file}",
                                        f'default_runtime_name = "{found.runtime}"', found.table, version, known))
        if known is None and found.table == containerdconfig.CRI_DEFAULT_TABLES[2]:
            return  # right for Talos v1.7 and older: the set does not say which
        self.evidence.append(Evidence(False, resource, where, f"{said} under [{found.table}], which containerd does not read "
                                      f"under CRI config version {version}"))

    def _version(self, found: containerdconfig.DefaultRuntime) -> tuple[int, str | None]:
        """The CRI config version the nodes' containerd reads: the Talos release's, else the one
        the drop-in declares, else today's Talos (3, assumed)."""
        if self.release_version is not None:
            return self.release_version
        if found.version in containerdconfig.CRI_DEFAULT_TABLES:
            return found.version, f"the drop-in's version = {found.version}"
        return 3, None


def _bottlerocket(ctx: LintContext) -> Iterator[Evidence]:
    for resource, path in hostdriver.bottlerocket_node_classes(ctx):
        yield Evidence(True, resource, path, f"{hostdriver.bottlerocket_subject(resource)} runs Bottlerocket, whose NVIDIA "
                       "variants make nvidia containerd's default runtime")


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
