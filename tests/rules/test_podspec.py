"""Pod specs are found by structure in any kind; GPU consumers and system components."""

from __future__ import annotations

import pytest
from podspec_support import extract_all

from gpustack.lint.input.load import load_text
from gpustack.lint.model import PodSpec

GPU = "resources: {limits: {nvidia.com/gpu: 1}}"


def pods_of(text: str) -> tuple[PodSpec, ...]:
    loaded = load_text("t.yaml", text)
    assert not loaded.errors
    return extract_all(loaded.resources)


@pytest.mark.parametrize(
    ("text", "paths"),
    [
        ("kind: Pod\nspec: {containers: [{name: a}]}", [("spec",)]),
        (
            "kind: CronJob\nspec: {jobTemplate: {spec: {template: {spec: {containers: [{name: a}]}}}}}",
            [("spec", "jobTemplate", "spec", "template", "spec")],
        ),
        (
            "kind: RayCluster\nspec:\n  headGroupSpec: {template: {spec: {containers: [{name: h}]}}}\n"
            "  workerGroupSpecs: [{template: {spec: {containers: [{name: w}]}}}]",
            [
                ("spec", "headGroupSpec", "template", "spec"),
                ("spec", "workerGroupSpecs", 0, "template", "spec"),
            ],
        ),
        (
            "kind: PyTorchJob\nspec: {pytorchReplicaSpecs: {Master: {template: {spec: {containers: [{name: m}]}}},"
            " Worker: {template: {spec: {containers: [{name: w}]}}}}}",
            [
                ("spec", "pytorchReplicaSpecs", "Master", "template", "spec"),
                ("spec", "pytorchReplicaSpecs", "Worker", "template", "spec"),
            ],
        ),
        (
            "kind: JobSet\nspec: {replicatedJobs: [{template: {spec: {template: {spec: {containers: [{name: a}]}}}}}]}",
            [("spec", "replicatedJobs", 0, "template", "spec", "template", "spec")],
        ),
        (
            "kind: Job\napiVersion: batch.volcano.sh/v1alpha1\nspec: {tasks: [{template: {spec: {containers: [{name: a}]}}}]}",
            [("spec", "tasks", 0, "template", "spec")],
        ),
        (
            "kind: LeaderWorkerSet\nspec: {leaderWorkerTemplate: {leaderTemplate: {spec: {containers: [{name: l}]}},"
            " workerTemplate: {spec: {containers: [{name: w}]}}}}",
            [
                ("spec", "leaderWorkerTemplate", "leaderTemplate", "spec"),
                ("spec", "leaderWorkerTemplate", "workerTemplate", "spec"),
            ],
        ),
        ("kind: ConfigMap\ndata: {containers: x}", []),
        ("kind: Weird\nspec: {containers: [plain, strings]}", []),
    ],
)
def test_pod_specs_by_structure(text: str, paths: list[tuple[object, ...]]) -> None:
    assert [pod.path for pod in pods_of(text)] == paths


def test_template_metadata() -> None:
    text = "kind: Deployment\nmetadata: {name: d}\nspec: {template: {metadata: {labels: {app: x}}, spec: {containers: [{name: a}]}}}"
    (pod,) = pods_of(text)
    assert pod.template_metadata == {"labels": {"app": "x"}}
    (bare,) = pods_of("kind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: a}]}")
    assert bare.template_metadata == {"name": "p"}


@pytest.mark.parametrize(
    ("container", "consumer"),
    [
        (GPU, True),
        ("resources: {limits: {nvidia.com/gpu: 0}}", False),
        ("resources: {requests: {nvidia.com/gpu.shared: 1}}", True),
        ("resources: {limits: {nvidia.com/mig-1g.10gb: 1}}", True),
        ("resources: {limits: {nvidia.com/gpumem: 8000}}", True),
        ("resources: {limits: {nvidia.com/gpucores: 40}}", True),
        ("resources: {limits: {nvidia.com/gpu: '${GPUS}'}}", True),
        ("resources: {limits: {nvidia.com/hostdev: 1}}", False),
        ("env: [{name: NVIDIA_VISIBLE_DEVICES, value: all}]", True),
        ("env: [{name: NVIDIA_VISIBLE_DEVICES, value: GPU-0b2f}]", True),
        ("env: [{name: NVIDIA_VISIBLE_DEVICES, value: void}]", False),
        ("env: [{name: NVIDIA_VISIBLE_DEVICES, value: none}]", False),
        ("env: [{name: NVIDIA_VISIBLE_DEVICES, value: ''}]", False),
    ],
)
def test_gpu_consumer(container: str, consumer: bool) -> None:
    (pod,) = pods_of(f"kind: Pod\nspec:\n  containers:\n    - {{name: a, {container}}}")
    assert pod.gpu_consumer is consumer


CLAIMS = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: gpu, namespace: ns}
spec: {spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu.nvidia.com}}]}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: nic, namespace: ns}
spec: {devices: {requests: [{name: r, exactly: {deviceClassName: example.com-nic}}]}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: example.com-nic}
spec: {selectors: [{cel: {expression: "device.driver == 'nic.example.com'"}}]}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: my-l4}
spec: {selectors: [{cel: {expression: "device.driver == 'gpu.nvidia.com'"}}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: l4, namespace: ns}
spec: {devices: {requests: [{name: r, firstAvailable: [{name: a, deviceClassName: my-l4}]}]}}
"""


@pytest.mark.parametrize(
    ("claim", "consumer"),
    [
        ("resourceClaimTemplateName: gpu", True),  # a GPU DeviceClass
        ("resourceClaimName: nic", False),  # resolves to a DeviceClass of another driver
        ("resourceClaimName: l4", True),  # a class of the set that selects the GPU driver
        ("resourceClaimName: elsewhere", True),  # cannot be resolved
    ],
)
def test_claims_resolve_through_the_set(claim: str, consumer: bool) -> None:
    pod = f"---\nkind: Pod\nmetadata: {{name: p, namespace: ns}}\nspec: {{containers: [{{name: a}}], resourceClaims: [{{name: c, {claim}}}]}}"
    pods = pods_of(CLAIMS + pod)
    assert [p.gpu_consumer for p in pods] == [consumer]


@pytest.mark.parametrize(
    ("image", "system"),
    [
        ("nvcr.io/nvidia/k8s-device-plugin:v0.20.0", True),
        ("docker.io/nvidia/k8s-device-plugin:v0.9.0", True),
        ("nvcr.io/nvidia/k8s/dcgm-exporter:4.5.3-4.8.2-distroless", True),
        ("nvcr.io/nvidia/cloud-native/k8s-driver-manager:v0.8.0", True),
        ("FILLED BY THE OPERATOR", True),
        ("projecthami/hami:v2.10.0", True),
        ("registry.k8s.io/nfd/node-feature-discovery:v0.18.3", True),
        ("registry.example.com:5000/nvidia/k8s-device-plugin:v0.20.0", True),  # a mirror
        ("harbor.local/proxy/projecthami/hami:v2.10.0", True),
        ("harbor.local/proxy/projecthami/hami-webhook:v2.10.0", True),  # projecthami/hami-*
        ("ghcr.io/mirror/k8s-staging-nfd/node-feature-discovery:v0.18.3", True),  # registry dropped
        ("example.com/mynvidia/k8s-device-plugin:v1", False),  # a suffix, not a path
        ("example.com/k8s-device-plugin:v1", False),
        ("vllm/vllm-openai:latest", False),
        ("nvcr.io/nvidia/cuda:12.9.1-base-ubuntu24.04", False),
    ],
)
def test_system_components_by_image(image: str, system: bool) -> None:
    (pod,) = pods_of(f"kind: DaemonSet\nmetadata: {{name: nvidia-device-plugin}}\nspec: {{template: {{spec: {{containers: [{{name: a, image: '{image}'}}]}}}}}}")
    assert pod.system_component is system


def test_hostile_depth_is_bounded() -> None:
    deep = "kind: X\nspec: " + "{a: " * 60 + "{containers: [{name: a}]}" + "}" * 60
    assert pods_of(deep) == ()
