"""A host script that sets up the nodes' NVIDIA stack, as ``input/hostscripts`` reads it: one key
per thing it says, each with the first line that says it."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from gpustack.lint.model import Resource

KEY = "hostScriptSetsNvidiaDefault"  # nvidia is the default runtime: {line, says}
DRIVER_KEY = "hostScriptInstallsDriver"  # the NVIDIA driver is installed on the host
TOOLKIT_KEY = "hostScriptInstallsToolkit"  # the NVIDIA Container Toolkit is installed on the host
CLOUD_KEY = "hostScriptManagedCloud"  # a managed cloud's cluster or node pool is created: {line, says, cloud}
RETIRED_KEY = "hostScriptRetiredGpuSize"  # a GPU size its cloud retired is set: {line, says, size}
CLOUD_DRIVER_KEY = "hostScriptCloudDriver"  # GPU nodes whose cloud image brings the driver: {line, says, cloud}
PLUGIN_KEY = "hostScriptInstallsGpuPlugin"  # the GPU Operator, NVIDIA's device plugin or HAMi installed: {line, says}
TALOS_KEY = "hostScriptTalosInstaller"  # a Talos installer image of a release: {line, says}
# A cluster whose nodes are containers on this machine (kind, k3d, minikube) is created: {line, says}.
# What such a script installs is for that cluster alone, not for the nodes other files deploy to.
LOCAL_CLUSTER_KEY = "hostScriptLocalCluster"
RUNTIME_CLASS_KEY = "hostScriptCreatesRuntimeClass"  # a RuntimeClass is created (kubectl, Terraform): {line, says}
KEYS = (KEY, DRIVER_KEY, TOOLKIT_KEY, CLOUD_KEY, RETIRED_KEY, CLOUD_DRIVER_KEY, PLUGIN_KEY, TALOS_KEY, LOCAL_CLUSTER_KEY,
        RUNTIME_CLASS_KEY)
# A GPU chart installed by a helm command, one key per command line (``…@12``): {line, says,
# chart, release, namespace, version, values (files), set (the --set values), unknown}.
RELEASE_PREFIX = "hostScriptHelmRelease@"
# A GPU node pool a managed cloud creates, one key per command or Terraform block: {line, says,
# what, taints: [[key, value, effect], …]} (``input/cloudpools``).
POOL_PREFIX = "hostScriptGpuPool@"


def is_host_script(resource: Resource) -> bool:
    return resource.kind is None and (
        any(isinstance(resource.data.get(key), Mapping) for key in KEYS)
        or any(_prefixed(resource, RELEASE_PREFIX)) or any(_prefixed(resource, POOL_PREFIX))
    )


def helm_releases(resource: Resource) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """The helm commands of GPU charts the script or note runs: (key, what the command says)."""
    return _prefixed(resource, RELEASE_PREFIX)


def gpu_pools(resource: Resource) -> Iterator[Mapping[str, Any]]:
    """The GPU node pools the script, note or Terraform file creates on a managed cloud."""
    return (found for _, found in _prefixed(resource, POOL_PREFIX))


def _prefixed(resource: Resource, prefix: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    if resource.kind is not None:
        return
    for key, found in resource.data.items():
        if isinstance(key, str) and key.startswith(prefix) and isinstance(found, Mapping):
            yield key, found


def says(resource: Resource, key: str) -> bool:
    return resource.kind is None and isinstance(resource.data.get(key), Mapping)


def managed_cloud(resource: Resource) -> str | None:
    """The managed cloud (eks, gke, aks) whose cluster or node pool the script creates."""
    return str(resource.data[CLOUD_KEY].get("cloud")) if says(resource, CLOUD_KEY) else None


def described(resource: Resource, key: str = KEY) -> str:
    """How a message names it: ``scripts/gpu-node.sh line 12 (`nvidia-ctk runtime configure ...`)``."""
    found = resource.data[key]
    return f"{resource.file} line {found.get('line')} (`{found.get('says')}`)"


def creates_local_cluster(resource: Resource) -> bool:
    """Whether the script or note creates a cluster of containers on its machine (kind, k3d,
    minikube)."""
    return says(resource, LOCAL_CLUSTER_KEY)
