"""GPU node groups the set declares, with the taints their nodes register with.

Without a spec, the set may still describe its GPU nodes:

- a Talos machine config or patch that loads the ``nvidia`` kernel module, or a talhelper node
  whose patches or schematic bring the NVIDIA driver (``facts/talos.py``): its taints are
  ``machine.nodeTaints`` (``value:Effect``), the kubelet's ``registerWithTaints``
  (``machine.kubelet.extraConfig``) and ``--register-with-taints`` (``extraArgs``), and
  talhelper's ``nodeTaints`` (https://www.talos.dev/latest/reference/configuration/v1alpha1/config/,
  https://budimanjojo.github.io/talhelper/latest/reference/configuration/);
- a Karpenter ``NodePool`` whose requirements or limits name GPUs (``karpenter.k8s.aws/instance-gpu-*``,
  the ``g`` and ``p`` instance categories, a ``nvidia.com/gpu`` limit): ``spec.template.spec.taints``
  (https://karpenter.sh/docs/concepts/nodepools/);
- an OpenShift ``MachineSet`` whose nodes are GPU instances (an AWS ``g``/``p`` instance type) or
  labelled for GPUs: ``spec.template.spec.taints``;
- an eksctl ``ClusterConfig`` node group (``nodeGroups``, ``managedNodeGroups``) of GPU instances
  (``instanceType``, every one of ``instanceTypes`` or ``instancesDistribution.instanceTypes``, or
  ``instanceSelector.gpus`` above 0): its ``taints``, a list of ``{key, value, effect}`` or the older
  map ``key: value:Effect`` (https://eksctl.io/usage/schema/);
- an AKS node pool of Azure Service Operator (``ManagedClustersAgentPool``,
  containerservice.azure.com) of an NVIDIA GPU size (``Standard_NC*``, ``ND*``, ``NV*``, not AMD's):
  its ``nodeTaints`` (``key=value:Effect``), and for a Spot pool (``scaleSetPriority: Spot``) the
  taint AKS adds to every Spot node, ``kubernetes.azure.com/scalesetpriority=spot:NoSchedule``
  (https://learn.microsoft.com/en-us/azure/aks/spot-node-pool);
- a GKE node pool of Config Connector (``ContainerNodePool``, container.cnrm.cloud.google.com) with
  NVIDIA ``nodeConfig.guestAccelerator`` or a GPU machine type (``a2-``, ``a3-``, ``a4-``, ``g2-``):
  its ``nodeConfig.taint`` (effects as GKE's API writes them, ``NO_SCHEDULE``);
- a K3s or RKE2 ``config.yaml`` whose ``node-taint`` or ``node-label`` names GPUs (a key under
  ``nvidia.com/`` or holding ``gpu``): its ``node-taint`` entries, ``key=value:Effect``
  (https://docs.k3s.io/cli/agent#node-labels-and-taints).

The groups are plain data (a rule's ``set_fact``, which the lint cache keys on): a name for
messages and each taint as ``(key, value, effect)``; ``taints_of`` makes them ``Taint`` again.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from gpustack.lint.facts import hostscripts, talos
from gpustack.lint.input.cloudpools import AKS_SPOT, AWS_GPU_INSTANCE, EFFECTS, GKE_GPU_MACHINES, azure_gpu, flag_taints
from gpustack.lint.facts.pools import Taint
from gpustack.lint.model import Resource, get_value

if TYPE_CHECKING:
    from gpustack.lint.context import LintContext

PlainTaint = tuple[str, str | None, str]  # key, value, effect
NodeGroup = tuple[str, tuple[PlainTaint, ...]]  # (what, taints)
_EFFECTS = frozenset({"NoSchedule", "PreferNoSchedule", "NoExecute"})
_GPU_FAMILY = re.compile(r"^[gp]\d[a-z0-9-]*$")  # AWS GPU instance families: g4dn, g6e, p5
AKS_SPOT_TAINT = Taint(*AKS_SPOT)
_GPU_REQUIREMENTS = ("karpenter.k8s.aws/instance-gpu-count", "karpenter.k8s.aws/instance-gpu-name",
                     "karpenter.k8s.aws/instance-gpu-manufacturer", "karpenter.k8s.aws/instance-gpu-memory")


# The kinds ``_groups`` reads (None: node files, scripts and Terraform, ``input/hostscripts``).
_GROUP_KINDS = ("NodePool", "MachineSet", "ClusterConfig", "ManagedClustersAgentPool", "ContainerNodePool", None)


def gpu_node_groups(ctx: LintContext) -> tuple[NodeGroup, ...]:
    """The set's GPU node groups, in input order."""
    return tuple(
        (what, tuple((t.key, t.value, t.effect) for t in taints))
        for resource in ctx.of_kind(*_GROUP_KINDS)
        for what, taints in _groups(resource)
    )


def autoscaled_gpu_nodes(ctx: LintContext) -> str | None:
    """What in the set adds GPU nodes on demand, if anything: a Karpenter NodePool (or v1alpha5
    Provisioner) of GPUs, or a cloud GPU pool with autoscaling (``input/cloudpools``). A pod that
    finds no free GPU there gets a new node."""
    for resource in ctx.of_kind("NodePool", "Provisioner", None):
        if resource.kind in ("NodePool", "Provisioner") and "karpenter" in (resource.api_version or "") \
                and karpenter_gpu(resource.data):
            return f"Karpenter {resource.kind} {resource.ref.name}"
        for pool in hostscripts.gpu_pools(resource):
            if pool.get("autoscales") is True:
                return f"{pool.get('what')} ({resource.file}:{pool.get('line')})"
    return None


def taints_of(group: NodeGroup) -> tuple[Taint, ...]:
    return tuple(Taint(*taint) for taint in group[1])


def _groups(resource: Resource) -> Iterator[tuple[str, tuple[Taint, ...]]]:
    data = resource.data
    if resource.kind == "NodePool" and karpenter_gpu(data):
        yield f"Karpenter NodePool {resource.ref.name}", _object_taints(get_value(data, "spec", "template", "spec", "taints"))
    elif resource.kind == "MachineSet" and _machineset_gpu(data):
        yield f"MachineSet {resource.ref.name}", _object_taints(get_value(data, "spec", "template", "spec", "taints"))
    elif resource.kind == "ClusterConfig" and str(resource.api_version or "").startswith("eksctl.io/"):
        yield from _eksctl(resource)
    elif resource.kind == "ManagedClustersAgentPool" and azure_gpu(get_value(data, "spec", "vmSize")):
        yield f"AKS node pool {resource.ref.name}", _aks_taints(data.get("spec"))
    elif resource.kind == "ContainerNodePool" and _gke_gpu(get_value(data, "spec", "nodeConfig")):
        taints = get_value(data, "spec", "nodeConfig", "taint")
        yield f"GKE node pool {resource.ref.name}", _object_taints(
            [{**t, "effect": EFFECTS.get(t.get("effect"), t.get("effect"))} for t in taints if isinstance(t, Mapping)]
            if isinstance(taints, list) else None
        )
    elif resource.kind is None and "node-taint" in data:
        yield from _k3s(resource)
    elif resource.kind is None and talos.is_talconfig(resource):
        yield from _talconfig(resource)
    elif resource.kind is None and talos.is_machine_config(resource) and talos.loads_nvidia_modules(data):
        yield f"Talos machine config {resource.file}", _machine_taints(data)
    else:
        for pool in hostscripts.gpu_pools(resource):
            taints = tuple(Taint(str(t[0]), t[1], str(t[2])) for t in pool.get("taints") or () if len(t) == 3)
            yield f"{pool.get('what')} ({resource.file}:{pool.get('line')})", taints


def _talconfig(resource: Resource) -> Iterator[tuple[str, tuple[Taint, ...]]]:
    """talhelper nodes that get the NVIDIA driver, each with its taints."""
    data = resource.data
    worker_patches = [patch for path, patch in talos.talconfig_patches(resource) if path[0] in ("patches", "worker")]
    worker_gpu = any(talos.loads_nvidia_modules(p) for p in worker_patches) or _schematic_gpu(get_value(data, "worker", "schematic"))
    for index, node in enumerate(data["nodes"]):
        if not isinstance(node, Mapping):
            continue
        own = [patch for path, patch in talos.talconfig_patches(resource) if path[:2] == ("nodes", index)]
        worker = not node.get("controlPlane")
        if not (any(talos.loads_nvidia_modules(p) for p in own) or _schematic_gpu(node.get("schematic"))
                or (worker and worker_gpu)):
            continue
        taints = [*_taint_map(node.get("nodeTaints")), *(_taint_map(get_value(data, "worker", "nodeTaints")) if worker else ())]
        for patch in (*own, *(worker_patches if worker else ())):
            taints += _machine_taints(patch)
        yield f"talhelper node {node.get('hostname', index)} ({resource.file})", tuple(taints)


def _eksctl(resource: Resource) -> Iterator[tuple[str, tuple[Taint, ...]]]:
    """eksctl node groups of GPU instances, each with its taints."""
    for section in ("nodeGroups", "managedNodeGroups"):
        groups = resource.data.get(section)
        for group in groups if isinstance(groups, list) else ():
            if isinstance(group, Mapping) and _eksctl_gpu(group):
                taints = group.get("taints")
                found = _object_taints(taints) if isinstance(taints, list) else tuple(_taint_map(taints))
                yield f"eksctl {section} {group.get('name', '?')} in {resource.file}", found


def _eksctl_gpu(group: Mapping[str, Any]) -> bool:
    listed = group.get("instanceTypes") or get_value(group, "instancesDistribution", "instanceTypes")
    types = [group["instanceType"]] if isinstance(group.get("instanceType"), str) else listed
    if isinstance(types, list) and types and all(isinstance(t, str) and AWS_GPU_INSTANCE.match(t) for t in types):
        return True
    gpus = get_value(group, "instanceSelector", "gpus")
    return isinstance(gpus, int) and not isinstance(gpus, bool) and gpus > 0


def _aks_taints(spec: Any) -> tuple[Taint, ...]:
    spec = spec if isinstance(spec, Mapping) else {}
    taints = [taint for text in _strings(spec.get("nodeTaints")) for taint in _flag_taints(text)]
    if str(spec.get("scaleSetPriority", "")).lower() == "spot":
        taints.append(AKS_SPOT_TAINT)
    return tuple(taints)


def _gke_gpu(config: Any) -> bool:
    if not isinstance(config, Mapping):
        return False
    accelerators = config.get("guestAccelerator")
    if isinstance(accelerators, list) and any(
        isinstance(a, Mapping) and "nvidia" in str(a.get("type", "")).lower() for a in accelerators
    ):
        return True
    return str(config.get("machineType", "")).startswith(GKE_GPU_MACHINES)


def _k3s(resource: Resource) -> Iterator[tuple[str, tuple[Taint, ...]]]:
    """A K3s/RKE2 node config whose taints or labels name GPUs."""
    taints = tuple(taint for text in _strings(resource.data.get("node-taint")) for taint in _flag_taints(text))
    labels = [text.partition("=")[0] for text in _strings(resource.data.get("node-label"))]
    if any(_names_gpu(key) for key in (*labels, *(t.key for t in taints))):
        yield f"K3s/RKE2 config {resource.file}", taints


def _strings(value: Any) -> list[str]:
    items = value if isinstance(value, list) else [value]
    return [item for item in items if isinstance(item, str)]


def _names_gpu(key: str) -> bool:
    return key.startswith("nvidia.com/") or "gpu" in key.lower()


def _machine_taints(config: Mapping[str, Any]) -> tuple[Taint, ...]:
    kubelet = get_value(config, "machine", "kubelet")
    kubelet = kubelet if isinstance(kubelet, Mapping) else {}
    flag = get_value(kubelet, "extraArgs", "register-with-taints")
    return (
        *_taint_map(get_value(config, "machine", "nodeTaints")),
        *_object_taints(get_value(kubelet, "extraConfig", "registerWithTaints")),
        *(_flag_taints(flag) if isinstance(flag, str) else ()),
    )


def _taint_map(taints: Any) -> Iterator[Taint]:
    """``key: value:Effect`` (``:Effect``, or ``Effect`` alone), as Talos and talhelper write them."""
    for key, text in (taints.items() if isinstance(taints, Mapping) else ()):
        value, _, effect = str(text).rpartition(":")
        if effect in _EFFECTS:
            yield Taint(str(key), value or None, effect)


def _flag_taints(text: str) -> Iterator[Taint]:
    """The kubelet's ``--register-with-taints``: ``key=value:Effect,key:Effect``."""
    for key, value, effect in flag_taints(text):
        yield Taint(str(key), value, str(effect))


def _object_taints(taints: Any) -> tuple[Taint, ...]:
    """core/v1 Taint objects: ``{key, value, effect}``."""
    return tuple(
        Taint(str(t["key"]), str(t["value"]) if t.get("value") is not None else None, str(t["effect"]))
        for t in (taints if isinstance(taints, list) else ())
        if isinstance(t, Mapping) and t.get("key") and t.get("effect") in _EFFECTS
    )


def _schematic_gpu(schematic: Any) -> bool:
    return isinstance(schematic, Mapping) and any(talos.nvidia_extensions(talos.official_extensions(schematic)))


def karpenter_gpu(data: Mapping[str, Any]) -> bool:
    """Whether a Karpenter NodePool's requirements or limits name GPUs (or those of a v1alpha5
    ``Provisioner``: ``spec.requirements``, ``spec.limits.resources``)."""
    if any(get_value(data, "spec", "limits", *under, "nvidia.com/gpu") is not None for under in ((), ("resources",))):
        return True
    listed = [get_value(data, "spec", "template", "spec", "requirements"), get_value(data, "spec", "requirements")]
    requirements = [item for found in listed if isinstance(found, list) for item in found]
    for item in requirements:
        if not isinstance(item, Mapping) or item.get("operator") not in ("In", "Exists", "Gt"):
            continue
        key, values = item.get("key"), [str(v) for v in item.get("values") or ()]
        if key in _GPU_REQUIREMENTS:
            return True
        if key == "karpenter.k8s.aws/instance-category" and values and set(values) <= {"g", "p"}:
            return True
        if key == "node.kubernetes.io/instance-type" and values and all(AWS_GPU_INSTANCE.match(v) for v in values):
            return True
        if key == "karpenter.k8s.aws/instance-family" and values and all(_GPU_FAMILY.match(v) for v in values):
            return True
    return False


def _machineset_gpu(data: Mapping[str, Any]) -> bool:
    instance = get_value(data, "spec", "template", "spec", "providerSpec", "value", "instanceType")
    return isinstance(instance, str) and bool(AWS_GPU_INSTANCE.match(instance))
