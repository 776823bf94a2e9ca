"""GPU node pools that scripts, notes and Terraform create on a managed cloud, with their taints.

A GPU pool is often tainted where it is created (``az aks nodepool add --node-taints
sku=gpu:NoSchedule``), not in any manifest; the node agents and GPU pods of the set must
tolerate those taints (GS028, GS048 through ``facts/node_groups``). Read:

- ``az aks nodepool add`` / ``az aks create`` with an NVIDIA GPU size (``--node-vm-size
  Standard_NC…``, ``ND…``, ``NV…``, less AMD's): ``--node-taints`` / ``--nodepool-taints``, and
  for a Spot pool (``--priority Spot``) the taint AKS puts on every Spot node
  (https://learn.microsoft.com/en-us/cli/azure/aks/nodepool#az-aks-nodepool-add,
  https://learn.microsoft.com/en-us/azure/aks/spot-node-pool);
- ``gcloud container node-pools create`` with an NVIDIA ``--accelerator`` or a GPU machine type:
  ``--node-taints`` (https://cloud.google.com/sdk/gcloud/reference/container/node-pools/create);
- Terraform: ``azurerm_kubernetes_cluster_node_pool`` (``vm_size``, ``node_taints``, ``priority``),
  ``google_container_node_pool`` (``node_config``'s ``guest_accelerator`` or ``machine_type``, and
  ``taint`` blocks), ``aws_eks_node_group`` (``instance_types`` or an NVIDIA ``ami_type``, and
  ``taint`` blocks), and the ``eks_managed_node_groups`` of the ``terraform-aws-modules/eks/aws``
  module (``taints``); a ``var.NAME`` the same file gives a default is read as that default (https://registry.terraform.io/providers/hashicorp/azurerm/latest/docs/resources/kubernetes_cluster_node_pool,
  https://registry.terraform.io/providers/hashicorp/google/latest/docs/resources/container_node_pool,
  https://registry.terraform.io/providers/hashicorp/aws/latest/docs/resources/eks_node_group).

Each pool is ``{line, says, what, taints: [[key, value, effect], …], autoscales}``; Terraform's
effects (``NO_SCHEDULE``) are written as Kubernetes writes them. ``autoscales``: the pool may grow
(``--enable-cluster-autoscaler``, ``--enable-autoscaling``, Terraform's autoscaling settings).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator, Mapping
from typing import Any

from gpustack.lint.input import terraform

# Taint effects, as Kubernetes writes them and as GKE's and EKS's APIs (and Terraform) do.
EFFECTS = {"NoSchedule": "NoSchedule", "PreferNoSchedule": "PreferNoSchedule", "NoExecute": "NoExecute",
           "NO_SCHEDULE": "NoSchedule", "PREFER_NO_SCHEDULE": "PreferNoSchedule", "NO_EXECUTE": "NoExecute"}
# Azure's NVIDIA GPU sizes (NC, ND, NV families), less AMD's (NVv4, ND MI300X):
# https://learn.microsoft.com/en-us/azure/virtual-machines/sizes/overview#gpu-accelerated
_AZURE_GPU = re.compile(r"^Standard_N[CDV]", re.IGNORECASE)
_AZURE_AMD = re.compile(r"as_v4$|MI\d{3}", re.IGNORECASE)
GKE_GPU_MACHINES = ("a2-", "a3-", "a4-", "g2-")  # GKE machine types with NVIDIA GPUs attached
AWS_GPU_INSTANCE = re.compile(r"^[gp]\d[a-z0-9-]*\.")  # AWS GPU instance types: g4dn.xlarge, p5.48xlarge
AKS_SPOT = ("kubernetes.azure.com/scalesetpriority", "spot", "NoSchedule")  # on every AKS Spot node
_AKS = re.compile(r"\baz\s+aks\s+(?:nodepool\s+add|create)\b")
_GKE = re.compile(r"\bgcloud\s+(?:beta\s+)?container\s+node-pools\s+create\b")
_TERRAFORM_POOL = re.compile(
    r'resource\s+"(azurerm_kubernetes_cluster_node_pool|google_container_node_pool|aws_eks_node_group)"\s+"([^"]+)"'
    r'|module\s+"([^"]+)"\s*\{'
)

Taint = list[str | None]
_VARIABLE = re.compile(r"\$\{var\.([A-Za-z0-9_-]+)\}")


def command_pool(line: str) -> dict[str, Any] | None:
    """The GPU node pool an ``az aks`` or ``gcloud`` command on ``line`` creates, if any."""
    match = _AKS.search(line) or _GKE.search(line)
    if match is None:
        return None
    try:
        words = shlex.split(line[match.start():].split("`", 1)[0], comments=True)
    except ValueError:
        return None
    flags = _flags(words)
    if words[0] == "az":
        size = flags.get("--node-vm-size") or flags.get("-s") or ""
        if not azure_gpu(size):
            return None
        taints = flag_taints(flags.get("--node-taints") or flags.get("--nodepool-taints") or "")
        if (flags.get("--priority") or "").lower() == "spot":
            taints.append(list(AKS_SPOT))
        if words[2] == "create":  # the cluster's first pool: --name is the cluster's
            name = flags.get("--nodepool-name") or "nodepool1"
        else:
            name = flags.get("--name") or flags.get("-n") or "?"
        return {"what": f"AKS node pool {name}", "taints": taints, "autoscales": "--enable-cluster-autoscaler" in flags}
    accelerator = flags.get("--accelerator") or ""
    if "nvidia" not in accelerator.lower() and not (flags.get("--machine-type") or "").startswith(GKE_GPU_MACHINES):
        return None
    after = words[words.index("create") + 1:] if "create" in words else []
    name = after[0] if after and not after[0].startswith("-") else "?"
    return {"what": f"GKE node pool {name}", "taints": flag_taints(flags.get("--node-taints") or ""),
            "autoscales": "--enable-autoscaling" in flags}


def terraform_pools(text: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line, pool) of each GPU node pool a Terraform file declares."""
    if not _TERRAFORM_POOL.search(text):
        return
    parsed = terraform.parse(text)
    if parsed is None:
        return
    lines = {(m.group(1) or "module", m.group(2) or m.group(3)): text.count("\n", 0, m.start()) + 1
             for m in _TERRAFORM_POOL.finditer(text)}
    defaults = {name: body.get("default") for block in parsed.get("variable", ()) for name, body in _items(block)
                if isinstance(body, Mapping)}
    for block in parsed.get("resource", ()):
        for kind, resources in _items(block):
            for name, body in _items(resources):
                body = _resolved(body, defaults)
                pool = _terraform_pool(kind, body)
                if pool is not None:
                    what = f"Terraform {kind} {name}"
                    yield lines.get((kind, name), 1), {"what": what, "taints": pool, "autoscales": _autoscales(body)}
    for block in parsed.get("module", ()):
        for name, body in _items(block):
            groups = _resolved(body.get("eks_managed_node_groups"), defaults) if isinstance(body, Mapping) else None
            for group_name, group in _items(groups if isinstance(groups, Mapping) else {}):
                taints = _eks_group(group)
                if taints is not None:
                    what = f"Terraform module {name} eks_managed_node_groups {group_name}"
                    yield lines.get(("module", name), 1), {"what": what, "taints": taints, "autoscales": _autoscales(group)}


def _resolved(body: Any, defaults: Mapping[str, Any]) -> Any:
    """``body`` with each ``var.NAME`` reference replaced by the variable's default in the same
    file, where it has one (a size or taint given as a variable)."""
    if isinstance(body, Mapping):
        return {key: _resolved(value, defaults) for key, value in body.items()}
    if isinstance(body, list):
        return [_resolved(value, defaults) for value in body]
    found = _VARIABLE.fullmatch(body) if isinstance(body, str) else None
    return defaults.get(found.group(1), body) if found else body


def _terraform_pool(kind: str, body: Mapping[str, Any]) -> list[Taint] | None:
    if kind == "azurerm_kubernetes_cluster_node_pool":
        if not azure_gpu(_text(body.get("vm_size"))):
            return None
        taints = [t for item in _list(body.get("node_taints")) for t in flag_taints(_text(item))]
        if _text(body.get("priority")).lower() == "spot":
            taints.append(list(AKS_SPOT))
        return taints
    if kind == "google_container_node_pool":
        config = next(iter(_list(body.get("node_config"))), {})
        config = config if isinstance(config, Mapping) else {}
        accelerators = [_text(a.get("type")) for a in _list(config.get("guest_accelerator")) if isinstance(a, Mapping)]
        if not any("nvidia" in a.lower() for a in accelerators) and not _text(config.get("machine_type")).startswith(GKE_GPU_MACHINES):
            return None
        return _block_taints(config.get("taint"))
    if kind == "aws_eks_node_group":
        return _eks_group(body)
    return None


def _eks_group(group: Any) -> list[Taint] | None:
    """An EKS node group of GPU instances (or an NVIDIA AMI type), with its taints (blocks, or the
    module's map of ``{key, value, effect}``)."""
    if not isinstance(group, Mapping):
        return None
    types = [_text(t) for t in _list(group.get("instance_types"))]
    ami = _text(group.get("ami_type"))
    if not ((types and all(AWS_GPU_INSTANCE.match(t) for t in types)) or "NVIDIA" in ami or "_GPU" in ami):
        return None
    taints = group.get("taints") if "taints" in group else group.get("taint")
    if isinstance(taints, Mapping):
        taints = [t for t in taints.values()]
    return _block_taints(taints)


def _autoscales(body: Mapping[str, Any]) -> bool:
    """Whether a Terraform node pool may grow: AKS's ``enable_auto_scaling``/``auto_scaling_enabled``,
    a GKE ``autoscaling`` block, an EKS ``scaling_config`` (or the module's group) whose
    ``max_size`` is above its ``desired_size``."""
    if body.get("enable_auto_scaling") is True or body.get("auto_scaling_enabled") is True or body.get("autoscaling"):
        return True
    scaling = next(iter(_list(body.get("scaling_config"))), body)
    sizes = [scaling.get(key) if isinstance(scaling, Mapping) else None for key in ("max_size", "desired_size")]
    return all(isinstance(size, int) for size in sizes) and sizes[0] > sizes[1]


def _block_taints(blocks: Any) -> list[Taint]:
    found = []
    for block in _list(blocks):
        if isinstance(block, Mapping) and _text(block.get("key")) and _text(block.get("effect")) in EFFECTS:
            value = _text(block.get("value")) or None
            found.append([_text(block["key"]), value, EFFECTS[_text(block["effect"])]])
    return found


def flag_taints(text: str) -> list[Taint]:
    """``key=value:Effect,key:Effect``, as the az and gcloud flags and AKS's ``node_taints`` take them."""
    found = []
    for item in text.split(","):
        head, _, effect = item.strip().rpartition(":")
        key, _, value = head.partition("=")
        if key and effect in EFFECTS and "$" not in item:
            found.append([key, value or None, EFFECTS[effect]])
    return found


def _flags(words: list[str]) -> dict[str, str]:
    flags: dict[str, str] = {}
    for index, word in enumerate(words):
        if word.startswith("-"):
            flag, equals, value = word.partition("=")
            if not equals and index + 1 < len(words) and not words[index + 1].startswith("-"):
                value = words[index + 1]
            flags.setdefault(flag, value)
    return flags


def azure_gpu(size: object) -> bool:
    return isinstance(size, str) and bool(_AZURE_GPU.match(size)) and not _AZURE_AMD.search(size)


def _text(value: Any) -> str:
    """A Terraform string literal's text; '' for an expression."""
    return terraform.string(value) or ""


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value] if isinstance(value, Mapping) else []


def _items(value: Any) -> Iterator[tuple[str, Any]]:
    """A block's labelled entries with python-hcl2's quotes taken off their labels."""
    for key, body in value.items() if isinstance(value, Mapping) else ():
        if key != "__is_block__":
            yield key.strip('"'), body
