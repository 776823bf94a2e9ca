"""The API server flags a rendered kubeadm stack gives its control plane, with their files.

kubeadm passes the ClusterConfiguration's ``apiServer.extraArgs`` to kube-apiserver and mounts
each of ``apiServer.extraVolumes`` (a host path) into its static pod
(https://kubernetes.io/docs/reference/config-api/kubeadm-config.v1beta4/#kubeadm-k8s-io-v1beta4-ControlPlaneComponent).
The harness's API server runs on this machine, not in a pod on a node, so a flag naming a file
takes the rendered file that a host step of the README installs at that host path
(``install … SRC DEST``). A flag whose file is neither mounted nor installed fails here as the
static pod would fail to start. Only the flags listed in ``HONOURED`` are passed: the others
(addresses, ports, certificates) belong to the real node, not to the loopback harness.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import yaml

HONOURED = frozenset({"admission-control-config-file"})


def flags(folder: Path) -> list[str]:
    """kube-apiserver arguments of the stack in ``folder`` (none but on kubeadm)."""
    config = folder / "cluster" / "kubeadm-config.yaml"
    if not config.exists():
        return []
    documents = [doc for doc in yaml.safe_load_all(config.read_text()) if doc]
    cluster = next(doc for doc in documents if doc.get("kind") == "ClusterConfiguration")
    api_server: dict[str, Any] = cluster.get("apiServer", {})
    mounts = {volume["mountPath"]: volume["hostPath"] for volume in api_server.get("extraVolumes", [])}
    installed = installed_files(folder)
    result = []
    for arg in api_server.get("extraArgs", []):
        if arg["name"] not in HONOURED:
            continue
        host_path = mounts.get(arg["value"])
        if host_path is None or host_path not in installed:
            raise RuntimeError(f"kube-apiserver's --{arg['name']}={arg['value']}: the file is "
                               + ("not mounted into its pod (apiServer.extraVolumes)" if host_path is None
                                  else f"at host path {host_path}, which no host step of the README installs"))
        result.append(f"--{arg['name']}={installed[host_path]}")
    return result


def installed_files(folder: Path) -> dict[str, Path]:
    """Host path → the stack's file that a README command ``install … SRC DEST`` copies there."""
    result = {}
    for line in (folder / "README.md").read_text().splitlines():
        if not line.removeprefix("sudo ").startswith("install "):
            continue
        words = shlex.split(line.removeprefix("sudo "), comments=True)
        if len(words) >= 3 and (folder / words[-2]).is_file():
            result[words[-1]] = (folder / words[-2]).resolve()
    return result
