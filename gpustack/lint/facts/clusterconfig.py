"""What cluster config files in the set say: the Kubernetes version and each component's
feature gates.

Cluster configs are not Kubernetes objects; the loader reads them like any other document:

- K3s ``config.yaml`` and ``config.yaml.d/*.yaml``: no apiVersion or kind;
  recognised by its component argument keys (``kube-apiserver-arg``, ``kubelet-arg``, …, also
  with K3s' appending ``+`` suffix), each a list of ``flag=value`` strings (or one string);
- kubeadm: ``ClusterConfiguration`` (``apiServer``/``controllerManager``/``scheduler``
  ``extraArgs``, a list of ``{name, value}`` in v1beta4 and a map before; ``featureGates``
  are kubeadm's own), ``InitConfiguration``/``JoinConfiguration``
  (``nodeRegistration.kubeletExtraArgs``) and ``KubeletConfiguration`` (``featureGates``).

The cluster's Kubernetes version comes from ``--kubernetes-version``, else the spec, else
the set: kubeadm's ``kubernetesVersion`` or a K3s system-upgrade-controller ``Plan``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from gpustack.lint.context import LintContext
from gpustack.lint.model import Path, Resource

KUBEADM = "kubeadm"  # kubeadm's own feature gates (ClusterConfiguration.featureGates)
# K3s config keys → component (names as in gpustack.spec.featuregates)
K3S_ARGS = {
    "kube-apiserver-arg": "apiserver",
    "kube-controller-manager-arg": "controller-manager",
    "kube-scheduler-arg": "scheduler",
    "kubelet-arg": "kubelet",
    "kube-proxy-arg": "kube-proxy",
    "kube-cloud-controller-manager-arg": "cloud-controller-manager",
}
_KUBEADM_SECTIONS = {"apiServer": "apiserver", "controllerManager": "controller-manager", "scheduler": "scheduler"}
_VERSION = re.compile(r"^v?1\.(\d+)(?:\.\d+)?(?:[-+].*)?$")
_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})  # Go's strconv.ParseBool
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})


def minor_of(version: Any) -> int | None:
    """``1.36``, ``v1.36.4+k3s1`` → 36."""
    match = _VERSION.match(version.strip()) if isinstance(version, str) else None
    return int(match.group(1)) if match else None


@dataclass(frozen=True)
class ClusterVersion:
    minor: int
    source: str  # how a message says where it comes from


def kubernetes_version(ctx: LintContext) -> ClusterVersion | None:
    if (minor := minor_of(ctx.kubernetes_version)) is not None:
        return ClusterVersion(minor, "--kubernetes-version")
    if ctx.cluster is not None:  # gpustack.lint.facts.pools.ClusterFacts
        return ClusterVersion(ctx.cluster.minor, "the spec")
    for resource in ctx.of_kind("ClusterConfiguration", "Plan"):
        if resource.kind == "ClusterConfiguration" and resource.api_group == "kubeadm.k8s.io":
            version = resource.get(("kubernetesVersion",))
        elif resource.kind == "Plan" and resource.api_group == "upgrade.cattle.io":
            version = resource.get(("spec", "version"))
        else:
            continue
        if (minor := minor_of(version)) is not None:
            return ClusterVersion(minor, describe(resource))
    return None


@dataclass(frozen=True)
class GateSetting:
    """One feature gate set for one component in a config file."""

    resource: Resource
    path: Path
    component: str
    gate: str
    value: bool

    @property
    def where(self) -> str:
        return describe(self.resource)


def describe(resource: Resource) -> str:
    """How a message names a config document: ``K3s config (config.yaml)``, ``ClusterConfiguration (kubeadm.yaml)``."""
    if resource.ref.name:
        return str(resource.ref)
    return f"{resource.kind or 'K3s config'} ({resource.file})"


def is_k3s_config(resource: Resource) -> bool:
    return resource.kind is None and any(key.rstrip("+") in K3S_ARGS for key in resource.data)


def k3s_default_runtime(resource: Resource) -> str | None:
    """The containerd default runtime a K3s or RKE2 config sets (``default-runtime``), if any."""
    runtime = resource.data.get("default-runtime") if resource.kind is None else None
    return runtime if isinstance(runtime, str) else None


def gate_settings(resources: tuple[Resource, ...]) -> Iterator[GateSetting]:
    for resource in resources:
        if is_k3s_config(resource):
            yield from _k3s(resource)
        elif (group := resource.api_group) == "kubeadm.k8s.io":
            yield from _kubeadm(resource)
        elif resource.kind == "KubeletConfiguration" and group == "kubelet.config.k8s.io":
            yield from _gate_map(resource, ("featureGates",), "kubelet")


def _k3s(resource: Resource) -> Iterator[GateSetting]:
    for key, value in resource.data.items():
        component = K3S_ARGS.get(key.rstrip("+"))
        if component is None:
            continue
        items = [((key, i), item) for i, item in enumerate(value)] if isinstance(value, list) else [((key,), value)]
        for path, item in items:
            flag, _, argument = str(item).lstrip("-").partition("=")
            if flag == "feature-gates":
                yield from _gate_list(resource, path, component, argument)


def _kubeadm(resource: Resource) -> Iterator[GateSetting]:
    if resource.kind == "ClusterConfiguration":
        for section, component in _KUBEADM_SECTIONS.items():
            yield from _extra_args(resource, (section, "extraArgs"), component)
        yield from _gate_map(resource, ("featureGates",), KUBEADM)
    elif resource.kind in ("InitConfiguration", "JoinConfiguration"):
        yield from _extra_args(resource, ("nodeRegistration", "kubeletExtraArgs"), "kubelet")


def _extra_args(resource: Resource, path: Path, component: str) -> Iterator[GateSetting]:
    args = resource.get(path)
    if isinstance(args, list):  # v1beta4: [{name, value}], names without dashes
        for index, arg in enumerate(args):
            if isinstance(arg, Mapping) and arg.get("name") == "feature-gates":
                yield from _gate_list(resource, (*path, index, "value"), component, str(arg.get("value", "")))
    elif isinstance(args, Mapping) and "feature-gates" in args:  # v1beta3: a map
        yield from _gate_list(resource, (*path, "feature-gates"), component, str(args["feature-gates"]))


def _gate_list(resource: Resource, path: Path, component: str, text: str) -> Iterator[GateSetting]:
    """``A=true,B=false`` as components parse ``--feature-gates`` (an unreadable value: skipped)."""
    for pair in text.split(","):
        gate, _, value = pair.strip().partition("=")
        if gate and (value.strip() in _TRUE or value.strip() in _FALSE):
            yield GateSetting(resource, path, component, gate.strip(), value.strip() in _TRUE)


def _gate_map(resource: Resource, path: Path, component: str) -> Iterator[GateSetting]:
    gates = resource.get(path)
    for gate, value in gates.items() if isinstance(gates, Mapping) else ():
        if isinstance(value, bool):
            yield GateSetting(resource, (*path, gate), component, str(gate), value)
