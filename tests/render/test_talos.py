"""Talos rendering: machine-config patches, schematics, the talosctl host steps, and the charts'
values where Talos differs (RuntimeClass, the GPU Operator's driver and toolkit, control-plane jobs).

Talos's own code checks the same files in tests/talos; these tests pin what gpustack decides.
"""

from __future__ import annotations

import tomllib

import yaml
from render_helpers import release

from gpustack.lint.facts.containerdconfig import DEFAULT_RUNTIME
from gpustack.lint.facts.talos import CRI_CUSTOMIZATION, KERNEL_MODULES
from gpustack.render.stackfiles import cni, host_steps, talos_config

TALOS = {"distribution": "talos", "talosVersion": "v1.13.0", "kubernetesVersion": "1.36"}


def _doc(files: dict[str, str], path: str) -> dict:
    return yaml.safe_load(files[path])


def test_a_gpu_pool_gets_a_patch_and_a_schematic_and_only_the_cni_of_the_cluster_folder(render_spec):
    _, files = render_spec(
        cluster=TALOS,
        nodePools=[{"name": "gpu", "gpu": {"model": "L4"}, "labels": {"tier": "a"},
                    "taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]}],
        systemPools=[{"name": "sys"}],
    )
    assert [path for path in files if path.startswith("cluster/")] == [cni.PATH]
    machine = _doc(files, "talos/pools/gpu.patch.yaml")["machine"]
    assert [m["name"] for m in machine["kernel"]["modules"]] == list(KERNEL_MODULES)
    assert machine["sysctls"] == {"net.core.bpf_jit_harden": "1"}
    assert machine["nodeLabels"] == {"tier": "a"}
    # Registered by the kubelet: NodeRestriction forbids a worker to change its taints later.
    assert "nodeTaints" not in machine
    assert machine["kubelet"]["extraConfig"]["registerWithTaints"] == [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]
    assert "files" not in machine  # nvidia stays a RuntimeClass, not the default runtime
    assert _doc(files, "talos/pools/gpu.schematic.yaml") == {"customization": {"systemExtensions": {"officialExtensions": [
        "siderolabs/nvidia-open-gpu-kernel-modules-production", "siderolabs/nvidia-container-toolkit-production"]}}}
    # A pool without labels, taints or gates: no patch (talosctl refuses an empty one), no schematic.
    assert "talos/pools/sys.patch.yaml" not in files and "talos/pools/sys.schematic.yaml" not in files
    assert "sys.patch.yaml" not in files["README.md"]
    # No gates, no pod subnet: the control plane's patch still turns Talos's Flannel off.
    assert _doc(files, talos_config.CONTROL_PLANE_PATCH) == {"cluster": {"network": {"cni": {"name": "none"}}}}


def test_cilium_replaces_talos_flannel_with_talos_values(render_spec):
    _, files = render_spec(cluster=TALOS)
    values = _doc(files, cni.PATH)
    assert values["policyEnforcementMode"] == "default" and values["ipam"] == {"mode": "kubernetes"}
    # Cilium's Talos guide: no SYS_MODULE, Talos's cgroup2 mount, KubePrism.
    assert "SYS_MODULE" not in values["securityContext"]["capabilities"]["ciliumAgent"]
    assert values["cgroup"] == {"autoMount": {"enabled": False}, "hostRoot": "/sys/fs/cgroup"}
    assert (values["k8sServiceHost"], values["k8sServicePort"]) == ("localhost", 7445)
    readme = files["README.md"]
    assert readme.index("Machine-config patches") < readme.index(cni.helm_command()) < readme.index("## Apply order")


def test_default_runtime_is_the_cri_drop_in_that_lint_reads_back(render_spec):
    _, files = render_spec(cluster={**TALOS, "nvidiaDefaultRuntime": True})
    [written] = _doc(files, "talos/pools/gpu.patch.yaml")["machine"]["files"]
    assert written["path"] == CRI_CUSTOMIZATION and written["op"] == "create"
    assert tomllib.loads(written["content"])["plugins"]["io.containerd.cri.v1.runtime"]["containerd"] == {
        "default_runtime_name": "nvidia"}
    assert DEFAULT_RUNTIME.findall(written["content"]) == ["nvidia"]


def test_feature_gates_reach_the_control_plane_and_every_kubelet(render_spec):
    _, files = render_spec(cluster={**TALOS, "featureGates": {"ExampleGate": True}, "podSubnet": "10.42.0.0/16"})
    patch = _doc(files, talos_config.CONTROL_PLANE_PATCH)
    assert patch["cluster"]["network"] == {"cni": {"name": "none"}, "podSubnets": ["10.42.0.0/16"]}
    for section in ("apiServer", "controllerManager", "scheduler"):
        assert patch["cluster"][section] == {"extraArgs": {"feature-gates": "ExampleGate=true"}}
    gates = {"extraConfig": {"featureGates": {"ExampleGate": True}}}
    assert patch["machine"]["kubelet"] == gates
    assert _doc(files, "talos/pools/gpu.patch.yaml")["machine"]["kubelet"] == gates


def test_extensions_follow_the_gpu_flavour_branch_and_board(render_spec):
    _, files = render_spec(cluster=TALOS, nodePools=[
        {"name": "t4", "gpu": {"model": "T4"}, "driver": {"modules": "proprietary", "branch": "lts"}},
        {"name": "v100", "gpu": {"model": "V100-SXM2-32GB"}},
        {"name": "hgx", "gpu": {"model": "H100-80GB-SXM", "count": 8}},
    ])
    extensions = {pool: _doc(files, f"talos/pools/{pool}.schematic.yaml")["customization"]["systemExtensions"][
        "officialExtensions"] for pool in ("t4", "v100", "hgx")}
    assert extensions["t4"] == ["siderolabs/nonfree-kmod-nvidia-lts", "siderolabs/nvidia-container-toolkit-lts"]
    assert extensions["v100"][0] == "siderolabs/nonfree-kmod-nvidia-production"  # Volta: no open modules
    assert extensions["hgx"][-1] == "siderolabs/nvidia-fabricmanager-production"


def test_runtime_class_is_rendered_and_the_operator_leaves_driver_and_toolkit_to_talos(render_spec):
    rendered, files = render_spec(cluster=TALOS)
    assert "RuntimeClass" in files["manifests/runtime.yaml"]
    assert release(rendered, "nvidia-device-plugin")["runtimeClassName"] == "nvidia"
    rendered, files = render_spec(cluster=TALOS, gpuOperator={"enabled": True})
    values = release(rendered, "gpu-operator")
    assert values["driver"]["enabled"] is False and values["toolkit"] == {"enabled": False}
    assert "manifests/runtime.yaml" not in files  # the operator's, as on kubeadm


def test_control_plane_jobs_are_off(render_spec):
    rendered, _ = render_spec(cluster=TALOS)
    values = release(rendered, "kube-prometheus-stack")
    assert all(values[job] == {"enabled": False} for job in
               ("kubeControllerManager", "kubeScheduler", "kubeProxy", "kubeEtcd"))


def test_host_steps_are_talosctl_not_apt(render_spec):
    rendered, files = render_spec(cluster=TALOS, nodePools=[
        {"name": "a", "gpu": {"model": "L4"}}, {"name": "b", "gpu": {"model": "L4"}},
        {"name": "c", "gpu": {"model": "L4"}, "driver": {"branch": "lts"}}])
    steps = host_steps.steps(rendered.ctx.stack, files)
    commands = "\n".join(c for step in steps for c in step.commands)
    assert "apt-get" not in commands and "kubeadm" not in commands
    # One installer per set of extensions: a and b share one, c has its own.
    images = [s for s in steps if "installer" in s.title]
    assert [s.where for s in images] == ["For each node of pools `a`, `b`", "For each node of pool `c`"]
    assert [s.title for s in images] == [
        "Talos v1.13.0 installer with the NVIDIA extensions (a, b)", "Talos v1.13.0 installer with the NVIDIA extensions (c)"]
    assert 'talosctl -n "$NODE" upgrade --image "factory.talos.dev/installer/${SCHEMATIC_ID}:v1.13.0"' in commands
    assert "--data-binary @talos/pools/c.schematic.yaml https://factory.talos.dev/schematics" in commands
    for pool in "abc":
        assert f'talosctl -n "$NODE" patch mc --patch @talos/pools/{pool}.patch.yaml' in commands
    assert 'talosctl -n "$NODE" get extensions' in commands
    assert 'talosctl -n "$NODE" patch mc --patch @talos/controlplane.patch.yaml' in commands
    readme = files["README.md"]
    assert "Talos (v1.13.0), Kubernetes 1.36." in readme
    assert "`talos/pools/a.schematic.yaml`: Image Factory schematic of pool `a`" in readme
