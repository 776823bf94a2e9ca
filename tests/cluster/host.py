"""What a rendered stack's host steps and cluster config give each node, read from the files a
person runs: the kubelet's registration labels and taints, the NVIDIA driver, containerd's
runtime handlers and its default, Fabric Manager, and the paths the OS keeps read-only.

Nothing here comes from the spec: a fact the rendered files do not establish is absent, so a
stack whose host steps forget the toolkit gets a node without the ``nvidia`` handler.

- kubeadm: ``cluster/join-<pool>.yaml`` (``nodeRegistration.taints`` and the kubelet's
  ``--node-labels``, https://kubernetes.io/docs/reference/config-api/kubeadm-config.v1beta4/)
  and the README's host steps, read per pool ("On each node of pools `a`, `b`:" or "On every
  node", with ``# GPU nodes only:`` for the rest of a block): ``apt-get install`` of an
  ``nvidia-driver-*`` package loads the driver; ``nvidia-ctk runtime configure
  --runtime=containerd`` adds the ``nvidia`` handler, ``--set-as-default`` makes it the default
  (https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html);
  ``nvidia-ctk config --in-place --set <key>=<value>`` sets a key of the toolkit's config.toml,
  which the NVIDIA runtime reads at each container's start (tests/cluster/toolkit.py);
  ``nvidia-fabricmanager`` started runs Fabric Manager.
- K3s: the same host steps; K3s adds the ``nvidia`` and ``nvidia-cdi`` handlers when it finds
  the toolkit's runtimes on the node (https://docs.k3s.io/advanced#nvidia-container-runtime-support),
  ``default-runtime`` in ``cluster/config.yaml`` picks the default, ``node-label`` and
  ``node-taint`` there or as flags of the install command register the node
  (https://docs.k3s.io/cli/agent).
- Talos: the pool's Image Factory schematic (``talos/pools/<pool>.schematic.yaml``): the NVIDIA
  kernel-module extension is the driver, ``nvidia-container-toolkit`` the ``nvidia`` handler
  (https://www.talos.dev/v1.13/talos-guides/configuration/nvidia-gpu-proprietary/); the patch's
  ``machine.nodeLabels``, ``machine.kubelet.extraConfig.registerWithTaints`` and a CRI drop-in
  setting ``default_runtime_name``. Talos's root file system is read-only: only ``/var``, ``/run``,
  ``/tmp``, ``/dev``, ``/proc``, ``/sys`` and ``/opt`` are writable
  (https://www.talos.dev/v1.13/learn-more/architecture/#the-file-system).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

TALOS_WRITABLE = ("/var", "/run", "/tmp", "/dev", "/proc", "/sys", "/opt", "/etc/cni", "/etc/kubernetes")
# "On each node of pools `a`, `b`:", "On every node (…):", "On the node:" (a single K3s node);
# "On the first control-plane node:" is no pool's.
_STEP = re.compile(r"^On (?P<who>each node|every node|the node|[^:]*)(?: of pools? (?P<pools>[^:]+))?[^:]*:\s*$")
_FENCE = re.compile(r"^```")
_DRIVER_PACKAGE = re.compile(r"apt-get install\b.*\b(?:nvidia-driver-\d+|nvidia-open|nvidia-headless(?:-\d+)?-open)\b")
_CONTAINERD_PACKAGE = re.compile(r"apt-get install\b.*\bcontainerd\.io=(?P<release>\d+\.\d+\.\d+)")


@dataclass
class Host:
    """One node's host facts."""

    labels: dict[str, str] = field(default_factory=dict)
    taints: list[dict[str, str]] = field(default_factory=list)
    driver: bool = False
    runtimes: set[str] = field(default_factory=lambda: {"runc"})
    default_runtime: str = "runc"
    fabric_manager: bool = False
    containerd: str | None = None  # the release the steps install; None: the distribution's own
    read_only: bool = False  # the root file system, but for TALOS_WRITABLE
    toolkit: dict[str, str] = field(default_factory=dict)  # config.toml keys the host steps set

    def writable(self, path: str) -> bool:
        if not self.read_only:
            return True
        return any(path == prefix or path.startswith(prefix + "/") for prefix in TALOS_WRITABLE)


def host_facts(folder: Path, distribution: str, pool: str, has_gpus: bool) -> Host:
    """The host facts of a node of ``pool`` in the rendered stack ``folder``."""
    if distribution == "talos":
        return _talos(folder, pool)
    host = Host()
    for command in pool_commands(folder / "README.md", pool, has_gpus):
        _apply_command(host, command)
    if distribution == "k3s":
        _k3s(host, folder / "cluster" / "config.yaml")
    else:
        _kubeadm_join(host, folder / "cluster" / f"join-{pool}.yaml")
    return host


def _apply_command(host: Host, command: str) -> None:
    if _DRIVER_PACKAGE.search(command):
        host.driver = True
    if installed := _CONTAINERD_PACKAGE.search(command):
        host.containerd = installed["release"]
    if "nvidia-ctk runtime configure" in command and "--runtime=containerd" in command:
        host.runtimes.add("nvidia")
        if "--set-as-default" in command:
            host.default_runtime = "nvidia"
    if "nvidia-ctk config" in command and "--in-place" in command:
        host.toolkit.update(value.split("=", 1) for flag, value in _flags(shlex.split(command)) if flag == "--set")
    if "systemctl" in command and "nvidia-fabricmanager" in command and ("start" in command or "enable" in command):
        host.fabric_manager = True
    if "apt-get install" in command and "nvidia-container-toolkit" in command:
        host.runtimes.add("toolkit")  # K3s turns it into handlers (_k3s); kubeadm needs nvidia-ctk
    if "get.k3s.io" in command:  # the K3s install's own flags register the node
        words = shlex.split(command.split("|", 1)[-1]) if "|" in command else shlex.split(command)
        for flag, value in _flags(words):
            if flag == "--node-label":
                host.labels.update([value.split("=", 1)])
            elif flag == "--node-taint":
                host.taints.append(_taint(value))


def _flags(words: list[str]) -> list[tuple[str, str]]:
    """``--flag value`` and ``--flag=value`` pairs of a command line."""
    found = []
    for index, word in enumerate(words):
        if word.startswith("--") and "=" in word:
            found.append(tuple(word.split("=", 1)))
        elif word.startswith("--") and index + 1 < len(words) and not words[index + 1].startswith("-"):
            found.append((word, words[index + 1]))
    return found


def pool_commands(readme: Path, pool: str, has_gpus: bool) -> list[str]:
    """The shell lines of the README's host steps that run on a node of ``pool``."""
    if not readme.is_file():
        return []
    text = readme.read_text(encoding="utf-8")
    start, end = text.find("## Host steps"), text.find("## Apply order")
    lines = text[start:end].splitlines() if start >= 0 else []
    commands: list[str] = []
    applies = in_block = False
    for line in lines:
        step = _STEP.match(line)
        if step and not in_block:
            pools = re.findall(r"`([^`]+)`", step["pools"] or "")
            applies = pool in pools if pools else step["who"] in ("each node", "every node", "the node")
            continue
        if _FENCE.match(line):
            in_block = not in_block
            gpu_only = False
            continue
        if not in_block or not applies:
            continue
        if line.strip() == "# GPU nodes only:":
            gpu_only = True
            continue
        if gpu_only and not has_gpus:
            continue
        commands.append(line.strip())
    return commands


def _read(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8")) if path.is_file() else None


def _k3s(host: Host, config_path: Path) -> None:
    config = _read(config_path) or {}
    if "toolkit" in host.runtimes:
        host.runtimes |= {"nvidia", "nvidia-cdi"}
    if config.get("default-runtime"):
        host.default_runtime = config["default-runtime"]
    host.labels |= dict(item.split("=", 1) for item in _listed(config.get("node-label")))
    host.taints += [_taint(item) for item in _listed(config.get("node-taint"))]
    host.runtimes.discard("toolkit")


def _kubeadm_join(host: Host, join_path: Path) -> None:
    host.runtimes.discard("toolkit")
    join = _read(join_path) or {}
    registration = join.get("nodeRegistration", {})
    host.taints += [{k: str(v) for k, v in t.items()} for t in registration.get("taints") or []]
    for argument in registration.get("kubeletExtraArgs") or []:
        if argument["name"] == "node-labels":
            host.labels |= dict(item.split("=", 1) for item in argument["value"].split(",") if item)


def _talos(folder: Path, pool: str) -> Host:
    host = Host(read_only=True)
    schematic = _read(folder / "talos" / "pools" / f"{pool}.schematic.yaml") or {}
    extensions = schematic.get("customization", {}).get("systemExtensions", {}).get("officialExtensions", [])
    host.driver = any("nvidia" in e and "kernel-modules" in e or "nonfree-kmod" in e for e in extensions)
    host.fabric_manager = any("fabricmanager" in e for e in extensions)
    if any("nvidia-container-toolkit" in e for e in extensions):
        host.runtimes.add("nvidia")
    patch = _read(folder / "talos" / "pools" / f"{pool}.patch.yaml") or {}
    machine = patch.get("machine", {})
    host.labels |= {k: str(v) for k, v in (machine.get("nodeLabels") or {}).items()}
    host.taints += [{k: str(v) for k, v in t.items()}
                    for t in (machine.get("kubelet", {}).get("extraConfig", {}).get("registerWithTaints") or [])]
    for drop_in in (machine.get("files") or []):
        if re.search(r"default_runtime_name\s*=\s*\"nvidia\"", str(drop_in.get("content", ""))):
            host.default_runtime = "nvidia"
    return host


def _listed(value: Any) -> list[str]:
    return [value] if isinstance(value, str) else list(value or [])


def _taint(text: str) -> dict[str, str]:
    """A K3s ``key=value:Effect`` taint."""
    head, _, effect = text.rpartition(":")
    key, _, value = head.partition("=")
    return {"key": key, "effect": effect, **({"value": value} if value else {})}
