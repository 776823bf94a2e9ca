"""What a GPU node has, layer by layer: ``gpustack doctor`` and ``gpustack discover``.

The lesson of bringing up GPU nodes by hand is that a GPU that does not show up in
Kubernetes is lost in one of a chain of layers: PCI bus, nouveau, driver and DKMS, device
nodes, NVML, NVIDIA Container Toolkit, CDI specs, containerd's runtime config, the kubelet's
device-plugin socket, and Secure Boot under all of them. One module here probes one layer.

Every probe reads files under a ``NodeRoot`` (``--root``, default ``/``), so the same code
runs on a node and against fixture trees; nothing here writes, runs programs or needs root
except to read what only root may read.
"""
