"""Workloads: smoke test, nbody, vLLM from S3 with HAMi shares; hardened everywhere."""

from __future__ import annotations

import pytest
from render_helpers import spec_document

from gpustack.cli import main
from gpustack.render.components import workloads
from gpustack.spec.models import GpuStack
from gpustack.yamlio import dump

MODEL = {"uri": "s3://models/m", "endpoint": "http://minio:9000", "credentialsSecret": "s3"}
HAMI = {"devicePlugin": {"enabled": False}, "sharing": {"hami": {"enabled": True}}}
ALL = [{"type": "smokeTest"}, {"type": "nbody"}, {"type": "vllm", "name": "llm", "model": MODEL}]


def by_kind(rendered, kind):
    return {obj["metadata"]["name"]: obj for _, obj in rendered.objects() if obj["kind"] == kind}


def pod_spec(obj):
    return obj["spec"] if obj["kind"] == "Pod" else obj["spec"]["template"]["spec"]


def env(container):
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container["env"]}


def stack(**spec) -> GpuStack:
    return GpuStack.model_validate(spec_document(**spec))


def test_the_example_runs_two_servers_on_one_shared_l4(examples):
    rendered, _ = examples["hami-vllm"]
    deployments = by_kind(rendered, "Deployment")
    assert set(deployments) == {"minio", "qwen-a", "qwen-b"}
    assert set(by_kind(rendered, "Service")) == {"minio", "qwen-a", "qwen-b"}
    for name in ("qwen-a", "qwen-b"):
        deployment = deployments[name]
        assert deployment["spec"]["strategy"] == {"type": "Recreate"}
        spec = pod_spec(deployment)
        assert spec["runtimeClassName"] == "nvidia"
        [container] = spec["containers"]
        assert container["resources"] == {
            "requests": {"cpu": "2", "memory": "8Gi"},
            "limits": {"nvidia.com/gpu": 1, "nvidia.com/gpumem": 8000, "nvidia.com/gpucores": 40, "memory": "8Gi"},
        }
        assert container["image"] == "vllm/vllm-openai:v0.28.0"
        assert container["args"][:4] == [
            "s3://models/Qwen2.5-1.5B-Instruct",
            "--load-format=runai_streamer",
            f"--served-model-name={name}",
            "--gpu-memory-utilization=0.8",
        ]
        variables = env(container)
        assert variables["AWS_ENDPOINT_URL"] == "http://minio.vllm.svc.cluster.local:9000"
        assert variables["AWS_EC2_METADATA_DISABLED"] == "true"
        # vLLM's Run:ai streamer page: path-style addressing and the endpoint for S3-compatible stores.
        assert variables["RUNAI_STREAMER_S3_USE_VIRTUAL_ADDRESSING"] == "0"
        assert variables["RUNAI_STREAMER_S3_ENDPOINT"] == "http://minio.vllm.svc.cluster.local:9000"
        for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
            # The read-only MinIO user (security.minioWorkloadUsers), not the root credentials.
            assert variables[key] == {"secretKeyRef": {"name": "minio-reader-s3", "key": key}}


@pytest.mark.parametrize(
    ("share", "model_mib", "expected"),
    [
        ({"memoryMiB": 8000}, 6400, 0.8),
        ({"memoryMiB": 8000}, 6001, 0.76),  # rounded up: the model must fit
        ({"memoryMiB": 8000}, 7600, 0.95),
        ({"memoryMiB": 8000}, None, 0.9),
        (None, 11517, 0.5),  # a whole L4: 23034 MiB
        (None, None, 0.9),
    ],
)
def test_gpu_memory_utilization_is_relative_to_what_the_container_sees(share, model_mib, expected):
    vllm = {"type": "vllm", "name": "v", "model": MODEL, "share": share, "modelMemoryMiB": model_mib}
    spec = stack(workloads=[vllm], **(HAMI if share else {}))
    assert workloads.gpu_memory_utilization(spec, spec.spec.workloads[0]) == expected


def test_a_model_larger_than_the_share_is_refused(tmp_path, capsys):
    vllm = {"type": "vllm", "name": "v", "model": MODEL, "share": {"memoryMiB": 8000}, "modelMemoryMiB": 7700}
    path = tmp_path / "spec.yaml"
    path.write_text(dump(spec_document(workloads=[vllm], **HAMI)), encoding="utf-8")
    with pytest.raises(SystemExit) as exit_info:
        main(["validate", str(path)])
    assert exit_info.value.code == 2
    assert "spec.workloads[0].modelMemoryMiB" in capsys.readouterr().err


def test_every_container_is_hardened(render_spec):
    rendered, _ = render_spec(workloads=ALL)
    objects = [obj for obj in rendered.manifests["workloads"] if obj["kind"] in ("Pod", "Job", "Deployment")]
    assert len(objects) == 3
    for obj in objects:
        spec = pod_spec(obj)
        assert spec["runtimeClassName"] == "nvidia"
        assert spec["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
        # The CUDA images run as an unprivileged user on a read-only root; vLLM's needs root (its caches).
        non_root = obj["metadata"]["labels"]["app.kubernetes.io/name"] != "vllm"
        assert spec["securityContext"].get("runAsNonRoot", False) is non_root
        for container in spec["containers"]:
            assert container["securityContext"].get("readOnlyRootFilesystem", False) is non_root
            context = container["securityContext"]
            assert context["allowPrivilegeEscalation"] is False
            assert context["capabilities"] == {"drop": ["ALL"]}
            assert context.get("privileged") is not True
            assert container["resources"]["limits"]["nvidia.com/gpu"] >= 1


def test_smoke_test_and_nbody_follow_the_seed(render_spec):
    rendered, _ = render_spec(workloads=ALL)
    [smoke] = by_kind(rendered, "Pod").values()
    assert smoke["spec"]["containers"][0]["command"] == ["nvidia-smi"]
    assert smoke["spec"]["restartPolicy"] == "Never"
    job = by_kind(rendered, "Job")["nbody-benchmark"]
    assert job["spec"]["template"]["spec"]["containers"][0]["args"] == [
        "nbody", "-gpu", "-benchmark", "-numbodies=3000000"
    ]


def test_default_runtime_drops_the_runtime_class(render_spec):
    rendered, _ = render_spec(cluster={"nvidiaDefaultRuntime": True}, workloads=ALL)
    for kind in ("Pod", "Job", "Deployment"):
        for obj in by_kind(rendered, kind).values():
            assert "runtimeClassName" not in pod_spec(obj)


def test_whole_gpus_roll_when_a_spare_gpu_exists(render_spec):
    pools = [{"name": "big", "count": 2, "gpu": {"model": "L4", "count": 2}}]
    rendered, _ = render_spec(nodePools=pools, workloads=[{"type": "vllm", "name": "v", "model": MODEL, "replicas": 3}])
    assert "strategy" not in by_kind(rendered, "Deployment")["v"]["spec"]
    rendered, _ = render_spec(nodePools=pools, workloads=[{"type": "vllm", "name": "v", "model": MODEL, "replicas": 4}])
    assert by_kind(rendered, "Deployment")["v"]["spec"]["strategy"] == {"type": "Recreate"}


def test_pool_placement_tolerations_and_tensor_parallelism(render_spec):
    pools = [
        {"name": "small", "gpu": {"model": "L4"}},
        {"name": "big", "gpu": {"model": "H100", "count": 8}, "labels": {"pool": "big"},
         "taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]},
    ]
    vllm = {"type": "vllm", "name": "v", "model": MODEL, "pool": "big", "gpus": 4, "maxModelLen": 8192}
    rendered, _ = render_spec(nodePools=pools, workloads=[vllm])
    deployment = by_kind(rendered, "Deployment")["v"]
    spec = pod_spec(deployment)
    assert spec["nodeSelector"] == {"pool": "big"}
    assert spec["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    [container] = spec["containers"]
    assert "--tensor-parallel-size=4" in container["args"] and "--max-model-len=8192" in container["args"]
    assert container["volumeMounts"] == [{"name": "dshm", "mountPath": "/dev/shm"}]
    assert by_kind(rendered, "Service")["v"]["spec"]["selector"] == deployment["spec"]["selector"]["matchLabels"]


def test_vllm_has_shm_probes_and_resources(render_spec):
    rendered, _ = render_spec(workloads=[{"type": "vllm", "name": "v", "model": MODEL, "cpu": "4", "memory": "24Gi"}])
    spec = pod_spec(by_kind(rendered, "Deployment")["v"])
    [container] = spec["containers"]
    assert spec["volumes"] == [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "2Gi"}}]
    assert container["volumeMounts"] == [{"name": "dshm", "mountPath": "/dev/shm"}]
    assert container["resources"]["requests"] == {"cpu": "4", "memory": "24Gi"}
    assert container["resources"]["limits"]["memory"] == "24Gi"
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"] == {"path": "/health", "port": "http"}
    # Ten minutes to stream the weights before liveness takes over.
    assert container["startupProbe"]["failureThreshold"] * container["startupProbe"]["periodSeconds"] == 600


def test_minio_and_the_model_loader_when_the_spec_asks(examples):
    rendered, tree = examples["hami-vllm"]
    minio = by_kind(rendered, "Deployment")["minio"]
    assert minio["spec"]["strategy"] == {"type": "Recreate"}  # ReadWriteOnce volume
    [container] = pod_spec(minio)["containers"]
    assert container["image"].startswith("quay.io/minio/minio:RELEASE.")
    assert env(container) == {
        "MINIO_ROOT_USER": {"secretKeyRef": {"name": "minio-credentials", "key": "AWS_ACCESS_KEY_ID"}},
        "MINIO_ROOT_PASSWORD": {"secretKeyRef": {"name": "minio-credentials", "key": "AWS_SECRET_ACCESS_KEY"}},
    }
    assert by_kind(rendered, "PersistentVolumeClaim")["minio"]["spec"]["resources"]["requests"] == {"storage": "40Gi"}
    service = by_kind(rendered, "Service")["minio"]
    assert service["metadata"]["namespace"] == "vllm" and service["spec"]["ports"][0]["port"] == 9000
    job = by_kind(rendered, "Job")["model-loader"]
    spec = pod_spec(job)
    [download], [upload] = spec["initContainers"], spec["containers"]
    assert "repo_id='Qwen/Qwen2.5-1.5B-Instruct'" in download["command"][-1]
    assert download["image"] == "vllm/vllm-openai:v0.28.0"
    assert "mc mb --ignore-existing store/models" in upload["command"][-1]
    assert "/model store/models/Qwen2.5-1.5B-Instruct" in upload["command"][-1]
    assert env(upload)["AWS_ENDPOINT_URL"] == "http://minio.vllm.svc.cluster.local:9000"
    assert spec["securityContext"]["runAsNonRoot"] is True
    assert "Prerequisite" not in tree["README.md"]
    # Generated in the cluster (tests/render/test_secrets.py), not made by hand: MinIO's root user
    # and the loader's least-privileged user alike.
    assert "create secret generic minio-credentials" not in tree["README.md"]
    assert "create secret generic minio-writer-s3" not in tree["README.md"]
    assert "`minio-credentials`" in tree["README.md"]


def test_without_minio_and_loader_the_readme_lists_them_as_prerequisites(render_spec):
    _, tree = render_spec(workloads=[{"type": "vllm", "name": "v", "model": MODEL}])
    readme = tree["README.md"]
    assert "**Prerequisite** for vLLM `default/v`: an S3-compatible store at http://minio:9000" in readme
    assert "**Prerequisite** for vLLM `default/v`: the model's safetensors under s3://models/m" in readme


def test_the_default_minio_image_says_why_it_predates_the_cve_fix(examples, render_spec):
    """MinIO published no image of the release that fixes CVE-2025-62506: the README says so and
    what to do, for the default image only."""
    _, files = examples["hami-vllm"]
    assert "CVE-2025-62506" in files["README.md"] and "RELEASE.2025-10-15T17-29-55Z" in files["README.md"]
    own = {"type": "minio", "namespace": "ai", "credentialsSecret": "store",
           "image": "registry.example.com/minio:RELEASE.2025-10-15T17-29-55Z"}
    _, files = render_spec(workloads=[own])
    assert "CVE-2025-62506" not in files["README.md"]


def test_the_smoke_test_pod_on_a_hami_pool_asks_for_a_small_share(render_spec):
    """Like the smoke Jobs: HAMi gives a pod that names no nvidia.com/gpumem the whole card."""
    hami = {"devicePlugin": {"enabled": False}, "sharing": {"hami": {"enabled": True}}}
    rendered, _ = render_spec(workloads=[{"type": "smokeTest"}], **hami)
    [pod] = [o for o in rendered.manifests["workloads"] if o["kind"] == "Pod"]
    assert pod["spec"]["containers"][0]["resources"]["limits"] == {"nvidia.com/gpu": 1, "nvidia.com/gpumem": 256}
    rendered, _ = render_spec(workloads=[{"type": "smokeTest"}])
    [pod] = [o for o in rendered.manifests["workloads"] if o["kind"] == "Pod"]
    assert pod["spec"]["containers"][0]["resources"]["limits"] == {"nvidia.com/gpu": 1}
