"""The NVIDIA GPU Operator (https://github.com/NVIDIA/gpu-operator): with its controller's pod
running and a ClusterPolicy in the cluster, its operands act on each GPU node it selects.

The harness does not create the operands' DaemonSets: it runs the operands' effects in place,
each only where the operator would put its pod.

- A GPU node is one NFD labelled ``pci-10de.present``, ``pci-0302_10de.present`` or
  ``pci-0300_10de.present`` (controllers/state_manager.go, ``gpuNodeLabels``); it gets
  ``nvidia.com/gpu.present=true`` and ``nvidia.com/gpu.deploy.<operand>=true`` unless a label
  already says ``false``.
- An operand lands where its deploy label is not ``false`` and its ClusterPolicy section is
  enabled, and only on nodes whose taints ``spec.daemonsets.tolerations`` tolerate.
- driver: loads the kernel modules, except on a read-only root (Talos), where its container
  cannot build and install them; toolkit (needs a driver): adds the ``nvidia`` handler, the
  default with ``CONTAINERD_SET_AS_DEFAULT=true``; the operator makes RuntimeClasses
  ``operator.runtimeClass`` (nvidia), ``nvidia-cdi`` and ``nvidia-legacy`` for its handlers
  (controllers/object_controls.go); device plugin and GFD (need both): as in
  agents/device_plugin.py, their config from ``devicePlugin.config`` (the ConfigMap in the
  operator's namespace), ``MIG_STRATEGY`` from ``mig.strategy``, devices through CDI when
  ``cdi.enabled`` (the default since v25.10), else by ``DEVICE_LIST_STRATEGY`` of
  ``devicePlugin.env`` (envvar by default); the toolkit's ``ACCEPT_NVIDIA_VISIBLE_DEVICES_*`` env
  sets those config.toml keys (tests/cluster/toolkit.py); MIG manager: agents/mig.py, the node's
  ``nvidia.com/mig.config`` defaulting to ``migManager.config.default``.
"""

from __future__ import annotations

from typing import Any

from tests.cluster.agents import device_plugin, mig
from tests.cluster.agents.world import Published, World, image_has

NFD_GPU_LABELS = ("feature.node.kubernetes.io/pci-10de.present", "feature.node.kubernetes.io/pci-0302_10de.present",
                  "feature.node.kubernetes.io/pci-0300_10de.present")
OPERANDS = ("driver", "container-toolkit", "device-plugin", "gpu-feature-discovery", "dcgm-exporter", "dcgm",
            "mig-manager", "operator-validator", "node-status-exporter")


def is_operator(pod: dict[str, Any]) -> bool:
    return image_has(pod, "nvidia/gpu-operator", command="gpu-operator") and pod["metadata"]["name"].startswith("gpu-operator")


def tolerated(taints: list[dict[str, str]], tolerations: list[dict[str, Any]]) -> bool:
    """Whether every NoSchedule/NoExecute taint has a toleration (the DaemonSet controller's test,
    https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/). Written here,
    not taken from the linter's ``facts.pools``: the harness judges the linter and shares none
    of its code."""
    def tolerates(toleration: dict[str, Any], taint: dict[str, str]) -> bool:
        if toleration.get("effect") and toleration["effect"] != taint["effect"]:
            return False
        if not toleration.get("key"):
            return toleration.get("operator") == "Exists"
        if toleration["key"] != taint["key"]:
            return False
        return toleration.get("operator") == "Exists" or toleration.get("value", "") == taint.get("value", "")
    return all(any(tolerates(t, taint) for t in tolerations) for taint in taints
               if taint["effect"] in ("NoSchedule", "NoExecute"))


def _enabled(policy: dict[str, Any], section: str, default: bool = True) -> bool:
    return bool((policy.get(section) or {}).get("enabled", default))


def publish(world: World, out: Published) -> None:
    operators = world.running(is_operator, anywhere=True)
    policies = world.objects.get("ClusterPolicy", [])
    current = {**world.labels, **out.labels}
    if not operators or not policies or not any(current.get(k) == "true" for k in NFD_GPU_LABELS):
        return
    namespace, policy = operators[0]["metadata"]["namespace"], policies[0]["spec"]
    name = (policy.get("operator") or {}).get("runtimeClass") or "nvidia"
    out.runtime_classes |= {name: "nvidia", "nvidia-cdi": "nvidia-cdi", "nvidia-legacy": "nvidia-legacy"}
    out.labels["nvidia.com/gpu.present"] = "true"
    deploy = {}
    for operand in OPERANDS:
        key = f"nvidia.com/gpu.deploy.{operand}"
        deploy[operand] = current.get(key, "true") != "false"
        out.labels[key] = current.get(key, "true")
    if not tolerated(world.node.taints, (policy.get("daemonsets") or {}).get("tolerations") or []):
        out.problems.append("the GPU Operator's operands do not tolerate the node's taints")
        return
    if _enabled(policy, "driver") and deploy["driver"]:
        if world.node.host.read_only:
            out.problems.append("the operator's driver container cannot install the modules: the root file system is read-only")
        else:
            out.driver = True
    if not (world.driver_loaded or out.driver):
        return
    if _enabled(policy, "toolkit") and deploy["container-toolkit"]:
        out.runtimes |= {"nvidia", "nvidia-cdi", "nvidia-legacy"}
        toolkit_env = {e["name"]: str(e.get("value", "")) for e in (policy.get("toolkit") or {}).get("env") or []}
        if toolkit_env.get("CONTAINERD_SET_AS_DEFAULT", "").lower() == "true":
            out.default_runtime = "nvidia"
        # The installer writes each ACCEPT_* variable as its config.toml key (cmd/nvidia-ctk-installer/toolkit/toolkit.go).
        out.toolkit |= {name.lower().replace("_", "-"): value for name, value in toolkit_env.items()
                        if name.startswith("ACCEPT_NVIDIA_VISIBLE_DEVICES_")}
    if "nvidia" not in (world.node.host.runtimes | out.runtimes):
        return
    _mig_manager(world, out, policy, namespace, deploy)
    if _enabled(policy, "devicePlugin") and deploy["device-plugin"]:
        _device_plugin(world, out, policy, namespace)


def _mig_manager(world: World, out: Published, policy: dict[str, Any], namespace: str, deploy: dict[str, bool]) -> None:
    machine = world.node.machine
    if not (machine.gpu and machine.gpu.mig_capable and _enabled(policy, "migManager") and deploy["mig-manager"]):
        return
    config = (policy.get("migManager") or {}).get("config") or {}
    selected = world.labels.get(mig.CONFIG_LABEL) or config.get("default") or "all-disabled"
    out.labels[mig.CONFIG_LABEL] = selected
    if not config.get("name"):
        # The operator's own default-mig-parted-config then; the harness knows its all-disabled entry only.
        out.labels[mig.STATE_LABEL] = mig.apply(world, mig.ALL_DISABLED, selected)
        return
    data = world.configmap(namespace, config["name"]) or {}
    out.labels[mig.STATE_LABEL] = mig.apply(world, data.get("config.yaml", ""), selected)


def _device_plugin(world: World, out: Published, policy: dict[str, Any], namespace: str) -> None:
    config_ref = (policy.get("devicePlugin") or {}).get("config") or {}
    env = {"MIG_STRATEGY": (policy.get("mig") or {}).get("strategy", "single")}
    try:
        text = None  # without devicePlugin.config.name the operator runs no config-manager: flags only
        if config_ref.get("name"):
            configs = world.configmap(namespace, config_ref["name"]) or {}
            name = device_plugin.choose(world.labels.get(device_plugin.CONFIG_LABEL), configs,
                                        {"DEFAULT_CONFIG": config_ref.get("default", ""), "FALLBACK_STRATEGIES": "named,single"})
            text = configs.get(name, "")
        config = device_plugin.parsed(text, env)
    except device_plugin.nvidia_config.ConfigError as error:
        out.problems.append(f"the operator's device plugin (config-manager init container): {error}")
        return
    out.resources |= device_plugin.resources(config, world.node.machine, world.memory.mig)
    plugin_env = {e["name"]: str(e.get("value", "")) for e in (policy.get("devicePlugin") or {}).get("env") or []}
    strategies = ["cdi"] if _enabled(policy, "cdi") else plugin_env.get("DEVICE_LIST_STRATEGY", "envvar").split(",")
    out.injection |= {"cdi" if s.startswith("cdi") else s for s in strategies}
    if _enabled(policy, "gfd"):
        out.labels |= device_plugin.gfd_labels(config, world.node.machine, world.memory.mig)
