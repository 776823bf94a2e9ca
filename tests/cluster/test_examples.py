"""Every example's rendered stack applied to a real control plane and run on fake GPU nodes.

Per example: one cluster from the spec's pools; the charts' CRDs, the real charts' ``helm
template`` output with the rendered values, the rendered manifests and the delivery objects,
all server-side applied (deploy.py); then every workload Running where it belongs.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from gpustack.lint.facts.quantities import parse_quantity
from gpustack.render import pod_security
from gpustack.render.stackfiles import pod_security_admission
from tests.cluster import deploy
from tests.cluster.api import ApiError
from tests.cluster.control_plane import REPO
from tests.cluster.install import Deployed, apply_stack, wait_for_rollouts
from tests.cluster.spec import gpu_model, load
from tests.cluster.support import (
    WAIT_SECONDS,
    describe,
    gpu_requests,
    owned_pods,
    pods,
    scheduling_message,
    start,
    unavailable,
    wait_for,
    workload_path,
)

pytestmark = pytest.mark.cluster

EXAMPLES = sorted((REPO / "examples").glob("*.yaml"))
STACKS = {path: load(path) for path in EXAMPLES}
VLLM_EXAMPLES = [p for p, stack in STACKS.items() if any(w.type == "vllm" for w in stack.spec.workloads)]
DRA_EXAMPLES = [p for p, stack in STACKS.items() if stack.spec.dra.enabled and stack.spec.dra.claimTemplates]
# DaemonSets of GPU node agents: on every GPU node of the pools they serve and nowhere else.
GPU_AGENT = re.compile(r"device-plugin|gpu-feature-discovery|dcgm-exporter|hami|dra")
# DaemonSets that belong on every node (metrics and feature discovery of the whole fleet, the pod
# network: Cilium's agent and its Envoy proxy).
NODE_AGENT = re.compile(r"node-exporter|nfd-worker|node-feature-discovery-worker|^cilium")
# Stacks whose pod network the README installs (tests/cluster/cilium.py): kubeadm and Talos.
CNI_EXAMPLES = [p for p, stack in STACKS.items() if stack.spec.cluster.distribution != "k3s"]


@pytest.fixture(scope="module", params=EXAMPLES, ids=[p.stem for p in EXAMPLES])
def deployed(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, helm: str) -> Deployed:
    spec: Path = request.param
    if not deploy.CHARTS.is_dir():
        unavailable(f"{deploy.CHARTS} not present (the packaged upstream charts)")
    generator = start(spec, tmp_path_factory.mktemp(spec.stem) / "state", REPO / "output" / spec.stem)
    cluster = next(generator)
    request.addfinalizer(generator.close)
    return apply_stack(cluster, STACKS[spec], REPO / "output" / spec.stem)


def test_every_object_is_accepted(deployed: Deployed) -> None:
    """kubectl stops the fixture at the first refusal with the server's message; here, the count."""
    assert all(line.endswith("serverside-applied") for line in deployed.accepted), deployed.accepted
    assert len(deployed.accepted) == deployed.sent


def test_every_workload_runs(deployed: Deployed) -> None:
    wait_for_rollouts(deployed)
    api = deployed.cluster.api
    for workload in (w for w in deployed.workloads() if w["kind"] != "Job"):  # a Job's pods complete

        def not_running(workload: dict[str, Any] = workload) -> list[dict[str, Any]]:
            return [p for p in owned_pods(api, workload) if p["status"].get("phase") != "Running"]

        wait_for(lambda: not not_running(), WAIT_SECONDS, lambda: describe(api, not_running()))


def test_pod_security_labels_are_enforced(deployed: Deployed) -> None:
    """The API server's Pod Security admission holds each labelled namespace to its level: a
    privileged pod is refused where the level is baseline or restricted, a pod that may run as root
    where it is restricted (a server-side dry run: nothing is created). The stack's own pods there
    run (test_every_workload_runs): each label admits what the stack puts there and no more than its level."""
    api = deployed.cluster.api
    container = {"name": "probe", "image": "registry.k8s.io/pause:3.10"}
    probes = {
        "privileged": {"containers": [{**container, "securityContext": {"privileged": True}}]},
        "root": {"containers": [container]},
    }
    refused_by = {pod_security.BASELINE: {"privileged"}, pod_security.RESTRICTED: {"privileged", "root"}}
    for namespace in (o for o in deployed.objects if o["kind"] == "Namespace"):
        level = namespace["metadata"].get("labels", {}).get(pod_security.ENFORCE)
        if level not in refused_by:
            continue
        for probe, spec in probes.items():
            path = f"/api/v1/namespaces/{namespace['metadata']['name']}/pods"
            pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"psa-{probe}"}, "spec": spec}
            if probe in refused_by[level]:
                with pytest.raises(ApiError, match="violates PodSecurity"):
                    api.request("POST", path, pod, query={"dryRun": "All"})
            else:
                api.request("POST", path, pod, query={"dryRun": "All"})


def test_cluster_wide_pod_security_default(deployed: Deployed) -> None:
    """On kubeadm the API server runs with the rendered AdmissionConfiguration (tests/cluster/api_server.py
    passes what the ClusterConfiguration gives kube-apiserver): a namespace nobody labelled is held to
    baseline, kube-system is exempt (kube-proxy, the etcd snapshots). The stack converged under it
    (test_every_workload_runs)."""
    if not (REPO / "output" / deployed.stack.metadata.name / pod_security_admission.PATH).is_file():
        pytest.skip("no cluster-wide Pod Security default in this stack (K3s, Talos)")
    api = deployed.cluster.api
    privileged = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "psa-default"}, "spec": {
        "containers": [{"name": "probe", "image": "registry.k8s.io/pause:3.10", "securityContext": {"privileged": True}}]}}
    with pytest.raises(ApiError, match='violates PodSecurity "baseline:latest"'):
        api.request("POST", "/api/v1/namespaces/default/pods", privileged, query={"dryRun": "All"})
    api.request("POST", "/api/v1/namespaces/kube-system/pods", privileged, query={"dryRun": "All"})
    plain = {**privileged, "spec": {"containers": [{"name": "probe", "image": "registry.k8s.io/pause:3.10"}]}}
    api.request("POST", "/api/v1/namespaces/default/pods", plain, query={"dryRun": "All"})


def test_gpu_pods_run_only_on_gpu_nodes_that_offer_what_they_ask(deployed: Deployed) -> None:
    wait_for_rollouts(deployed)
    by_name = {n.name: n for n in deployed.cluster.nodes}
    gpu_pools = {p.name for p in deployed.stack.spec.nodePools}
    for pod in pods(deployed.cluster.api):
        wanted = gpu_requests(pod)
        if not wanted:
            continue
        node = by_name[pod["spec"]["nodeName"]]
        assert node.pool in gpu_pools, f"{pod['metadata']['name']} asks for {wanted} but runs on {node.name}"
        allocatable = deployed.cluster.api.get(f"/api/v1/nodes/{node.name}")["status"]["allocatable"]
        missing = [r for r in wanted if r != "resourceClaims" and r not in allocatable]
        assert not missing, f"{pod['metadata']['name']} runs on {node.name}, which has no {missing}"


@pytest.mark.parametrize("deployed", VLLM_EXAMPLES, ids=[p.stem for p in VLLM_EXAMPLES], indirect=True)
def test_vllm_servers_run_on_their_pool(deployed: Deployed) -> None:
    servers = [w for w in deployed.stack.spec.workloads if w.type == "vllm"]
    wait_for_rollouts(deployed)
    for server in servers:
        pool = server.pool or deployed.stack.spec.nodePools[0].name
        running = [p for p in pods(deployed.cluster.api, server.namespace) if p["metadata"]["name"].startswith(server.name)]
        assert running, f"no pod of vLLM {server.name}"
        assert {deployed.cluster.pool_of(p["spec"]["nodeName"]) for p in running} == {pool}


def expected_nodes(deployed: Deployed, name: str) -> set[str] | None:
    """The nodes a DaemonSet of the stack belongs on; None when the test has no rule for it."""
    nodes = deployed.cluster.nodes
    gpu_pools = {p.name for p in deployed.stack.spec.nodePools}
    hami = deployed.stack.spec.sharing.hami
    if "mps-control-daemon" in name:  # the device plugin's MPS daemon: nodes GFD labels as sharing through MPS
        live = {n["metadata"]["name"]: n["metadata"].get("labels", {}) for n in deployed.cluster.api.items("/api/v1/nodes")}
        return {n.name for n in nodes if live[n.name].get("nvidia.com/gpu.sharing-strategy") == "mps"}
    if GPU_AGENT.search(name):
        pools = set(hami.pools) if "hami" in name and hami.pools else gpu_pools
        return {n.name for n in nodes if n.pool in pools}
    if NODE_AGENT.search(name):
        return {n.name for n in nodes}
    return None


def test_daemonsets_land_on_exactly_the_nodes_they_serve(deployed: Deployed) -> None:
    wait_for_rollouts(deployed)
    api = deployed.cluster.api
    checked = 0
    for daemonset in (w for w in deployed.workloads() if w["kind"] == "DaemonSet"):
        expected = expected_nodes(deployed, daemonset["metadata"]["name"])
        if expected is None:
            continue

        def landed(daemonset: dict[str, Any] = daemonset) -> set[str]:
            return {p["spec"]["nodeName"] for p in owned_pods(api, daemonset) if p["spec"].get("nodeName")}

        def mismatch(daemonset: dict[str, Any] = daemonset, expected: set[str] = expected) -> str:
            found = landed(daemonset)
            return (f"DaemonSet {daemonset['metadata']['name']}: extra {sorted(found - expected)}, "
                    f"missing {sorted(expected - found)}; status {api.get(workload_path(daemonset)).get('status')}")

        wait_for(lambda: landed() == expected, WAIT_SECONDS, mismatch)
        checked += 1
    assert checked, "no DaemonSet of the stack was checked"


@pytest.mark.parametrize("deployed", CNI_EXAMPLES, ids=[p.stem for p in CNI_EXAMPLES], indirect=True)
def test_the_pod_network_enforces_network_policies(deployed: Deployed) -> None:
    """The tier moves no packets, so what it can hold is the installed CNI's configuration: Cilium's
    agent starts from what its ``config`` init container's ``cilium-dbg build-config`` reads from the
    ConfigMap cilium-config of its namespace (its default source), whose ``enable-policy`` must not
    be ``never`` (which ignores every NetworkPolicy); and its DaemonSet runs on every node, the
    tainted GPU nodes included (also test_daemonsets_land_on_exactly_the_nodes_they_serve)."""
    wait_for_rollouts(deployed)
    api = deployed.cluster.api
    agent = api.get("/apis/apps/v1/namespaces/kube-system/daemonsets/cilium")
    first = agent["spec"]["template"]["spec"]["initContainers"][0]
    assert first["command"][:2] == ["cilium-dbg", "build-config"]
    config = api.get("/api/v1/namespaces/kube-system/configmaps/cilium-config")["data"]
    assert config["enable-policy"] in ("default", "always")
    assert config["ipam"] == "kubernetes"
    assert agent["status"]["numberReady"] == len(deployed.cluster.nodes)
    policies = [o for o in deployed.objects if o["kind"] == "NetworkPolicy"]
    assert policies, "a stack with a pod network that enforces policies renders some"


def _claim_pod(template: Any, number: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": f"{template.name}-user-{number}", "namespace": template.namespace},
        "spec": {
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": template.name}],
            "containers": [{"name": "cuda", "image": "nvcr.io/nvidia/cuda:13.0.1-base-ubuntu24.04",
                            "resources": {"claims": [{"name": "gpu"}]}}],
            "tolerations": [{"operator": "Exists"}],
        },
    }


def _fits_per_gpu(template: Any, memory_mib: int) -> int:
    """How many claims of the template one GPU holds: its consumable capacity, else exclusive use."""
    if template.capacity is None:
        return 1
    fits = [100 // template.capacity.cores] if template.capacity.cores else []
    if template.capacity.memory:
        value = int(parse_quantity(template.capacity.memory) // (1024 * 1024))
        fits.append(memory_mib // value)
    return min(fits) if fits else 1


def _cel_device(device: dict[str, Any], driver: str) -> dict[str, Any]:
    """A ResourceSlice device as DeviceClass CEL sees it (``device.attributes[<domain>].<name>``)."""
    attributes = {name: next(iter(value.values())) for name, value in device.get("attributes", {}).items()}
    capacity = {name: value["value"] for name, value in device.get("capacity", {}).items()}
    return {"driver": driver, "attributes": {driver: attributes}, "capacity": {driver: capacity}}


@pytest.mark.parametrize("deployed", DRA_EXAMPLES, ids=[p.stem for p in DRA_EXAMPLES], indirect=True)
def test_dra_claims_are_allocated_to_devices_their_class_means(deployed: Deployed) -> None:
    """Each claim template's pods fill the GPUs up to their capacity and are allocated devices the
    DeviceClass selects (its CEL evaluated here on the allocated device); one more stays Pending."""
    import cel

    dra = deployed.stack.spec.dra
    api, applier = deployed.cluster.api, deploy.Applier(deployed.cluster.kubectl, deployed.cluster.kubeconfig)
    gpus = sum(p.count * p.gpu.count for p in deployed.stack.spec.nodePools)
    for template in dra.claimTemplates:
        live = api.get(f"/apis/resource.k8s.io/v1/namespaces/{template.namespace}/resourceclaimtemplates/{template.name}")
        class_name = live["spec"]["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"]
        device_class = api.get(f"/apis/resource.k8s.io/v1/deviceclasses/{class_name}")
        memory = max(gpu_model_memory(p) for p in deployed.stack.spec.nodePools)
        fits = gpus * _fits_per_gpu(template, memory) // template.count
        users = [_claim_pod(template, n) for n in range(fits + 1)]
        applier.apply(users, f"pods using claim template {template.name}")
        names = [u["metadata"]["name"] for u in users]

        def phases() -> dict[str, str]:
            return {p["metadata"]["name"]: p["status"].get("phase") for p in pods(api, template.namespace)
                    if p["metadata"]["name"] in names}

        wait_for(lambda: list(phases().values()).count("Running") == fits, WAIT_SECONDS,
                 lambda: describe(api, [p for p in pods(api, template.namespace) if p["metadata"]["name"] in names]))
        pending = [p for p in pods(api, template.namespace) if p["metadata"]["name"] in names
                   and p["status"].get("phase") == "Pending"]
        assert len(pending) == 1, f"{fits} claims fill the GPUs; one more must wait: {phases()}"
        wait_for(lambda: "cannot allocate all claims" in scheduling_message(api, pending[0]), WAIT_SECONDS,
                 lambda: scheduling_message(api, pending[0]))
        slices = {s["spec"]["pool"]["name"]: s for s in api.items("/apis/resource.k8s.io/v1/resourceslices")}
        for pod in pods(api, template.namespace):
            if pod["metadata"]["name"] not in names or pod["status"].get("phase") != "Running":
                continue
            claim_name = pod["status"]["resourceClaimStatuses"][0]["resourceClaimName"]
            claim = api.get(f"/apis/resource.k8s.io/v1/namespaces/{template.namespace}/resourceclaims/{claim_name}")
            for result in claim["status"]["allocation"]["devices"]["results"]:
                device = next(d for d in slices[result["pool"]]["spec"]["devices"] if d["name"] == result["device"])
                assert result["pool"] == pod["spec"]["nodeName"]
                for selector in device_class["spec"].get("selectors", []):
                    expression = selector["cel"]["expression"]
                    assert cel.evaluate(expression, {"device": _cel_device(device, result["driver"])}), (
                        f"{claim_name} got {result['device']}, which {class_name}'s {expression!r} does not select")


def gpu_model_memory(pool: Any) -> int:
    return gpu_model(pool).memoryMiB


def test_each_smoke_job_runs_on_its_pool(deployed: Deployed) -> None:
    """The smoke Job per GPU pool (render.components.smoke) lands on a node of that pool and
    completes there, beside the stack's servers (on HAMi's pools: in the share left beside theirs)."""
    from gpustack.render.components import smoke

    wait_for_rollouts(deployed)
    api = deployed.cluster.api
    jobs = {o["metadata"]["name"]: o for o in deployed.objects if o["kind"] == "Job" and o["metadata"]["name"].startswith("gpu-smoke-")}
    for pool in deployed.stack.spec.nodePools:
        job = jobs.get(smoke.name(pool))
        if job is None:
            continue

        def placed(job: dict[str, Any] = job) -> set[str | None]:
            return {deployed.cluster.pool_of(p["spec"]["nodeName"]) for p in owned_pods(api, job) if p["spec"].get("nodeName")}

        wait_for(lambda pool=pool: placed() == {pool.name}, WAIT_SECONDS, lambda job=job: describe(api, owned_pods(api, job)))

        def succeeded(job: dict[str, Any] = job) -> bool:
            return api.get(workload_path(job)).get("status", {}).get("succeeded", 0) >= 1

        wait_for(succeeded, WAIT_SECONDS, lambda job=job: describe(api, owned_pods(api, job)))


def test_the_secrets_jobs_account_may_create_only_the_stacks_secrets(deployed: Deployed) -> None:
    """RBAC grants the Secrets Jobs' service accounts ``create`` on every Secret of their namespace
    (it cannot name them); the rendered ValidatingAdmissionPolicy refuses all but the stack's, and
    the Jobs still complete (test_every_workload_runs: the pods that read them start)."""
    from dataclasses import replace

    from gpustack.render.components import secrets

    jobs = [o for o in deployed.objects if o["kind"] == "Job" and o["metadata"]["name"] == secrets.NAME]
    if not jobs:
        pytest.skip("no generated Secrets in this example")
    api = deployed.cluster.api
    for job in jobs:
        namespace = job["metadata"]["namespace"]
        wait_for(lambda job=job: api.get(workload_path(job)).get("status", {}).get("succeeded", 0) >= 1, WAIT_SECONDS,
                 lambda job=job: describe(api, owned_pods(api, job)))
        token = api.request("POST", f"/api/v1/namespaces/{namespace}/serviceaccounts/{secrets.NAME}/token",
                            {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                             "spec": {"expirationSeconds": 600}})["status"]["token"]
        account = replace(api, token=token)
        body = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "not-the-stacks"}, "stringData": {"k": "v"}}
        with pytest.raises(ApiError, match="denied request"):
            account.create(f"/api/v1/namespaces/{namespace}/secrets", body)
