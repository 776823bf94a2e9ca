"""What the fake kubelet refuses, as a real kubelet and containerd do, with their reasons: one
table, in the order a kubelet meets them (sandbox, volumes, container config, init containers,
containers). Each row names its upstream source.

| stage | what | reason in the pod's status / event | source |
|---|---|---|---|
| sandbox | RuntimeClass whose handler the node's containerd (2.x) lacks | event FailedCreatePodSandBox: ``unable to get OCI runtime for sandbox: no runtime for "<handler>" is configured`` | containerd internal/cri/server/sandbox_run.go; kubelet pkg/kubelet/kuberuntime/kuberuntime_sandbox.go |
| sandbox | RuntimeClass that does not exist | event FailedCreatePodSandBox: ``RuntimeClass "<name>" not found`` | pkg/kubelet/runtimeclass/runtimeclass_manager.go |
| mount | secret / configMap / projected volume of a missing non-optional object | event FailedMount: ``MountVolume.SetUp failed for volume "<v>" : secret "<name>" not found`` | pkg/volume/secret/secret.go, pkg/volume/configmap/configmap.go |
| mount | hostPath of type Directory/File/Socket/CharDevice that the node lacks | event FailedMount: ``hostPath type check failed: <path> is not a directory`` | pkg/volume/hostpath/host_path.go |
| mount | hostPath DirectoryOrCreate/FileOrCreate under a read-only root | event FailedMount: ``mkdir <path>: read-only file system`` | pkg/volume/hostpath/host_path.go (os.MkdirAll) |
| config | env / envFrom of a missing non-optional Secret or ConfigMap, or a missing key | waiting CreateContainerConfigError: ``secret "<name>" not found``, ``couldn't find key <k> in Secret <ns>/<name>`` | pkg/kubelet/kubelet_pods.go (makeEnvironmentVariables) |
| init | an init container that exits non-zero blocks the pod's containers | init container terminated (Error), then waiting CrashLoopBackOff; pod Pending (``Init:CrashLoopBackOff``) | pkg/kubelet/kuberuntime/kuberuntime_container.go (computeInitContainerActions) |
| start | a GPU container whose devices no runtime injects (tests/cluster/toolkit.py) runs ``nvidia-smi``, or a container that sees no GPU does | terminated StartError, exit 128: ``exec: "nvidia-smi": executable file not found in $PATH`` | the binary comes from the driver through the NVIDIA runtime or CDI: https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/arch-overview.html |
| run | a GPU container on an NVSwitch board without Fabric Manager (host service or the operator's driver container) | terminated Error, exit 1: ``CUDA error 802: system not yet initialized`` | https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/ |
| run | any other GPU container without devices | terminated Error, exit 1, then CrashLoopBackOff: ``no CUDA-capable device is detected`` | CUDA's cudaErrorNoDevice |
| run | an agent that fails on this node (its config, NVML) | terminated Error, exit 1, then CrashLoopBackOff, with the agent's message | tests/cluster/agents/ |
| done | a Job's pod whose containers exit 0 | phase Succeeded, containers terminated Completed (``nvidia-smi -L > /dev/termination-log``: the GPUs it sees as the message) | pkg/kubelet/kubelet_pods.go (getPhase); pkg/kubelet/kuberuntime/kuberuntime_container.go (terminationMessagePath) |
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tests.cluster import toolkit
from tests.cluster.agents.world import Published, command_line, containers
from tests.cluster.nodes import FakeNode

# Paths every node has; a read-only (Talos) node has only these and its writable folders.
SYSTEM_PATHS = ("/", "/usr", "/usr/bin", "/usr/lib", "/usr/local", "/lib", "/lib64", "/etc", "/etc/os-release",
                "/boot", "/var", "/run", "/tmp", "/dev", "/sys", "/proc")
# Paths an operand makes: they exist only where it ran (the GPU Operator's driver and toolkit containers).
MADE_BY = {"/run/nvidia/driver": "driver", "/usr/local/nvidia": "toolkit"}
NO_NVIDIA_SMI = ('failed to create containerd task: OCI runtime create failed: runc create failed: unable to start '
                 'container process: exec: "nvidia-smi": executable file not found in $PATH')
MUST_EXIST = {"Directory": "a directory", "File": "a file", "Socket": "a socket", "CharDevice": "a character device",
              "BlockDevice": "a block device"}


@dataclass(frozen=True)
class Blocked:
    """The pod cannot start a container yet: an event, and the containers' waiting reason."""

    event: str
    message: str
    waiting: str  # ContainerCreating, CreateContainerConfigError


@dataclass(frozen=True)
class Exit:
    """A container's end: its exit code, reason and message; ``termination``: what it wrote to its
    terminationMessagePath, which the kubelet reports as the message of a container that exits 0."""

    code: int
    reason: str
    message: str
    termination: str = ""


@dataclass
class Node:
    """What the refusals read of the node and the cluster."""

    fake: FakeNode
    published: Published
    runtime_classes: dict[str, str]  # name → handler
    secrets: dict[tuple[str, str], set[str]]  # (namespace, name) → keys
    configmaps: dict[tuple[str, str], dict[str, str]]

    def handlers(self) -> set[str]:
        return self.fake.host.runtimes | self.published.runtimes

    def handler(self, pod: dict[str, Any]) -> str:
        """The containerd handler that runs ``pod``: its RuntimeClass's, else the node's default."""
        name = pod["spec"].get("runtimeClassName")
        if name:
            return self.runtime_classes.get(name, "")
        return self.published.default_runtime or self.fake.host.default_runtime


def sandbox(pod: dict[str, Any], node: Node) -> Blocked | None:
    name = pod["spec"].get("runtimeClassName")
    if not name:
        return None
    if name not in node.runtime_classes:
        return Blocked("FailedCreatePodSandBox", f'RuntimeClass "{name}" not found', "ContainerCreating")
    handler = node.runtime_classes[name]
    if handler not in node.handlers():
        return Blocked("FailedCreatePodSandBox", "Failed to create pod sandbox: rpc error: code = Unknown desc = "
                       f'unable to get OCI runtime for sandbox: no runtime for "{handler}" is configured', "ContainerCreating")
    return None


def _object_missing(node: Node, namespace: str, kind: str, name: str) -> bool:
    store = node.secrets if kind == "secret" else node.configmaps
    return (namespace, name) not in store


def _path_exists(node: Node, path: str) -> bool:
    operand = MADE_BY.get(path)
    if operand == "driver":
        return node.published.driver
    if operand == "toolkit":
        return "nvidia" in node.published.runtimes
    return not node.fake.host.read_only or path in SYSTEM_PATHS or node.fake.host.writable(path)


def mounts(pod: dict[str, Any], node: Node) -> Blocked | None:
    namespace = pod["metadata"]["namespace"]
    for volume in pod["spec"].get("volumes", []):
        sources = [volume] + [{k: v for k, v in s.items()} for s in volume.get("projected", {}).get("sources", [])]
        for source in sources:
            for kind, key in (("secret", "secretName"), ("configmap", "name")):
                ref = source.get("secret" if kind == "secret" else "configMap")
                if ref is None:
                    continue
                name = ref.get(key) or ref.get("name")
                if not ref.get("optional") and _object_missing(node, namespace, kind, name):
                    return Blocked("FailedMount", f'MountVolume.SetUp failed for volume "{volume["name"]}" : '
                                   f'{kind} "{name}" not found', "ContainerCreating")
        host = volume.get("hostPath")
        if host:
            path, kind = host["path"].rstrip("/") or "/", host.get("type") or ""
            if kind in MUST_EXIST and not _path_exists(node, path):
                return Blocked("FailedMount", f'MountVolume.SetUp failed for volume "{volume["name"]}" : hostPath type '
                               f"check failed: {path} is not {MUST_EXIST[kind]}", "ContainerCreating")
            if kind in ("DirectoryOrCreate", "FileOrCreate") and not _path_exists(node, path):
                return Blocked("FailedMount", f'MountVolume.SetUp failed for volume "{volume["name"]}" : '
                               f"mkdir {path}: read-only file system", "ContainerCreating")
    return None


def container_config(pod: dict[str, Any], container: dict[str, Any], node: Node) -> Blocked | None:
    namespace = pod["metadata"]["namespace"]
    refs = []
    for variable in container.get("env", []):
        source = variable.get("valueFrom", {})
        for kind, field in (("Secret", "secretKeyRef"), ("ConfigMap", "configMapKeyRef")):
            if field in source:
                refs.append((kind, source[field], source[field].get("key")))
    for source in container.get("envFrom", []):
        for kind, field in (("Secret", "secretRef"), ("ConfigMap", "configMapRef")):
            if field in source:
                refs.append((kind, source[field], None))
    for kind, ref, key in refs:
        if ref.get("optional"):
            continue
        keys = (node.secrets.get((namespace, ref["name"])) if kind == "Secret"
                else set((node.configmaps.get((namespace, ref["name"])) or {}).keys())
                if (namespace, ref["name"]) in node.configmaps else None)
        if keys is None:
            return Blocked("Failed", f'{kind.lower()} "{ref["name"]}" not found', "CreateContainerConfigError")
        if key is not None and key not in keys:
            return Blocked("Failed", f"couldn't find key {key} in {kind} {namespace}/{ref['name']}",
                           "CreateContainerConfigError")
    return None


def wants_gpus(pod: dict[str, Any]) -> bool:
    return bool(pod["spec"].get("resourceClaims")) or any(
        key.startswith("nvidia.com/") for c in containers(pod)
        for part in ("limits", "requests") for key in (c.get("resources", {}).get(part) or {}))


def devices_injected(pod: dict[str, Any], node: Node) -> bool:
    """Whether the GPUs the pod was given reach its containers: a DRA claim's through containerd's
    CDI; a device plugin's as tests/cluster/toolkit.py says (CDI whatever the runtime; the variable
    or volume mounts only through the NVIDIA runtime, as its toolkit config takes them)."""
    return bool(pod["spec"].get("resourceClaims")) or any(toolkit.visible(pod, c, node) for c in containers(pod))


def run(pod: dict[str, Any], container: dict[str, Any], node: Node,
        agent_failure: Callable[[dict[str, Any], dict[str, Any], str], str | None]) -> Exit | None:
    """How the container ends on this node (None: it keeps running, or a Job's exits 0)."""
    failure = agent_failure(pod, container, node.handler(pod))
    if failure:
        return Exit(1, "Error", failure)
    fabric = node.fake.host.fabric_manager or node.published.driver
    if wants_gpus(pod) and node.fake.machine.nvswitches() and not fabric:
        return Exit(1, "Error", "CUDA error 802: system not yet initialized (no Fabric Manager on this NVSwitch board)")
    listed = toolkit.listing(pod, container, node)
    if (wants_gpus(pod) and not devices_injected(pod, node)) or listed == "":
        if "nvidia-smi" in command_line(container):
            return Exit(128, "StartError", NO_NVIDIA_SMI)
        return Exit(1, "Error", "CUDA error: no CUDA-capable device is detected (no /dev/nvidia* in the container)")
    if listed:
        return Exit(0, "Completed", "", listed)
    return None
