"""Upstream documentation that each ``gpustack doctor`` problem points at, by layer."""

from __future__ import annotations

DRIVER = "https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/"
TOOLKIT = "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html"
CDI = "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/cdi-support.html"
CONTAINERD = f"{TOOLKIT}#configuring-containerd-for-kubernetes"
DEVICE_PLUGIN = "https://github.com/NVIDIA/k8s-device-plugin#readme"
FABRIC_MANAGER = "https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/"
