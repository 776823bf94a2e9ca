"""What one node's agents see and what they publish, shared by every agent module.

The fake kubelet (tests/cluster/kubelet.py) builds a ``World`` per node each round from the API
server (the node's labels and bound pods, ConfigMaps, ClusterPolicies, NodeFeatureRules) and the
node's machine (tests/cluster/nodes.py); each agent reads it and adds to ``Published``, which the
kubelet writes back as node labels, extended resources and ResourceSlices.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from tests.cluster.nodes import FakeNode


@dataclass
class NodeMemory:
    """What persists on a node between rounds, as on real hardware: the MIG devices each GPU has
    (mig-parted's work survives until it is reconfigured) and the files the agents wrote under
    NFD's ``features.d`` (GFD's labels for NFD's local source)."""

    mig: dict[int, list[str]] = field(default_factory=dict)  # GPU index → MIG profiles of its instances
    features_d: dict[str, str] = field(default_factory=dict)


@dataclass
class Published:
    """What the running agents of one node publish this round."""

    labels: dict[str, str] = field(default_factory=dict)  # node labels (set through NFD or directly)
    resources: dict[str, int] = field(default_factory=dict)  # extended resources
    runtimes: set[str] = field(default_factory=set)  # containerd handlers an operand configured
    slices: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # DRA driver → devices
    injection: set[str] = field(default_factory=set)  # how devices reach containers: "envvar", "volume-mounts", "cdi"
    toolkit: dict[str, str] = field(default_factory=dict)  # config.toml keys an operand's toolkit set
    driver: bool = False  # a driver container (the GPU Operator's) loaded the kernel modules
    default_runtime: str | None = None  # containerd's default handler, when an operand changed it
    runtime_classes: dict[str, str] = field(default_factory=dict)  # RuntimeClasses an operator makes: name → handler
    problems: list[str] = field(default_factory=list)  # why an operand without a pod here does not act


@dataclass
class World:
    node: FakeNode
    labels: dict[str, str]  # the node's labels on the API server now
    pods: list[dict[str, Any]]  # the pods bound to the node
    cluster_pods: list[dict[str, Any]]  # every bound pod (NFD's master runs on another node)
    configmaps: dict[tuple[str, str], dict[str, str]]  # (namespace, name) → data
    objects: dict[str, list[dict[str, Any]]]  # custom resources by kind: ClusterPolicy, NodeFeatureRule
    memory: NodeMemory
    driver_loaded: bool = False  # the host's driver, or the GPU Operator's driver container

    def running(self, matches: Callable[[dict[str, Any]], bool], *, anywhere: bool = False) -> list[dict[str, Any]]:
        """Running pods (all containers started) on this node, or ``anywhere``, that ``matches`` takes."""
        return [p for p in (self.cluster_pods if anywhere else self.pods) if is_running(p) and matches(p)]

    def configmap(self, namespace: str, name: str) -> dict[str, str] | None:
        return self.configmaps.get((namespace, name))

    def mounted(self, pod: dict[str, Any], path: str) -> dict[str, str]:
        """The files a container of ``pod`` sees at ``path`` from a ConfigMap volume: the
        ConfigMap's keys (or the volume's ``items``), the one file a ``subPath`` names; none when
        nothing is mounted there."""
        volumes = {v["name"]: v for v in pod["spec"].get("volumes", [])}
        for container in containers(pod):
            for mount in container.get("volumeMounts", []):
                source = volumes.get(mount["name"], {}).get("configMap")
                if source is None or mount["mountPath"].rstrip("/") != path.rstrip("/"):
                    continue
                data = self.configmap(pod["metadata"]["namespace"], source["name"]) or {}
                if source.get("items"):
                    data = {item["path"]: data[item["key"]] for item in source["items"] if item["key"] in data}
                sub = mount.get("subPath")
                return {sub: data[sub]} if sub in data else {} if sub else data
        return {}


def is_running(pod: dict[str, Any]) -> bool:
    status = pod.get("status", {})
    return status.get("phase") == "Running" and all(c.get("ready") for c in status.get("containerStatuses", []))


def containers(pod: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield from pod["spec"].get("initContainers", [])
    yield from pod["spec"]["containers"]


def command_line(container: dict[str, Any]) -> str:
    return " ".join(str(word) for word in [*container.get("command", []), *container.get("args", [])])


def image_has(pod: dict[str, Any], *words: str, command: str | None = None) -> bool:
    """Whether a container of ``pod`` runs an image whose name holds one of ``words`` (and, when
    given, ``command`` in its command line)."""
    return any(any(w in c.get("image", "") for w in words) and (command is None or command in command_line(c))
               for c in containers(pod))


def env_of(container: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: str(e["value"]) for e in container.get("env", []) if "value" in e}
