"""Each cross-field check fires, naming the path and line of the field to change.

Each case is a small spec; the line the error must point at ends with ``# <-``.
"""

from __future__ import annotations

import textwrap

import pytest
from ruamel.yaml import YAML

from gpustack.errors import SpecError
from gpustack.spec import chart_checks, checks, component_checks, control_plane_checks, dra_checks, pool_checks, talos_checks
from gpustack.spec.load import load_spec
from gpustack.spec.models import GpuStack

HEADER = "apiVersion: gpustack.io/v1alpha1\nkind: GpuStack\nmetadata:\n  name: t\nspec:\n"
K3S = "cluster:\n  distribution: k3s\n  kubernetesVersion: \"1.36\"\n"
L4_POOL = "nodePools:\n  - name: a\n    gpu:\n      model: L4\n"
KUBEADM = "cluster:\n  distribution: kubeadm\n  kubernetesVersion: \"1.36\"\n"
TALOS = "cluster:\n  distribution: talos\n  kubernetesVersion: \"1.36\"\n  talosVersion: v1.13.0\n"
H100_MIG = "nodePools:\n  - name: a\n    gpu:\n      model: H100\n    mig:\n      strategy: mixed\n      layout:\n"

# (check function, spec body below `spec:`, reported path, message fragment)
CASES = [
    ("check_gpu_models", K3S + "nodePools:\n  - name: a\n    gpu:\n      model: L5  # <-\n",
     "spec.nodePools[0].gpu.model", "unknown GPU model 'L5'; did you mean L4"),
    ("check_unique_pools", K3S + L4_POOL + "  - name: a  # <-\n    gpu:\n      model: T4\n",
     "spec.nodePools[1].name", "defined twice"),
    ("check_unique_pools", K3S + L4_POOL + "systemPools:\n  - name: a  # <-\n",
     "spec.systemPools[0].name", "defined twice"),
    ("check_cluster", "cluster:\n  distribution: kubeadm\n  kubernetesVersion: \"1.35\"\n"
     "  kubeadmVersion: v1.36.1  # <-\n" + L4_POOL, "spec.cluster.kubeadmVersion", "not of Kubernetes 1.35"),
    ("check_cluster", K3S + "  kubeadmVersion: v1.36.1  # <-\n" + L4_POOL, "spec.cluster.kubeadmVersion", "k3sVersion"),
    ("check_cluster", K3S + "  k3sVersion: v1.35.4+k3s1  # <-\n" + L4_POOL, "spec.cluster.k3sVersion",
     "not of Kubernetes 1.36"),
    ("check_cluster", K3S + "  k3sVersion: 1.36.4  # <-\n" + L4_POOL, "spec.cluster.k3sVersion", "v1.36.4+k3s1"),
    ("check_cluster", "cluster:\n  distribution: kubeadm\n  kubernetesVersion: \"1.36\"\n"
     "  k3sVersion: v1.36.4+k3s1  # <-\n" + L4_POOL, "spec.cluster.k3sVersion", "kubeadmVersion"),
    ("check_cluster", K3S + "  serverAddresses:\n    - 10.0.0.1\n    - server-1  # <-\n" + L4_POOL,
     "spec.cluster.serverAddresses[1]", "not an IP address"),
    ("check_cluster", K3S + "  podSubnet: 10.0.0.300/16  # <-\n" + L4_POOL, "spec.cluster.podSubnet", "CIDR"),
    ("check_cluster", K3S + "  controlPlaneEndpoint: api.example.internal:6443  # <-\n" + L4_POOL,
     "spec.cluster.controlPlaneEndpoint", "for distribution kubeadm"),
    ("check_control_plane", KUBEADM + "  controlPlaneEndpoint: api.example.internal:6443\n  controlPlane:\n"
     "    count: 2  # <-\n" + L4_POOL, "spec.cluster.controlPlane.count", "choose an odd count"),
    ("check_control_plane", KUBEADM + "  controlPlane:\n    count: 3  # <-\n" + L4_POOL,
     "spec.cluster.controlPlane.count", "need cluster.controlPlaneEndpoint"),
    ("check_control_plane", KUBEADM + "  controlPlaneEndpoint: api.example.internal:6443\n  controlPlane:\n"
     "    count: 3\n" + L4_POOL + "systemPools:\n  - name: control-plane  # <-\n",
     "spec.systemPools[0].name", "rename the pool"),
    ("check_control_plane", K3S + "  controlPlane:  # <-\n    count: 3\n" + L4_POOL,
     "spec.cluster.controlPlane", "--cluster-init"),
    ("check_control_plane", TALOS + "  controlPlane:  # <-\n    etcdSnapshots:\n      keep: 3\n" + L4_POOL,
     "spec.cluster.controlPlane", "controlplane machines"),
    ("check_system_pool", "cluster:\n  distribution: kubeadm\n  kubernetesVersion: \"1.35\"\n"
     "nodePools:  # <-\n  - name: a\n    gpu:\n      model: L4\n    taints:\n      - key: nvidia.com/gpu\n"
     "        effect: NoSchedule\nsystemPools:\n  - name: sys\n    taints:\n      - key: x\n        effect: NoExecute\n",
     "spec.nodePools", "spec.systemPools"),
    ("check_driver_source", K3S + L4_POOL + "    driver:\n      source: operator  # <-\n",
     "spec.nodePools[0].driver.source", "spec.gpuOperator.enabled is false"),
    ("check_driver_source", K3S + L4_POOL + "    driver:\n      source: operator\n    toolkit:\n      mode: legacy  # <-\n"
     "gpuOperator:\n  enabled: true\n", "spec.nodePools[0].toolkit.mode", "legacy"),
    ("check_driver_source", K3S + L4_POOL + "    driver:\n      source: operator\n    toolkit:\n"
     "      version: 1.20.0  # <-\ngpuOperator:\n  enabled: true\n", "spec.nodePools[0].toolkit.version",
     "remove toolkit.version"),
    ("check_driver_source", "cluster:\n  distribution: kubeadm\n  kubernetesVersion: \"1.36\"\n" + L4_POOL
     + "    toolkit:\n      version: 1.17.3  # <-\n", "spec.nodePools[0].toolkit.version", "from toolkit 1.17.4 on"),
    ("check_talos", "cluster:  # <-\n  distribution: talos\n" + L4_POOL, "spec.cluster", "needs cluster.talosVersion"),
    ("check_talos", "cluster:\n  distribution: talos\n  kubernetesVersion: \"1.36\"\n  talosVersion: v1.15.0  # <-\n"
     + L4_POOL, "spec.cluster.talosVersion", "v1.9 to v1.13"),
    ("check_talos", "cluster:\n  distribution: talos\n  kubernetesVersion: \"1.30\"  # <-\n  talosVersion: v1.13.0\n"
     + L4_POOL, "spec.cluster.kubernetesVersion", "runs Kubernetes 1.31 to 1.36"),
    ("check_talos", K3S + "  talosVersion: v1.13.0  # <-\n" + L4_POOL, "spec.cluster.talosVersion", "for distribution talos"),
    ("check_talos", K3S + L4_POOL + "    driver:\n      branch: lts  # <-\n", "spec.nodePools[0].driver.branch",
     "Talos's NVIDIA system extensions"),
    ("check_talos", TALOS + L4_POOL + "    driver:\n      source: operator  # <-\ngpuOperator:\n  enabled: true\n",
     "spec.nodePools[0].driver.source", "read-only root"),
    ("check_talos", TALOS + L4_POOL + "    driver:\n      version: \"595\"  # <-\n", "spec.nodePools[0].driver.version",
     "choose driver.branch"),
    ("check_talos", TALOS + L4_POOL + "    toolkit:\n      version: 1.17.8  # <-\n", "spec.nodePools[0].toolkit.version",
     "nothing to pin"),
    ("check_talos", TALOS + L4_POOL + "    toolkit:\n      mode: cdi  # <-\n", "spec.nodePools[0].toolkit.mode",
     "remove toolkit.mode"),
    ("check_talos", TALOS + "nodePools:\n  - name: a\n    gpu:\n      model: H100\n    mig:  # <-\n      layout:\n"
     "        1g.10gb: 7\n", "spec.nodePools[0].mig", "nvidia-mig-parted"),
    ("check_talos", TALOS + "nodePools:\n  - name: a\n    gpu:\n      model: V100-SXM2-32GB\n    driver:\n"
     "      modules: open  # <-\n", "spec.nodePools[0].driver.modules", "Turing and newer"),
    ("check_talos", TALOS + "nodePools:\n  - name: a\n    gpu:\n      model: B200\n    driver:\n"
     "      modules: proprietary  # <-\n", "spec.nodePools[0].driver.modules", "runs only NVIDIA's open kernel modules"),
    ("check_talos", TALOS + L4_POOL + "    labels:\n      node-role.kubernetes.io/gpu: \"\"  # <-\n",
     "spec.nodePools[0].labels.node-role.kubernetes.io/gpu", "NodeRestriction"),
    ("check_mig", K3S + L4_POOL + "devicePlugin:\n  migStrategy: single  # <-\n",
     "spec.devicePlugin.migStrategy", "no pool has MIG-capable GPUs"),
    ("check_mig", K3S + "nodePools:\n  - name: a\n    gpu:\n      model: H100\n"
     "devicePlugin:\n  migStrategy: single\n  sharing:\n    strategy: mps  # <-\n    replicas: 2\n",
     "spec.devicePlugin.sharing.strategy", "MPS"),
    ("check_pool_partitioning", K3S + H100_MIG + "        1g.5gb: 2  # <-\n",
     "spec.nodePools[0].mig.layout.1g.5gb", "no MIG profile '1g.5gb'; it has 1g.10gb"),
    ("check_pool_partitioning", K3S + H100_MIG.replace("layout:", "layout:  # <-") + "        3g.40gb: 1\n"
     "        4g.40gb: 1\n        1g.10gb: 1\n", "spec.nodePools[0].mig.layout", "8 compute and 9 memory slices"),
    ("check_pool_partitioning", K3S + H100_MIG.replace("mixed", "single  # <-") + "        1g.10gb: 2\n        2g.20gb: 1\n",
     "spec.nodePools[0].mig.strategy", "one profile"),
    ("check_pool_partitioning", K3S + L4_POOL + "    mig:  # <-\n      layout:\n        1g.10gb: 1\n",
     "spec.nodePools[0].mig", "cannot do MIG"),
    ("check_pool_partitioning", K3S + H100_MIG + "        1g.10gb: 2\n    sharing:  # <-\n      strategy: timeSlicing\n"
     "      replicas: 2\n", "spec.nodePools[0].sharing", "choose one"),
    ("check_pool_partitioning", K3S + L4_POOL + "    sharing:  # <-\n      strategy: timeSlicing\n      replicas: 2\n"
     "devicePlugin:\n  enabled: false\nsharing:\n  hami:\n    enabled: true\n", "spec.nodePools[0].sharing", "HAMi"),
    ("check_pool_partitioning", K3S + L4_POOL + "    labels:\n      nvidia.com/device-plugin.config: other  # <-\n"
     "    sharing:\n      strategy: timeSlicing\n      replicas: 2\n",
     "spec.nodePools[0].labels.nvidia.com/device-plugin.config", "nvidia.com/device-plugin.config=a"),
    ("check_pool_partitioning", K3S + "gpuOperator:\n  enabled: true\n"
     + H100_MIG.replace("nodePools:", "nodePools:  # <-") + "        1g.10gb: 2\n  - name: b\n    gpu:\n"
     "      model: H100\n    mig:\n      strategy: single\n      layout:\n        3g.40gb: 2\n",
     "spec.nodePools", "one mig.strategy"),
    ("check_vendor", K3S + "nodePools:\n  - name: amd\n    gpu:\n      model: MI300X\n      custom:\n"
     "        product: AMD-Instinct-MI300X\n        pciVendor: \"1002\"  # <-\n        pciDevice: \"74a1\"\n"
     "        pciClass: \"0302\"\n        architecture: cdna3\n        computeCapability: \"9.4\"\n"
     "        memoryMiB: 196608\n        powerLimitW: 750\n        dcgmProfiling: false\n        ecc: true\n"
     "        segment: datacenter\n", "spec.nodePools[0].gpu.custom.pciVendor", "PCI vendor 1002, not NVIDIA"),
    ("check_driver_source", K3S + L4_POOL + "    driver:\n      source: operator\n  - name: b\n    gpu:\n"
     "      model: T4\n    driver:\n      source: host  # <-\ngpuOperator:\n  enabled: true\n",
     "spec.nodePools[1].driver.source", 'nvidia.com/gpu.deploy.driver: "false"'),
    ("check_labelling_interval", K3S + "nodePools:\n  - name: a\n    count: 200\n    gpu:\n      model: L4\n"
     "nfd:\n  sleepInterval: 60s  # <-\n", "spec.nfd.sleepInterval", "at least 120s"),
    ("check_profiling", K3S + "nodePools:\n  - name: a\n    gpu:\n      model: RTX-4090\n"
     "monitoring:\n  dcgmExporter:\n    profiling: \"on\"  # <-\n", "spec.monitoring.dcgmExporter.profiling", "GeForce"),
    ("check_hami", K3S + L4_POOL + "devicePlugin:\n  enabled: true  # <-\nsharing:\n  hami:\n    enabled: true\n",
     "spec.devicePlugin.enabled", "nvidia.com/gpu"),
    ("check_hami", K3S + L4_POOL + "devicePlugin:\n  enabled: false\nsharing:\n  hami:\n    enabled: true\n"
     "    pools: [a, b]  # <-\n", "spec.sharing.hami.pools[1]", "no node pool named 'b'"),
    ("check_hami", K3S + L4_POOL + "devicePlugin:\n  enabled: false\nsharing:\n  hami:\n    enabled: true\n"
     "    admissionWebhook: false\n    schedulerName: false  # <-\n", "spec.sharing.hami.schedulerName",
     "no pod reaches hami-scheduler"),
    ("check_dra", "cluster:\n  distribution: k3s\n  kubernetesVersion: \"1.33\"  # <-\n" + L4_POOL
     + "devicePlugin:\n  enabled: false\ndra:\n  enabled: true\n", "spec.cluster.kubernetesVersion", "1.34"),
    ("check_dra", K3S + L4_POOL + "dra:\n  enabled: false  # <-\n  claimTemplates:\n    - name: x\n",
     "spec.dra.enabled", "dra.enabled is false"),
    ("check_dra", K3S + L4_POOL + "devicePlugin:\n  enabled: false\ndra:\n  enabled: true\n  driver: nvidia\n"
     "  claimTemplates:\n    - name: x\n      capacity:  # <-\n        cores: 30\n",
     "spec.dra.claimTemplates[0].capacity", "no consumable"),
    ("check_feature_gates", "cluster:\n  distribution: k3s\n  kubernetesVersion: \"1.35\"\n  featureGates:\n"
     "    DynamicResourceAllocation: false  # <-\n" + L4_POOL,
     "spec.cluster.featureGates.DynamicResourceAllocation", "locked"),
    ("check_fabric_manager_off", K3S + "nodePools:\n  - name: hgx\n    gpu:\n      model: H100-80GB-SXM\n"
     "      count: 8\n    driver:\n      source: host\n      fabricManager: false  # <-\n",
     "spec.nodePools[0].driver.fabricManager", "GPU pods it renders there (its smoke Job) would never start"),
    ("check_workloads", K3S + L4_POOL + "workloads:\n  - type: vllm\n    name: v\n    pool: b  # <-\n"
     "    model:\n      uri: s3://models/x\n      endpoint: http://minio:9000\n      credentialsSecret: s3\n",
     "spec.workloads[0].pool", "no node pool named 'b'"),
    ("check_workloads", K3S + L4_POOL + "workloads:\n  - type: vllm\n    name: v\n"
     "    model:\n      uri: s3://models/x\n      endpoint: http://minio:9000\n      credentialsSecret: s3\n"
     "    share:  # <-\n      memoryMiB: 8000\n", "spec.workloads[0].share", "sharing.hami.enabled"),
    ("check_dra_selectors", K3S + L4_POOL + "devicePlugin:\n  enabled: false\ndra:\n  enabled: true\n  driver: nvidia\n"
     "  claimTemplates:\n    - name: x\n      selectors:\n        - device.attributes['gpu.nvidia.com'].prodName == 'L4'  # <-\n",
     "spec.dra.claimTemplates[0].selectors[0]", "publishes no attribute prodName (did you mean productName?)"),
    ("check_dra_selectors", K3S + L4_POOL + "devicePlugin:\n  enabled: false\ndra:\n  enabled: true\n  driver: nvidia\n"
     "  deviceClasses:\n    - name: l4.example.com\n      selectors:\n        - device.driver ==  # <-\n",
     "spec.dra.deviceClasses[0].selectors[0]", "the CEL selector does not compile"),
    ("check_runbook_base", K3S + L4_POOL + "gitops:\n  argocd:\n    enabled: true\n"
     "    repoURL: https://gitea.example.com/ops/stacks.git  # <-\n", "spec.gitops.argocd.repoURL",
     "set monitoring.alerts.runbookBaseUrl"),
    ("check_dra_selectors", K3S + L4_POOL + "devicePlugin:\n  enabled: false\ndra:\n  enabled: true\n"
     "  deviceClasses:\n    - name: l4-1g.example.com\n      migProfile: 1g.10gb  # <-\n",
     "spec.dra.deviceClasses[0].migProfile", "publishes no MIG devices"),
    ("check_chart_versions", K3S + L4_POOL + "nfd:\n  version: 0.99.1  # <-\n", "spec.nfd.version",
     "no key data for, so `gpustack lint` could not check its values: use one of 0.14.6"),
    ("check_delivery", K3S + L4_POOL + "gitops:\n  flux:\n    enabled: true  # <-\n  argocd:\n    enabled: true\n"
     "    repoURL: https://github.com/o/r.git\n", "spec.gitops.flux.enabled", "enable one of gitops.flux and gitops.argocd"),
    ("check_delivery", K3S + L4_POOL + "gitops:\n  k3sHelmCharts: true  # <-\n  flux:\n    enabled: true\n",
     "spec.gitops.k3sHelmCharts", "K3s HelmCharts and Flux HelmReleases would both install every chart"),
]


def spec_text(body: str) -> str:
    return HEADER + textwrap.indent(body, "  ")


@pytest.mark.parametrize(("rule", "body", "path", "fragment"), CASES, ids=[f"{c[0]}-{c[2]}" for c in CASES])
def test_check_fires_with_path_and_line(tmp_path, rule, body, path, fragment):
    text = spec_text(body)
    line = next(i for i, row in enumerate(text.splitlines(), start=1) if row.endswith("# <-"))
    file = tmp_path / "spec.yaml"
    file.write_text(text, encoding="utf-8")
    # The rule itself reports it ...
    stack = GpuStack.model_validate(YAML(typ="safe").load(text))
    module = next(m for m in (pool_checks, component_checks, chart_checks, dra_checks, talos_checks, control_plane_checks) if hasattr(m, rule))
    findings = getattr(module, rule)(stack)
    assert any(fragment in message for _, message in findings)
    # ... and loading locates it.
    with pytest.raises(SpecError) as error:
        load_spec(str(file))
    problems = [p for p in error.value.problems if p.path == path]
    assert problems, f"no problem at {path}: {[str(p) for p in error.value.problems]}"
    assert problems[0].file == str(file) and problems[0].line == line and problems[0].column
    assert fragment in problems[0].message


def test_every_check_has_a_case():
    covered = {case[0] for case in CASES}
    assert {rule.__name__ for rule in checks.CHECKS + checks.RENDER_CHECKS} | {"check_gpu_models"} <= covered


def test_a_valid_spec_passes_every_check(tmp_path):
    file = tmp_path / "spec.yaml"
    file.write_text(spec_text(K3S + L4_POOL), encoding="utf-8")
    assert load_spec(str(file)).stack.spec.nodePools[0].gpu.model == "L4"


@pytest.mark.parametrize(
    "body",
    [
        # an untainted system pool, a PreferNoSchedule-only GPU pool, and K3s (its server runs pods)
        "cluster:\n  distribution: kubeadm\n" + L4_POOL + "    taints:\n      - key: g\n        effect: NoSchedule\n"
        "systemPools:\n  - name: sys\n",
        "cluster:\n  distribution: kubeadm\n" + L4_POOL + "    taints:\n      - key: g\n        effect: PreferNoSchedule\n",
        K3S + L4_POOL + "    taints:\n      - key: g\n        effect: NoSchedule\n",
    ],
    ids=["system-pool", "prefer-no-schedule", "k3s"],
)
def test_somewhere_for_the_monitoring_stack_to_run(body):
    stack = GpuStack.model_validate(YAML(typ="safe").load(spec_text(body)))
    assert list(pool_checks.check_system_pool(stack)) == []


def test_lint_context_specs_skip_the_render_only_checks(tmp_path):
    tainted = "cluster:\n  distribution: kubeadm\n" + L4_POOL + "    taints:\n      - key: g\n        effect: NoSchedule\n"
    file = tmp_path / "spec.yaml"
    file.write_text(spec_text(tainted), encoding="utf-8")
    assert load_spec(str(file), render=False).stack.spec.nodePools[0].taints
    with pytest.raises(SpecError):
        load_spec(str(file))


HGX_POOL = "nodePools:\n  - name: hgx\n    gpu:\n      model: H100-80GB-SXM\n      count: {count}\n    driver:\n      source: host\n      fabricManager: false\n"


@pytest.mark.parametrize(
    "body",
    [
        # no GPU pods rendered on the board: the user deploys what runs Fabric Manager
        K3S + HGX_POOL.format(count=8) + "smokeJobs: false\n",
        # four SXM GPUs are no NVSwitch board: nothing to manage
        K3S + HGX_POOL.format(count=4),
    ],
    ids=["no-gpu-pods", "not-a-board"],
)
def test_fabric_manager_off_is_fine_without_gpu_pods_on_a_board(body):
    stack = GpuStack.model_validate(YAML(typ="safe").load(spec_text(body)))
    assert list(pool_checks.check_fabric_manager_off(stack)) == []


@pytest.mark.parametrize(("distribution", "version"), [("kubeadm", "1.17.4"), ("kubeadm", "1.20.0"), ("k3s", "1.17.3")])
def test_toolkits_that_read_containerd_2_config_pass(distribution, version):
    """From 1.17.4 on kubeadm; on K3s, which writes its containerd config itself, any release."""
    stack = GpuStack.model_validate({
        "apiVersion": "gpustack.io/v1alpha1", "kind": "GpuStack", "metadata": {"name": "t"},
        "spec": {"cluster": {"distribution": distribution, "kubernetesVersion": "1.36"},
                 "nodePools": [{"name": "a", "gpu": {"model": "L4"}, "toolkit": {"version": version}}]}})
    assert not list(pool_checks.check_driver_source(stack))
