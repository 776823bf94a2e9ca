"""Cluster configuration: K3s config.yaml vs kubeadm ClusterConfiguration + KubeletConfiguration."""

from __future__ import annotations


import pytest
import yaml
from render_helpers import release
from ruamel.yaml import YAML

from gpustack.errors import GpustackError
from gpustack.render.components import runtime
from gpustack.render.stackfiles import cluster_config, cni

SAFE = YAML(typ="safe")
# DRADeviceTaints (alpha, off in 1.35) is read by apiserver, controller-manager and scheduler;
# a gate gpustack does not know goes to every component.
GATES = {"DRADeviceTaints": True, "ExampleGate": True}
CONTROL_PLANE = "DRADeviceTaints=true,ExampleGate=true"


def test_k3s_gates_as_arg_lists_and_default_runtime(render_spec):
    rendered, files = render_spec(cluster={"kubernetesVersion": "1.35", "featureGates": GATES, "nvidiaDefaultRuntime": True})
    assert "cluster/kubeadm-config.yaml" not in files
    config = SAFE.load(files["cluster/config.yaml"])
    flag = f"feature-gates={CONTROL_PLANE}"
    assert config == {
        "kube-apiserver-arg": [flag],
        "kube-controller-manager-arg": [flag],
        "kube-scheduler-arg": [flag],
        "kubelet-arg": ["feature-gates=ExampleGate=true"],
        "default-runtime": "nvidia",
    }


def test_k3s_without_gates_is_an_empty_mapping(render_spec):
    _, files = render_spec()
    assert SAFE.load(files["cluster/config.yaml"]) == {}
    assert files["cluster/config.yaml"].startswith("# K3s configuration of stack test")


def test_kubeadm_v1beta4_extra_args_and_kubelet_gates(render_spec):
    rendered, files = render_spec(cluster={"distribution": "kubeadm", "kubernetesVersion": "1.35", "kubeadmVersion": "v1.35.0", "featureGates": GATES},
                                  monitoring={"enabled": False})
    assert "cluster/config.yaml" not in files
    cluster_config, kubelet = SAFE.load_all(files["cluster/kubeadm-config.yaml"])
    value = CONTROL_PLANE
    assert cluster_config["apiVersion"] == "kubeadm.k8s.io/v1beta4"
    assert cluster_config["kind"] == "ClusterConfiguration"
    assert cluster_config["kubernetesVersion"] == "v1.35.0"
    # No endpoint in the spec: the README's init step fills the variable the join files use too.
    assert cluster_config["controlPlaneEndpoint"] == "${CONTROL_PLANE_ENDPOINT}"
    assert "envsubst '$CONTROL_PLANE_ENDPOINT' < cluster/kubeadm-config.yaml" in files["README.md"]
    assert "KUBERNETES_VERSION" not in files["README.md"]  # the spec's release is written in place
    assert cluster_config["networking"] == {"podSubnet": "10.244.0.0/16"}
    for section in ("controllerManager", "scheduler"):
        assert cluster_config[section] == {"extraArgs": [{"name": "feature-gates", "value": value}]}
    # The API server's gates come first, then its Pod Security defaults (test_control_plane_ha.py).
    assert cluster_config["apiServer"]["extraArgs"][0] == {"name": "feature-gates", "value": value}
    assert "etcd" not in cluster_config  # no monitoring, no metrics to expose
    assert kubelet["featureGates"] == {"ExampleGate": True}


def test_kubeadm_exposes_only_the_authenticated_metrics_ports(render_spec):
    rendered, files = render_spec(cluster={"distribution": "kubeadm", "kubernetesVersion": "1.35", "featureGates": GATES,
                                           "kubeadmVersion": "v1.35.2", "podSubnet": "192.168.0.0/16",
                                           "controlPlaneEndpoint": "api.example.internal:6443"})
    cluster_config, kubelet = SAFE.load_all(files["cluster/kubeadm-config.yaml"])
    assert cluster_config["kubernetesVersion"] == "v1.35.2"
    assert cluster_config["controlPlaneEndpoint"] == "api.example.internal:6443"
    assert cluster_config["networking"] == {"podSubnet": "192.168.0.0/16"}
    # 10257 and 10259 authenticate and authorize /metrics: bound to every interface.
    for section in ("controllerManager", "scheduler"):
        assert cluster_config[section]["extraArgs"] == [
            {"name": "feature-gates", "value": CONTROL_PLANE}, {"name": "bind-address", "value": "0.0.0.0"}
        ]
    # kube-proxy's 10249 is plain HTTP: left on kubeadm's 127.0.0.1, its job off. etcd's 2381 serves
    # metrics only and is the cluster's one store: on every interface, the chart's kubeEtcd job on.
    assert cluster_config["etcd"] == {"local": {"extraArgs": [{"name": "listen-metrics-urls", "value": "http://0.0.0.0:2381"}]}}
    assert kubelet["kind"] == "KubeletConfiguration"
    assert "KubeProxyConfiguration" not in files["cluster/kubeadm-config.yaml"]
    values = release(rendered, "kube-prometheus-stack")
    assert values["kubeProxy"] == {"enabled": False} and "kubeEtcd" not in values
    # kube-prometheus-stack's defaults select the static pods (component: ...) at the secure ports.
    assert not {"kubeControllerManager", "kubeScheduler"} & set(values)
    join = SAFE.load(files["cluster/join-gpu.yaml"])
    assert join["discovery"]["bootstrapToken"]["apiServerEndpoint"] == "api.example.internal:6443"
    assert "sudo kubeadm init --config cluster/kubeadm-config.yaml" in files["README.md"]


def test_kubeadm_without_a_release_runs_the_installed_kubeadms(render_spec):
    _, files = render_spec(cluster={"distribution": "kubeadm", "kubernetesVersion": "1.35"})
    cluster_config, _ = SAFE.load_all(files["cluster/kubeadm-config.yaml"])
    # Never stable-<minor>: the exact release of the kubeadm the packages step installed and held.
    assert cluster_config["kubernetesVersion"] == "${KUBERNETES_VERSION}"
    readme = files["README.md"]
    assert 'export KUBERNETES_VERSION="$(kubeadm version -o short)"' in readme
    assert "envsubst '$KUBERNETES_VERSION $CONTROL_PLANE_ENDPOINT' < cluster/kubeadm-config.yaml" in readme


def test_kubeadm_joins_each_pool_with_its_taints_and_labels(render_spec):
    taint = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
    rendered, files = render_spec(
        cluster={"distribution": "kubeadm"},
        nodePools=[{"name": "gpu", "gpu": {"model": "L4"}, "labels": {"tier": "a", "zone": "b"}, "taints": [taint]}],
        systemPools=[{"name": "sys", "count": 2}],
    )
    join = SAFE.load(files["cluster/join-gpu.yaml"])
    assert join["kind"] == "JoinConfiguration" and join["apiVersion"] == "kubeadm.k8s.io/v1beta4"
    assert join["nodeRegistration"] == {
        "taints": [taint],
        "kubeletExtraArgs": [{"name": "node-labels", "value": "tier=a,zone=b"}],
    }
    assert join["discovery"]["bootstrapToken"]["token"] == "${JOIN_TOKEN}"
    assert SAFE.load(files["cluster/join-sys.yaml"])["nodeRegistration"] == {"taints": []}
    assert "envsubst < join-gpu.yaml" in files["cluster/join-gpu.yaml"]


def test_k3s_binds_control_plane_metrics_only_where_they_are_scraped(render_spec):
    rendered, files = render_spec(cluster={"serverAddresses": ["10.0.0.5"], "podSubnet": "10.42.0.0/16"})
    config = SAFE.load(files["cluster/config.yaml"])
    # kube-proxy's metrics are plain HTTP: not exposed, its job off.
    assert config == {
        "kube-controller-manager-arg": ["bind-address=0.0.0.0"],
        "kube-scheduler-arg": ["bind-address=0.0.0.0"],
        "cluster-cidr": "10.42.0.0/16",
    }
    values = release(rendered, "kube-prometheus-stack")
    for job in ("kubeControllerManager", "kubeScheduler"):
        assert values[job] == {"endpoints": ["10.0.0.5"]}
    assert values["kubeEtcd"] == values["kubeProxy"] == {"enabled": False}
    # Without the servers' addresses nothing can be scraped: the jobs (and their Down alerts) are off.
    rendered, files = render_spec()
    assert SAFE.load(files["cluster/config.yaml"]) == {}
    values = release(rendered, "kube-prometheus-stack")
    assert all(values[job] == {"enabled": False} for job in ("kubeControllerManager", "kubeScheduler", "kubeProxy"))
    assert any("cluster.serverAddresses" in note for note in rendered.notes["control-plane"])


def test_kubeadm_default_runtime_goes_to_nvidia_ctk(render_spec):
    _, files = render_spec(cluster={"distribution": "kubeadm", "nvidiaDefaultRuntime": True})
    assert "sudo nvidia-ctk runtime configure --runtime=containerd --set-as-default\n" in files["README.md"]
    # Without the GPU Operator nobody else creates the RuntimeClass: gpustack does.
    assert SAFE.load(files["manifests/runtime.yaml"]) == runtime.runtime_class()
    assert "runtime.yaml" in SAFE.load(files["manifests/kustomization.yaml"])["resources"]


def test_k3s_registers_its_own_runtime_class(render_spec):
    _, files = render_spec()
    assert "manifests/runtime.yaml" not in files
    step = next(p for p in files["README.md"].split("\n### ") if p.split("\n", 1)[0].endswith("containerd runtime nvidia"))
    assert "apply no RuntimeClass of your own" in step and "config-v3.toml.tmpl" in step


def test_component_gates_only_where_needed_and_unknown_user_gates_everywhere():
    gates = cluster_config.merge_gates([{"kubelet": {"A": True}}, {"apiserver": {"A": True}}], {"U": False}, minor=36)
    assert gates == {
        "apiserver": {"A": True, "U": False},
        "controller-manager": {"U": False},
        "scheduler": {"U": False},
        "kubelet": {"A": True, "U": False},
    }
    assert cluster_config.gate_flag(gates["kubelet"]) == "A=true,U=false"


def test_known_user_gates_only_where_read_and_not_at_their_default():
    user = {"DRAConsumableCapacity": True, "DRAPartitionableDevices": True}
    assert cluster_config.merge_gates([], user, minor=36) == {c: {} for c in cluster_config.K3S_ARGS}  # both on by default
    gates = cluster_config.merge_gates([], user, minor=35)
    assert gates["kubelet"] == {"DRAConsumableCapacity": True}
    assert gates["controller-manager"] == {}
    assert gates["apiserver"] == gates["scheduler"] == user


def test_components_disagreeing_on_a_gate_is_an_error():
    with pytest.raises(GpustackError, match="disagree"):
        cluster_config.merge_gates([{"kubelet": {"A": True}}, {"kubelet": {"A": False}}], {}, minor=36)


def test_kubeadm_host_driver_example_joins_tainted_gpu_pools_and_an_untainted_system_pool(examples):
    rendered, files = examples["kubeadm-host-driver"]
    taint = [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]
    for pool, labels in (("l40s", "gpu-class=training"), ("l4", "gpu-class=inference")):
        registration = SAFE.load(files[f"cluster/join-{pool}.yaml"])["nodeRegistration"]
        assert registration == {"taints": taint, "kubeletExtraArgs": [{"name": "node-labels", "value": labels}]}
    assert SAFE.load(files["cluster/join-system.yaml"])["nodeRegistration"] == {"taints": []}
    # No GPU Operator: the host driver and toolkit, nvidia-ctk's runtime, the charts' node agents.
    assert {r.chart for r in rendered.releases} == {
        "kube-prometheus-stack", "node-feature-discovery", "nvidia-device-plugin", "dcgm-exporter"
    }
    assert "manifests/runtime.yaml" in files
    # The GPU pools' node agents tolerate the taint the pools carry (the device plugin's chart does
    # by default, so its values leave its list alone).
    for tolerations in (release(rendered, "dcgm-exporter")["tolerations"],
                        release(rendered, "node-feature-discovery")["worker"]["tolerations"]):
        assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in tolerations
    assert "tolerations" not in release(rendered, "nvidia-device-plugin")


# --- the pod network (render.stackfiles.cni) ------------------------------------------------


@pytest.mark.parametrize("subnet", [None, "10.32.0.0/12"])
def test_kubeadm_installs_cilium_enforcing_policies_on_the_clusterconfigurations_pod_subnet(render_spec, subnet):
    cluster = {"distribution": "kubeadm", "kubernetesVersion": "1.36", **({"podSubnet": subnet} if subnet else {})}
    _, tree = render_spec(cluster=cluster)
    config = next(d for d in yaml.safe_load_all(tree["cluster/kubeadm-config.yaml"]) if d["kind"] == "ClusterConfiguration")
    values = yaml.safe_load(tree[cni.PATH])
    # Kubernetes IPAM: each node's podCIDR, which the controller manager cuts from podSubnet.
    assert values["ipam"] == {"mode": "kubernetes"}
    assert config["networking"]["podSubnet"] == (subnet or "10.244.0.0/16")
    assert values["policyEnforcementMode"] == "default"
    # The chart's agent tolerations (operator: Exists) are kept, so tainted GPU nodes get it.
    assert "tolerations" not in values and "k8sServiceHost" not in values
    readme = tree["README.md"]
    assert cni.helm_command() in readme and f"--version {cni.VERSION}" in cni.helm_command()
    # The CNI runs right after kubeadm init, before the pools join and before any release.
    assert readme.index("sudo kubeadm init") < readme.index(cni.helm_command()) < readme.index("kubeadm join")
    assert readme.index(cni.helm_command()) < readme.index("## Apply order")


@pytest.mark.parametrize("distribution", ["kubeadm", "talos"])
def test_cni_none_leaves_the_pod_network_to_the_user(render_spec, distribution):
    cluster = {"distribution": distribution, "kubernetesVersion": "1.36", "cni": "none",
               **({"talosVersion": "v1.13.0"} if distribution == "talos" else {})}
    _, tree = render_spec(cluster=cluster)
    assert cni.PATH not in tree and "helm upgrade --install cilium" not in tree["README.md"]
    assert "one that enforces NetworkPolicy (cluster.cni: none)" in tree["README.md"]
    if distribution == "talos":  # Talos's Flannel stays off: it would enforce nothing
        assert yaml.safe_load(tree["talos/controlplane.patch.yaml"])["cluster"]["network"]["cni"] == {"name": "none"}


def test_the_cilium_operator_fits_the_nodes_it_tolerates(render_spec):
    """The chart's operator tolerates the control plane's taints, not the pools', one replica a node."""
    cluster = {"distribution": "kubeadm", "kubernetesVersion": "1.36"}
    one = {"name": "gpu", "count": 1, "gpu": {"model": "L4"}}
    taint = [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]

    def replicas(pool, system=0):
        systems = [{"name": "sys", "count": system}] if system else []
        _, tree = render_spec(cluster=cluster, nodePools=[pool], systemPools=systems)
        return yaml.safe_load(tree[cni.PATH])["operator"]["replicas"]

    assert replicas(one) == 1
    assert replicas({**one, "count": 3}) == 2
    assert replicas({**one, "count": 3, "taints": taint}, system=1) == 1  # one untainted node
    assert replicas({**one, "count": 3, "taints": taint}, system=2) == 2
    assert replicas({**one, "count": 3, "taints": [{**taint[0], "effect": "PreferNoSchedule"}]}) == 2


def test_k3s_keeps_its_own_flannel(render_spec):
    _, tree = render_spec()
    assert not [path for path in tree if path.startswith("cluster/cni/")]
    assert "Flannel (its default CNI)" in tree["README.md"]
