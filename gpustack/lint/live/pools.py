"""The rules' ``ClusterFacts`` from a live cluster's nodes, as ``facts.from_spec`` makes them
from a spec: the GPU nodes grouped into pools by what the rules judge (labels, taints, GPU
resources), each pool's GPU from its GPU Feature Discovery labels (the catalogue's entry where
the product is known), its sharing from the resources and labels the device plugins publish.

The labels read are GFD's and the device plugins'
(https://github.com/NVIDIA/k8s-device-plugin/blob/main/docs/gpu-feature-discovery/README.md,
https://github.com/Project-HAMi/HAMi/blob/master/docs/config.md); the GPU Operator marks the
nodes it manages with ``nvidia.com/gpu.deploy.*``
(https://github.com/NVIDIA/gpu-operator, ``controllers/state_manager.go``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gpustack.lint.facts.pools import GPU, HAMI_MEMORY_MIB, MIG_PREFIX, NFD_GPU_LABEL, PCI_LABEL_PREFIX, SHARED_GPU
from gpustack.lint.facts.pools import ClusterFacts, GpuFacts, Pool, Sharing, Taint
from gpustack.lint.facts.quantities import parse_quantity
from gpustack.lint.live.client import ClusterError, Snapshot

PER_NODE_LABELS = frozenset({"kubernetes.io/hostname"})  # differ on every node: not a pool's
OPERATOR_LABEL_PREFIX = "nvidia.com/gpu.deploy."
PRODUCT_LABEL = "nvidia.com/gpu.product"
# K3s and RKE2 name themselves in the server's gitVersion (v1.33.4+k3s1, v1.33.4+rke2r1), as
# EKS and GKE do (v1.33.4-eks-…, v1.33.4-gke.…).
VERSION_MARKS = (("+k3s", "k3s"), ("+rke2", "rke2"), ("-eks-", "eks"), ("-gke.", "gke"))


def live_facts(snapshot: Snapshot) -> ClusterFacts:
    """The cluster's GPU node pools and what its server says of itself, as rule context."""
    from gpustack.spec.featuregates import FEATURE_GATES, GATES

    minor = server_minor(snapshot.version)
    gates = {name: (state := gate.state(minor)) is not None and state.default for name, gate in GATES.items()}
    dra = [read for read in snapshot.objects if read.kind == "DeviceClass"]
    if dra:  # the server serves resource.k8s.io/v1: DRA is on
        gates.update({name: True for name in FEATURE_GATES["dra"]})
    nodes = snapshot.of("Node")
    slices = _devices_by_node(snapshot.of("ResourceSlice"))
    groups: dict[Any, list[dict[str, Any]]] = {}
    for node in nodes:
        if _gpu_node(node, slices):
            groups.setdefault(_group_key(node), []).append(node)
    pools = tuple(_pool(members, slices) for members in groups.values())
    labels = [_labels(node) for node in nodes]
    return ClusterFacts(
        spec_file=f"the cluster at {snapshot.where}",
        distribution=distribution_of(snapshot.version),
        minor=minor,
        gates=gates,
        pools=pools,
        nvidia_default_runtime=False,  # containerd's default runtime is not visible through the API
        gpu_operator=any(key.startswith(OPERATOR_LABEL_PREFIX) for node in labels for key in node),
        mig_strategy=_mig_strategy(pools, labels),
        nfd=any(NFD_GPU_LABEL in node or any(k.startswith(PCI_LABEL_PREFIX) for k in node) for node in labels),
        gfd=any(PRODUCT_LABEL in node for node in labels),
        label_keys=frozenset(key for pool in pools for key in pool.labels),
    )


def server_minor(version: Mapping[str, Any]) -> int:
    """The minor of ``/version`` (``"33"``, ``"33+"`` on some managed clusters)."""
    digits = "".join(ch for ch in str(version.get("minor", "")) if ch.isdigit())
    if not digits:
        raise ClusterError(f"the server's /version has no minor version: {dict(version)}")
    return int(digits)


def distribution_of(version: Mapping[str, Any]) -> str:
    """The distribution the server's gitVersion names, else "" (not known)."""
    text = str(version.get("gitVersion", ""))
    return next((name for mark, name in VERSION_MARKS if mark in text), "")


def _labels(node: Mapping[str, Any]) -> dict[str, str]:
    return {str(k): str(v) for k, v in ((node.get("metadata") or {}).get("labels") or {}).items()}


def _name(node: Mapping[str, Any]) -> str:
    return str((node.get("metadata") or {}).get("name", ""))


def _gpu_resources(node: Mapping[str, Any]) -> dict[str, int]:
    """The node's allocatable GPU resources (nvidia.com/*) with a count above zero."""
    allocatable = (node.get("status") or {}).get("allocatable") or {}
    found = {}
    for key, value in allocatable.items():
        amount = parse_quantity(value) if key.startswith("nvidia.com/") else None
        if amount is not None and amount > 0:
            found[str(key)] = int(amount)
    return found


def _taints(node: Mapping[str, Any]) -> tuple[Taint, ...]:
    taints = (node.get("spec") or {}).get("taints") or []
    return tuple(
        sorted((Taint(str(t.get("key", "")), t.get("value"), str(t.get("effect", ""))) for t in taints), key=str)
    )


def _devices_by_node(slices: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """DRA devices each node publishes in its ResourceSlices."""
    counts: dict[str, int] = {}
    for item in slices:
        spec = item.get("spec") or {}
        if spec.get("nodeName"):
            counts[spec["nodeName"]] = counts.get(spec["nodeName"], 0) + len(spec.get("devices") or [])
    return counts


def _gpu_node(node: Mapping[str, Any], slices: Mapping[str, int]) -> bool:
    labels = _labels(node)
    return bool(_gpu_resources(node)) or PRODUCT_LABEL in labels or NFD_GPU_LABEL in labels or _name(node) in slices


def _group_key(node: Mapping[str, Any]) -> Any:
    labels = tuple(sorted((k, v) for k, v in _labels(node).items() if k not in PER_NODE_LABELS))
    return labels, _taints(node), tuple(sorted(_gpu_resources(node).items()))


def _pool(members: list[dict[str, Any]], slices: Mapping[str, int]) -> Pool:
    first = members[0]
    labels = {k: v for k, v in _labels(first).items() if k not in PER_NODE_LABELS}
    resources = _gpu_resources(first)
    gpu = gpu_facts(labels, resources)
    gpus = _gpus_per_node(labels, resources, slices.get(_name(first), 0))
    sharing = _sharing(labels, resources, gpus)
    names = sorted(_name(node) for node in members)
    name = names[0] if len(names) == 1 else f"{names[0]} and {len(names) - 1} alike"
    source = "operator" if labels.get(OPERATOR_LABEL_PREFIX + "driver") == "true" else "host"
    return Pool(name, len(members), gpus, gpu, labels, _taints(first), sharing, source, frozenset(resources))


def gpu_facts(labels: Mapping[str, str], resources: Mapping[str, int]) -> GpuFacts:
    """The catalogue's facts for the node's GPU product, else what its labels say."""
    from gpustack.lint.facts.from_spec import catalogue_facts
    from gpustack.spec.gpu_catalogue import load_catalogue

    product = labels.get(PRODUCT_LABEL, "").removesuffix("-SHARED").split("-MIG-")[0]
    known = next((item for item in load_catalogue().entries.items() if product and item[1].product == product), None)
    if known is not None:
        return catalogue_facts(*known)
    compute = f"{labels.get('nvidia.com/gpu.compute.major', '0')}.{labels.get('nvidia.com/gpu.compute.minor', '0')}"
    pci = "0300" if any(k.startswith(f"{PCI_LABEL_PREFIX}0300") for k in labels) else "0302"
    memory = labels.get("nvidia.com/gpu.memory", "0")
    return GpuFacts(
        product or "unknown GPU",
        product or "unknown GPU",
        labels.get("nvidia.com/gpu.family", "unknown"),
        int(memory) if memory.isdigit() else 0,
        tuple(sorted(key.removeprefix(MIG_PREFIX) for key in resources if key.startswith(MIG_PREFIX))),
        False,
        pci,
        compute,
        labels.get("nvidia.com/gpu.mode") == "compute",
    )


def _gpus_per_node(labels: Mapping[str, str], resources: Mapping[str, int], devices: int) -> int:
    count = labels.get("nvidia.com/gpu.count", "")
    if count.isdigit():
        return int(count)
    replicas = labels.get("nvidia.com/gpu.replicas", "1")
    whole = resources.get(GPU) or resources.get(SHARED_GPU) or 0
    return whole // int(replicas) if replicas.isdigit() and int(replicas) > 0 and whole else devices


def _sharing(labels: Mapping[str, str], resources: Mapping[str, int], gpus: int) -> Sharing:
    if HAMI_MEMORY_MIB in resources:
        return Sharing("hami", max(1, resources.get(GPU, gpus) // max(gpus, 1)))
    strategy = {"time-slicing": "timeSlicing", "mps": "mps"}.get(labels.get("nvidia.com/gpu.sharing-strategy", ""))
    replicas = labels.get("nvidia.com/gpu.replicas", "1")
    if strategy is None or not replicas.isdigit():
        return Sharing()
    return Sharing(strategy, int(replicas), renamed=SHARED_GPU in resources)  # type: ignore[arg-type]


def _mig_strategy(pools: Sequence[Pool], labels: Sequence[Mapping[str, str]]) -> str:
    said = {node["nvidia.com/mig.strategy"] for node in labels if "nvidia.com/mig.strategy" in node}
    if len(said) == 1:
        return said.pop()
    return "mixed" if any(r.startswith(MIG_PREFIX) for pool in pools for r in pool.resources) else "none"
