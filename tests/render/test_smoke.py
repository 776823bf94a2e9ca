"""The smoke Job per GPU pool (present on every pool with a device plugin resource, a PostSync
hook only with Argo CD, none under DRA or when turned off) and vLLM's init gate on S3 models."""

from __future__ import annotations

from typing import Any

from gpustack.render.components import smoke

POOLS = [
    {"name": "a", "gpu": {"model": "L4"}, "labels": {"pool": "a"}},
    {"name": "b", "gpu": {"model": "L4"}, "labels": {"pool": "b"},
     "taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]},
]
ARGOCD = {"argocd": {"enabled": True, "repoURL": "https://github.com/example/stacks.git"}}


def _jobs(rendered, kind: str = "Job") -> dict[str, dict[str, Any]]:
    return {obj["metadata"]["name"]: obj for obj in rendered.manifests.get("smoke", []) if obj["kind"] == kind}


def test_one_job_per_pool_on_its_nodes_failing_loudly(render_spec):
    jobs = _jobs(render_spec(nodePools=POOLS)[0])
    assert set(jobs) == {"gpu-smoke-a", "gpu-smoke-b"}
    job = jobs["gpu-smoke-b"]
    assert job["spec"]["backoffLimit"] == smoke.RETRIES and job["spec"]["activeDeadlineSeconds"] > 0
    pod = job["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"pool": "b"}
    assert pod["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    assert pod["runtimeClassName"] == "nvidia" and pod["restartPolicy"] == "Never"
    [container] = pod["containers"]
    assert container["command"] == ["nvidia-smi"] and container["resources"]["limits"] == {"nvidia.com/gpu": 1}
    assert "annotations" not in job["metadata"]


def test_argocd_runs_it_as_a_postsync_hook(render_spec):
    job = _jobs(render_spec(gitops=ARGOCD)[0])["gpu-smoke-gpu"]
    assert job["metadata"]["annotations"]["argocd.argoproj.io/hook"] == "PostSync"


def test_hami_pools_go_through_hamis_scheduler(render_spec):
    rendered, _ = render_spec(devicePlugin={"enabled": False}, sharing={"hami": {"enabled": True}})
    assert _jobs(rendered)["gpu-smoke-gpu"]["spec"]["template"]["spec"]["schedulerName"] == "hami-scheduler"


def test_mixed_mig_pools_ask_for_a_slice(examples):
    rendered, _ = examples["kubeadm-mig-fleet"]
    limits = _jobs(rendered)["gpu-smoke-h100"]["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
    assert limits == {"nvidia.com/mig-1g.10gb": 1}


def test_dra_pools_claim_a_small_share_of_the_drivers_class(examples):
    """HAMi's DRA driver defaults a claim that names no capacity to the whole card."""
    rendered, tree = examples["dra-hami"]
    job = _jobs(rendered)["gpu-smoke-g6"]
    pod = job["spec"]["template"]["spec"]
    assert pod["resourceClaims"] == [{"name": "gpu", "resourceClaimTemplateName": "gpu-smoke-g6"}]
    assert "runtimeClassName" not in pod  # the device comes through CDI, not the nvidia runtime's env
    [container] = pod["containers"]
    assert container["resources"]["claims"] == [{"name": "gpu"}] and "limits" not in container["resources"]
    [request] = _jobs(rendered, "ResourceClaimTemplate")["gpu-smoke-g6"]["spec"]["spec"]["devices"]["requests"]
    assert request["exactly"]["deviceClassName"] == "hami-core-gpu.project-hami.io"
    assert request["exactly"]["capacity"] == {"requests": {"cores": "1", "memory": "256Mi"}}
    assert "ResourceClaimTemplate `gpu-smoke-g6`" in tree["README.md"]


DRA = {"devicePlugin": {"enabled": False}, "dra": {"enabled": True}}


def test_a_dra_smoke_claim_turns_no_gate_on(render_spec):
    """Where DRAConsumableCapacity is off (alpha in 1.35, or the spec's false) the claim names no
    capacity, and no gate is rendered for it."""
    for spec in ({"cluster": {"kubernetesVersion": "1.35"}},
                 {"cluster": {"featureGates": {"DRAConsumableCapacity": False}}}):
        rendered, _ = render_spec(**DRA, **spec)
        [request] = _jobs(rendered, "ResourceClaimTemplate")["gpu-smoke-gpu"]["spec"]["spec"]["devices"]["requests"]
        assert "capacity" not in request["exactly"]
        assert "'DRAConsumableCapacity': True" not in str(rendered.feature_gates)


def test_nvidias_dra_driver_gets_a_whole_gpu_of_its_class(render_spec):
    rendered, _ = render_spec(devicePlugin={"enabled": False}, dra={"enabled": True, "driver": "nvidia"})
    [request] = _jobs(rendered, "ResourceClaimTemplate")["gpu-smoke-gpu"]["spec"]["spec"]["devices"]["requests"]
    assert request["exactly"]["deviceClassName"] == "gpu.nvidia.com" and "capacity" not in request["exactly"]


def test_every_smoke_container_has_requests(examples):
    for name, (rendered, _) in examples.items():
        for job in _jobs(rendered).values():
            for container in job["spec"]["template"]["spec"]["containers"]:
                assert set(container["resources"]["requests"]) == {"cpu", "memory"}, name


def test_none_when_turned_off(render_spec):
    assert not render_spec(smokeJobs=False)[0].manifests.get("smoke")
    assert not render_spec(smokeJobs=False, **DRA)[0].manifests.get("smoke")


S3_MODEL = {"uri": "s3://models/qwen", "endpoint": "http://minio.ai.svc.cluster.local:9000", "credentialsSecret": "store"}


def _vllm_pod(rendered) -> dict[str, Any]:
    deployment = next(o for o in rendered.manifests["workloads"] if o["kind"] == "Deployment")
    return deployment["spec"]["template"]["spec"]


def test_vllm_waits_for_an_s3_model_the_loader_uploads_last(render_spec):
    loader = {"type": "modelLoader", "huggingFaceModel": "Qwen/Qwen2.5-1.5B-Instruct",
              "destination": {**S3_MODEL}}
    rendered, _ = render_spec(workloads=[{"type": "vllm", "name": "v", "model": S3_MODEL}, loader])
    [gate] = _vllm_pod(rendered)["initContainers"]
    assert "mc stat store/models/qwen/config.json" in gate["command"][-1]
    assert {"name": "AWS_ENDPOINT_URL", "value": S3_MODEL["endpoint"]} in gate["env"]
    job = next(o for o in rendered.manifests["workloads"] if o["kind"] == "Job")
    upload = job["spec"]["template"]["spec"]["containers"][0]["command"][-1]
    assert "--exclude config.json" in upload and upload.endswith("mc cp /model/config.json store/models/qwen/config.json")


def test_hugging_face_models_are_not_gated(render_spec):
    rendered, _ = render_spec(workloads=[{"type": "vllm", "name": "v", "model": {"huggingFace": "Qwen/Qwen2.5-1.5B-Instruct"}}])
    assert "initContainers" not in _vllm_pod(rendered)


def test_pools_without_labels_are_told_apart_by_their_gpu(examples):
    rendered, _ = examples["kubeadm-gpu-operator"]
    selectors = {name: job["spec"]["template"]["spec"]["nodeSelector"] for name, job in _jobs(rendered).items()}
    assert selectors == {
        "gpu-smoke-a100": {smoke.PRODUCT_LABEL: "NVIDIA-A100-SXM4-80GB"},
        "gpu-smoke-l40s": {smoke.PRODUCT_LABEL: "NVIDIA-L40S"},
    }


def _gpu_memory_asked(obj: dict[str, Any], card_mib: int) -> int:
    """The memory HAMi's scheduler reserves for an object's pods: ``nvidia.com/gpumem``, or the
    whole card where a container names none (HAMi's default, smoke.HAMI_MEMORY_MIB's comment)."""
    template = obj["spec"]["template"]["spec"]
    replicas = obj["spec"].get("replicas", 1)
    limits = [c["resources"]["limits"] for c in template["containers"] if "nvidia.com/gpu" in c["resources"].get("limits", {})]
    return replicas * sum(limit.get("nvidia.com/gpumem", card_mib) for limit in limits)


def test_on_hamis_pools_the_smoke_job_fits_beside_the_servers(examples):
    """hami-vllm: two 8000 MiB vLLM shares on one L4 (23034 MiB); a smoke Job asking for the whole
    card would wait for both servers to go away."""
    rendered, _ = examples["hami-vllm"]
    card = 23034
    job = _jobs(rendered)["gpu-smoke-g6"]
    [container] = job["spec"]["template"]["spec"]["containers"]
    assert container["resources"]["limits"] == {"nvidia.com/gpu": 1, "nvidia.com/gpumem": smoke.HAMI_MEMORY_MIB}
    servers = [o for _, o in rendered.objects() if o["kind"] == "Deployment" and o["metadata"]["name"].startswith("qwen-")]
    held = sum(_gpu_memory_asked(o, card) for o in servers)
    assert held == 16000
    assert held + _gpu_memory_asked(job, card) <= card
    assert held + card > card  # HAMi's default for the same Job


def test_pools_without_hami_ask_for_no_gpu_memory(render_spec):
    rendered, _ = render_spec(
        nodePools=POOLS,
        devicePlugin={"enabled": False},
        sharing={"hami": {"enabled": True, "pools": ["a"]}},
    )
    jobs = _jobs(rendered)
    assert jobs["gpu-smoke-a"]["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpumem"] == 256
    assert "nvidia.com/gpumem" not in jobs["gpu-smoke-b"]["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
