"""A seeded synthetic corpus of GPU manifests for the lint benchmark.

The corpus looks like a GitOps repository of GPU teams: Deployments, Jobs, Pods and
DaemonSets with a few StatefulSets, CronJobs, PrometheusRules and ResourceClaims, plus the
Services and ConfigMaps that sit beside them. Most objects are clean; the rest carry the
pitfalls the linter exists for, each in a small share of objects (pci-0300 node selectors,
privileged GPU pods, hostPath /dev mounts, missing runtimeClassName, HAMi Deployments with
RollingUpdate and low --gpu-memory-utilization, GPU requests unequal to limits,
NVIDIA_VISIBLE_DEVICES=all, unpinned device plugin images, vLLM streaming s3:// without
AWS_EC2_METADATA_DISABLED, PromQL joins on(gpu), orphan ResourceClaims, ...).

Files hold one to a few dozen documents separated by ``---``; some read like
``helm template`` output with ``# Source:`` comments. The same seed gives the same bytes:
YAML is written by libyaml's emitter (PyYAML's ``CSafeDumper``, the C library the linter
reads with); a change to the bytes bumps ``GENERATOR_VERSION``.

    python benchmarks/corpus.py 2000 200   # prints the folder (generated when missing)
"""

from __future__ import annotations

import os
import random
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

GENERATOR_VERSION = 3  # bump whenever the output changes: cached corpora are keyed by it
CACHE = Path(__file__).resolve().parent / ".corpus"

Object = dict[str, Any]
Builder = Callable[[random.Random, int], list[Object]]

NAMESPACES = ("ml-serving", "ml-training", "research", "batch", "inference", "platform", "data")
MODELS = ("llama-3-8b-instruct", "mistral-7b-instruct", "qwen2-7b", "gemma-2-9b", "phi-3-mini")
GPU_PRODUCTS = ("NVIDIA-L4", "NVIDIA-A100-SXM4-80GB", "NVIDIA-H100-80GB-HBM3", "NVIDIA-L40S")


# --- YAML text ------------------------------------------------------------------------------


class _Dumper(yaml.CSafeDumper):
    """libyaml's emitter with multi-line strings as literal blocks (``|``, ``|-``)."""


def _represent_str(dumper: yaml.CSafeDumper, value: str) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|" if "\n" in value else None)


_Dumper.add_representer(str, _represent_str)


def dump(document: Object) -> str:
    """Block-style YAML of plain data, in key order. PyYAML writes YAML 1.1, Kubernetes'
    reading, so it quotes whatever 1.1 would read as something else (``"on"``, ``"1.10"``)."""
    return yaml.dump(
        document,
        Dumper=_Dumper,
        sort_keys=False,
        default_flow_style=False,
        width=1 << 16,
        allow_unicode=True,
    )


# --- building blocks ------------------------------------------------------------------------


def _meta(name: str, namespace: str, app: str, extra_labels: dict[str, str] | None = None) -> Object:
    labels = {"app.kubernetes.io/name": app, "app.kubernetes.io/part-of": namespace}
    return {"name": name, "namespace": namespace, "labels": labels | (extra_labels or {})}


def _resources(rng: random.Random, gpu: dict[str, int] | None = None, mismatch: bool = False) -> Object:
    cpu, memory = rng.choice((("2", "8Gi"), ("4", "16Gi"), ("8", "32Gi"), ("16", "64Gi")))
    requests: Object = {"cpu": cpu, "memory": memory}
    limits: Object = {"memory": memory}
    if gpu:
        limits |= gpu
        if mismatch:  # the GPU resource requested, with a higher limit
            name, count = next(iter(gpu.items()))
            requests[name] = count
            limits[name] = count + 1
    return {"requests": requests, "limits": limits}


def _gpu_placement(rng: random.Random, pci_0300: bool, instance_type: bool = False) -> Object:
    """nodeSelector, tolerations and (usually) the nvidia RuntimeClass of a GPU pod."""
    if pci_0300:
        selector = {"feature.node.kubernetes.io/pci-0300_10de.present": "true"}
    elif instance_type:
        selector = {"node.kubernetes.io/instance-type": rng.choice(("g6.2xlarge", "p4d.24xlarge"))}
    else:
        selector = {"nvidia.com/gpu.product": rng.choice(GPU_PRODUCTS)}
    return {
        "nodeSelector": selector,
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
    }


def _security(rng: random.Random, privileged: bool) -> Object:
    if privileged:
        return {"privileged": True}
    if rng.random() < 0.5:
        return {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
    return {"runAsNonRoot": True}


def _pod_spec(
    rng: random.Random,
    containers: list[Object],
    gpu: bool,
    runtime_class: bool = True,
    pci_0300: bool = False,
    instance_type: bool = False,
    volumes: list[Object] | None = None,
    restart: str | None = None,
) -> Object:
    spec: Object = {}
    if gpu and runtime_class:
        spec["runtimeClassName"] = "nvidia"
    if gpu:
        spec |= _gpu_placement(rng, pci_0300, instance_type)
    if restart:
        spec["restartPolicy"] = restart
    spec["containers"] = containers
    if volumes:
        spec["volumes"] = volumes
    return spec


def _template(app: str, spec: Object) -> Object:
    return {"metadata": {"labels": {"app.kubernetes.io/name": app}}, "spec": spec}


def _chance(rng: random.Random, p: float) -> bool:
    return rng.random() < p


# --- GPU workloads --------------------------------------------------------------------------


def vllm_deployment(rng: random.Random, i: int) -> list[Object]:
    """vLLM serving from MinIO: a runai_streamer setup, mostly right."""
    model = rng.choice(MODELS)
    name, namespace = f"vllm-{model}-{i}", rng.choice(("ml-serving", "inference"))
    gpus = rng.choice((1, 1, 1, 2, 4))
    env: list[Object] = [
        {"name": "AWS_ENDPOINT_URL", "value": "http://minio.storage.svc.cluster.local:9000"},
        {"name": "HF_HUB_OFFLINE", "value": "1"},
    ]
    if not _chance(rng, 0.25):
        env.append({"name": "AWS_EC2_METADATA_DISABLED", "value": "true"})
    if _chance(rng, 0.1):
        env.append({"name": "AWS_ACCESS_KEY_ID", "value": "minioadmin"})
        env.append({"name": "AWS_SECRET_ACCESS_KEY", "value": "minioadmin"})
    else:
        for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
            env.append({"name": key, "valueFrom": {"secretKeyRef": {"name": "minio-credentials", "key": key}}})
    if _chance(rng, 0.05):
        env.append({"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"})
    container = {
        "name": "vllm",
        "image": "vllm/vllm-openai:v0.11.0",
        "args": [
            f"s3://models/{model}",
            "--load-format=runai_streamer",
            f"--served-model-name={model}",
            f"--tensor-parallel-size={gpus}",
            "--max-model-len=8192",
        ],
        "env": env,
        "ports": [{"name": "http", "containerPort": 8000}],
        "readinessProbe": {"httpGet": {"path": "/health", "port": "http"}, "periodSeconds": 10},
        "resources": _resources(rng, {"nvidia.com/gpu": gpus}, mismatch=_chance(rng, 0.06)),
        "securityContext": _security(rng, privileged=_chance(rng, 0.04)),
        "volumeMounts": [{"name": "shm", "mountPath": "/dev/shm"}],
    }
    spec = _pod_spec(
        rng,
        [container],
        gpu=True,
        runtime_class=not _chance(rng, 0.3),
        pci_0300=_chance(rng, 0.08),
        volumes=[{"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": "8Gi"}}],
    )
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _meta(name, namespace, "vllm"),
        "spec": {
            "replicas": rng.choice((1, 1, 2, 3)),
            "selector": {"matchLabels": {"app.kubernetes.io/name": "vllm"}},
            "template": _template("vllm", spec),
        },
    }
    return [deployment, _service(name, namespace, "vllm", 8000)]


def hami_deployment(rng: random.Random, i: int) -> list[Object]:
    """A vLLM replica on a HAMi share of one GPU (nvidia.com/gpumem, nvidia.com/gpucores)."""
    model = rng.choice(MODELS)
    name, namespace = f"vllm-shared-{model}-{i}", "ml-serving"
    memory = rng.choice((8000, 10000, 12000))
    utilization = rng.choice(("0.28", "0.3", "0.4")) if _chance(rng, 0.4) else rng.choice(("0.85", "0.9"))
    container = {
        "name": "vllm",
        "image": "vllm/vllm-openai:v0.11.0",
        "command": ["sh", "-c"],
        "args": [f"vllm serve /models/{model} --gpu-memory-utilization {utilization} --max-model-len 4096"],
        "resources": _resources(
            rng, {"nvidia.com/gpu": 1, "nvidia.com/gpumem": memory, "nvidia.com/gpucores": rng.choice((25, 30, 50))}
        ),
        "securityContext": _security(rng, privileged=False),
        "volumeMounts": [{"name": "models", "mountPath": "/models", "readOnly": True}],
    }
    spec = _pod_spec(
        rng,
        [container],
        gpu=True,
        runtime_class=not _chance(rng, 0.3),
        volumes=[{"name": "models", "persistentVolumeClaim": {"claimName": "model-cache"}}],
    )
    deployment_spec: Object = {
        "replicas": rng.choice((1, 2, 3)),
        "selector": {"matchLabels": {"app.kubernetes.io/name": name}},
    }
    strategy = rng.random()
    if strategy < 0.35:
        deployment_spec["strategy"] = {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}}
    elif strategy < 0.65:
        deployment_spec["strategy"] = {"type": "Recreate"}
    deployment_spec["template"] = _template(name, spec)
    return [{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": _meta(name, namespace, name), "spec": deployment_spec}]


def training_job(rng: random.Random, i: int) -> list[Object]:
    """A PyTorch training Job: whole GPUs, the classic pitfalls in a few of them."""
    gpus = rng.choice((1, 2, 4, 8))
    name, namespace = f"train-{rng.choice(MODELS)}-{i}", rng.choice(("ml-training", "research"))
    env: list[Object] = [{"name": "NCCL_DEBUG", "value": "WARN"}, {"name": "OMP_NUM_THREADS", "value": "8"}]
    if _chance(rng, 0.08):
        env.append({"name": "NVIDIA_VISIBLE_DEVICES", "value": rng.choice(("all", "0,1"))})
    volumes: list[Object] = [{"name": "data", "persistentVolumeClaim": {"claimName": "datasets"}}]
    mounts: list[Object] = [{"name": "data", "mountPath": "/data"}]
    if _chance(rng, 0.06):
        volumes.append({"name": "dev", "hostPath": {"path": rng.choice(("/dev", "/dev/nvidia0", "/usr/lib/x86_64-linux-gnu"))}})
        mounts.append({"name": "dev", "mountPath": "/dev/host"})
    container = {
        "name": "trainer",
        "image": f"nvcr.io/nvidia/pytorch:{rng.choice(('24.08', '24.10', '25.01'))}-py3",
        "command": ["torchrun", f"--nproc_per_node={gpus}", "train.py", "--epochs", str(rng.randint(1, 20))],
        "env": env,
        "resources": _resources(rng, {"nvidia.com/gpu": gpus}, mismatch=_chance(rng, 0.06)),
        "securityContext": _security(rng, privileged=_chance(rng, 0.06)),
        "volumeMounts": mounts,
    }
    spec = _pod_spec(
        rng,
        [container],
        gpu=True,
        runtime_class=not _chance(rng, 0.3),
        pci_0300=_chance(rng, 0.06),
        instance_type=_chance(rng, 0.05),
        volumes=volumes,
        restart="Never",
    )
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": _meta(name, namespace, "trainer"),
        "spec": {"backoffLimit": 2, "ttlSecondsAfterFinished": 86400, "template": _template("trainer", spec)},
    }
    return [job]


def eval_cronjob(rng: random.Random, i: int) -> list[Object]:
    """A nightly GPU evaluation run."""
    name, namespace = f"nightly-eval-{i}", "batch"
    container = {
        "name": "eval",
        "image": "ghcr.io/example/llm-eval:1.4.2",
        "args": ["--model", f"s3://models/{rng.choice(MODELS)}", "--tasks", "mmlu,gsm8k"],
        "resources": _resources(rng, {"nvidia.com/gpu": 1}),
    }
    spec = _pod_spec(rng, [container], gpu=True, runtime_class=not _chance(rng, 0.3), restart="OnFailure")
    cronjob = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": _meta(name, namespace, "eval"),
        "spec": {
            "schedule": f"{rng.randint(0, 59)} {rng.randint(0, 5)} * * *",
            "concurrencyPolicy": "Forbid",
            "jobTemplate": {"spec": {"template": _template("eval", spec)}},
        },
    }
    return [cronjob]


def gpu_pod(rng: random.Random, i: int) -> list[Object]:
    """A one-off pod: smoke test, nbody benchmark or a profiling session."""
    kind = rng.choice(("smoke", "nbody", "profile"))
    namespace = rng.choice(("default", "research"))
    volumes: list[Object] = []
    if kind == "smoke":
        container: Object = {"name": "cuda", "image": "nvcr.io/nvidia/cuda:13.0.1-base-ubuntu24.04", "command": ["nvidia-smi"]}
        if _chance(rng, 0.15):
            volumes.append({"name": "smi", "hostPath": {"path": "/usr/bin/nvidia-smi", "type": "File"}})
            container["volumeMounts"] = [{"name": "smi", "mountPath": "/usr/bin/nvidia-smi"}]
    elif kind == "nbody":
        container = {
            "name": "nbody",
            "image": "nvcr.io/nvidia/k8s/cuda-sample:nbody",
            "args": ["nbody", "-gpu", "-benchmark", "-numbodies=3000000"],
        }
    else:
        tool = rng.choice((["ncu", "--set", "full", "python", "bench.py"], ["nsys", "profile", "python", "bench.py"]))
        container = {"name": "profiler", "image": "nvcr.io/nvidia/pytorch:25.01-py3", "command": tool}
    if _chance(rng, 0.1):
        container["env"] = [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}]
    container["resources"] = {"limits": {"nvidia.com/gpu": 1}}
    spec = _pod_spec(rng, [container], gpu=True, runtime_class=not _chance(rng, 0.35), volumes=volumes, restart="Never")
    return [{"apiVersion": "v1", "kind": "Pod", "metadata": _meta(f"{kind}-{i}", namespace, kind), "spec": spec}]


def dra_pod(rng: random.Random, i: int) -> list[Object]:
    """A Pod using a DRA ResourceClaim (sometimes with HAMi capacity), and the claim; a few orphaned."""
    namespace = "research"
    claim_name = f"gpu-claim-{i}"
    request: Object = {"name": "gpu", "exactly": {"deviceClassName": "hami-core-gpu.project-hami.io"}}
    if _chance(rng, 0.5):
        request["exactly"]["capacity"] = {"requests": {"cores": "30", "memory": "4Gi"}}
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": _meta(claim_name, namespace, "notebook"),
        "spec": {"devices": {"requests": [request]}},
    }
    referenced = claim_name if not _chance(rng, 0.2) else f"gpu-claim-{i}-old"
    container = {
        "name": "notebook",
        "image": "quay.io/jupyter/pytorch-notebook:cuda12-2024-10-21",
        "resources": {"claims": [{"name": "gpu"}]},
    }
    spec = _pod_spec(rng, [container], gpu=True, runtime_class=not _chance(rng, 0.3))
    spec["resourceClaims"] = [{"name": "gpu", "resourceClaimName": referenced}]
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": _meta(f"notebook-{i}", namespace, "notebook"), "spec": spec}
    return [claim, pod]


def gpu_statefulset(rng: random.Random, i: int) -> list[Object]:
    """Triton with a model repository volume per replica."""
    name, namespace = f"triton-{i}", "inference"
    container = {
        "name": "triton",
        "image": "nvcr.io/nvidia/tritonserver:25.01-py3",
        "args": ["tritonserver", "--model-repository=/models"],
        "ports": [{"name": "http", "containerPort": 8000}, {"name": "grpc", "containerPort": 8001}],
        "resources": _resources(rng, {"nvidia.com/gpu": 1}, mismatch=_chance(rng, 0.08)),
        "volumeMounts": [{"name": "models", "mountPath": "/models"}],
    }
    spec = _pod_spec(rng, [container], gpu=True, runtime_class=not _chance(rng, 0.3), pci_0300=_chance(rng, 0.08))
    statefulset = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": _meta(name, namespace, "triton"),
        "spec": {
            "serviceName": name,
            "replicas": rng.choice((1, 2)),
            "selector": {"matchLabels": {"app.kubernetes.io/name": "triton"}},
            "template": _template("triton", spec),
            "volumeClaimTemplates": [
                {
                    "metadata": {"name": "models"},
                    "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "200Gi"}}},
                }
            ],
        },
    }
    return [statefulset, _service(name, namespace, "triton", 8000)]


# --- GPU system components ------------------------------------------------------------------


def _daemonset(name: str, namespace: str, spec: Object) -> Object:
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": _meta(name, namespace, name),
        "spec": {
            "selector": {"matchLabels": {"app.kubernetes.io/name": name}},
            "updateStrategy": {"type": "RollingUpdate"},
            "template": {"metadata": {"labels": {"app.kubernetes.io/name": name}}, "spec": spec},
        },
    }


def _image_tag(rng: random.Random, repository: str, pinned: str) -> str:
    """Mostly pinned; sometimes ``latest`` or no tag at all."""
    roll = rng.random()
    if roll < 0.08:
        return f"{repository}:latest"
    if roll < 0.14:
        return repository
    return f"{repository}:{pinned}"


def device_plugin_daemonset(rng: random.Random, i: int) -> list[Object]:
    container = {
        "name": "nvidia-device-plugin-ctr",
        "image": _image_tag(rng, "nvcr.io/nvidia/k8s-device-plugin", "v0.17.0"),
        "env": [{"name": "FAIL_ON_INIT_ERROR", "value": "false"}],
        "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
        "volumeMounts": [{"name": "device-plugin", "mountPath": "/var/lib/kubelet/device-plugins"}],
    }
    spec: Object = {}
    if not _chance(rng, 0.3):
        spec["runtimeClassName"] = "nvidia"
    spec |= {
        "priorityClassName": "system-node-critical",
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        "containers": [container],
        "volumes": [{"name": "device-plugin", "hostPath": {"path": "/var/lib/kubelet/device-plugins"}}],
    }
    return [_daemonset(f"nvidia-device-plugin-{i}", "kube-system", spec)]


def dcgm_exporter_daemonset(rng: random.Random, i: int) -> list[Object]:
    container = {
        "name": "exporter",
        "image": _image_tag(rng, "nvcr.io/nvidia/k8s/dcgm-exporter", "4.2.3-4.1.3-ubuntu22.04"),
        "env": [
            {"name": "DCGM_EXPORTER_KUBERNETES", "value": "true"},
            {"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"},
        ],
        "ports": [{"name": "metrics", "containerPort": 9400}],
        "securityContext": {"capabilities": {"add": ["SYS_ADMIN"]}},
        "volumeMounts": [{"name": "pod-resources", "mountPath": "/var/lib/kubelet/pod-resources", "readOnly": True}],
    }
    spec: Object = {"runtimeClassName": "nvidia"} if not _chance(rng, 0.3) else {}
    spec |= {
        "nodeSelector": {"nvidia.com/gpu.present": "true"},
        "containers": [container],
        "volumes": [{"name": "pod-resources", "hostPath": {"path": "/var/lib/kubelet/pod-resources"}}],
    }
    return [_daemonset(f"dcgm-exporter-{i}", "monitoring", spec)]


def hami_device_plugin_daemonset(rng: random.Random, i: int) -> list[Object]:
    """HAMi's device plugin: privileged by design, selecting nodes by the hand-set gpu=on label."""
    container = {
        "name": "device-plugin",
        "image": _image_tag(rng, "projecthami/hami", "v2.6.1"),
        "command": ["nvidia-device-plugin", "--device-split-count=10", "--device-memory-scaling=1"],
        "securityContext": {"privileged": True},
        "volumeMounts": [{"name": "device-plugin", "mountPath": "/var/lib/kubelet/device-plugins"}],
    }
    spec = {
        "nodeSelector": {"gpu": "on"},
        "containers": [container],
        "volumes": [{"name": "device-plugin", "hostPath": {"path": "/var/lib/kubelet/device-plugins"}}],
    }
    return [_daemonset(f"hami-device-plugin-{i}", "kube-system", spec)]


def node_daemonset(rng: random.Random, i: int) -> list[Object]:
    """A non-GPU node agent (logs), which may mount host paths freely."""
    container = {
        "name": "fluent-bit",
        "image": f"cr.fluentbit.io/fluent/fluent-bit:{rng.choice(('3.1.9', '3.2.2'))}",
        "resources": _resources(rng),
        "volumeMounts": [{"name": "varlog", "mountPath": "/var/log", "readOnly": True}],
    }
    spec = {"containers": [container], "volumes": [{"name": "varlog", "hostPath": {"path": "/var/log"}}]}
    return [_daemonset(f"fluent-bit-{i}", "platform", spec)]


# --- monitoring -----------------------------------------------------------------------------

_XID_CODES = ("31, 43, 79, 92", "79", "48|79", "31|43|79|92")


def prometheus_rule(rng: random.Random, i: int) -> list[Object]:
    """DCGM alerts: some without the release label, joins on(gpu) only, GPU_UTIL as saturation."""
    join = "on(gpu)" if _chance(rng, 0.25) else "on(Hostname, gpu)"
    rules: list[Object] = [
        {
            "alert": "GPUHighTemperature",
            "expr": "DCGM_FI_DEV_GPU_TEMP > 85",
            "for": "2m",
            "labels": {"severity": "warning"},
        },
        {
            "alert": "GPUMemoryNearFull",
            "expr": (
                "DCGM_FI_DEV_FB_USED\n"
                f"  / {join}\n"
                "(DCGM_FI_DEV_FB_USED + DCGM_FI_DEV_FB_FREE) > 0.9\n"
            ),
            "for": "5m",
            "labels": {"severity": "warning"},
        },
    ]
    if _chance(rng, 0.3):
        rules.append({"alert": "GPUSaturated", "expr": "avg by (Hostname) (DCGM_FI_DEV_GPU_UTIL) > 90", "for": "30m"})
    codes = rng.choice(_XID_CODES)
    xid = "DCGM_FI_DEV_XID_ERRORS > 0" if "," in codes else f'DCGM_FI_DEV_XID_ERRORS{{err_code=~"{codes}"}} > 0'
    rules.append({"alert": "GPUXidError", "expr": xid, "labels": {"severity": "critical"}})
    labels = {"release": "kube-prometheus-stack"} if not _chance(rng, 0.3) else {}
    return [
        {
            "apiVersion": "monitoring.coreos.com/v1",
            "kind": "PrometheusRule",
            "metadata": _meta(f"gpu-alerts-{i}", "monitoring", "gpu-alerts", labels),
            "spec": {"groups": [{"name": "gpu", "rules": rules}]},
        }
    ]


# --- everything around the GPUs -------------------------------------------------------------


def _service(name: str, namespace: str, app: str, port: int) -> Object:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": _meta(name, namespace, app),
        "spec": {
            "selector": {"app.kubernetes.io/name": app},
            "ports": [{"name": "http", "port": 80, "targetPort": port}],
        },
    }


def web_deployment(rng: random.Random, i: int) -> list[Object]:
    """A CPU-only service (gateways, UIs): no GPU rule applies, even when privileged."""
    app = rng.choice(("gateway", "chat-ui", "embeddings-api", "feature-store"))
    name, namespace = f"{app}-{i}", rng.choice(NAMESPACES)
    container = {
        "name": app,
        "image": f"ghcr.io/example/{app}:{rng.randint(1, 3)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}",
        "envFrom": [{"configMapRef": {"name": f"{name}-config"}}],
        "ports": [{"name": "http", "containerPort": 8080}],
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": "http"}},
        "resources": _resources(rng),
        "securityContext": _security(rng, privileged=_chance(rng, 0.05)),
    }
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _meta(name, namespace, app),
        "spec": {
            "replicas": rng.randint(1, 5),
            "selector": {"matchLabels": {"app.kubernetes.io/name": app}},
            "template": _template(app, {"containers": [container]}),
        },
    }
    config = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": _meta(f"{name}-config", namespace, app),
        "data": {"LOG_LEVEL": rng.choice(("info", "debug")), "UPSTREAM": f"http://vllm.{namespace}.svc:80"},
    }
    return [deployment, _service(name, namespace, app, 8080), config]


# Relative frequencies, roughly those of a GitOps repository of a few GPU clusters: many
# workloads, one set of GPU system DaemonSets per cluster.
BUILDERS: tuple[tuple[Builder, float], ...] = (
    (vllm_deployment, 14),
    (hami_deployment, 6),
    (web_deployment, 4),
    (training_job, 16),
    (eval_cronjob, 3),
    (gpu_pod, 8),
    (dra_pod, 2),
    (gpu_statefulset, 3),
    (device_plugin_daemonset, 1),
    (dcgm_exporter_daemonset, 1),
    (hami_device_plugin_daemonset, 0.3),
    (node_daemonset, 2),
    (prometheus_rule, 3),
)

_SOURCE_TEMPLATES = {
    "Deployment": "deployment.yaml",
    "Service": "service.yaml",
    "ConfigMap": "configmap.yaml",
    "DaemonSet": "daemonset.yaml",
    "StatefulSet": "statefulset.yaml",
    "Job": "job.yaml",
    "CronJob": "cronjob.yaml",
    "Pod": "tests/pod.yaml",
    "PrometheusRule": "prometheusrule.yaml",
    "ResourceClaim": "resourceclaim.yaml",
}


# --- the corpus -----------------------------------------------------------------------------


def documents(rng: random.Random, count: int) -> list[Object]:
    """``count`` objects drawn from ``BUILDERS`` (a builder's companions may be cut at the end)."""
    builders, weights = zip(*BUILDERS)
    objects: list[Object] = []
    while len(objects) < count:
        builder = rng.choices(builders, weights)[0]
        objects.extend(builder(rng, len(objects)))
    return objects[:count]


def _file_text(objects: list[Object], chart: str | None) -> str:
    """Documents joined by ``---``; under ``helm template`` each starts with ``# Source:``."""
    if chart is None:
        return "---\n".join(dump(obj) for obj in objects)
    return "".join(f"---\n# Source: {chart}/templates/{_SOURCE_TEMPLATES[obj['kind']]}\n{dump(obj)}" for obj in objects)


def generate(seed: int, docs: int, files: int) -> dict[str, str]:
    """The corpus as ``{relative path: text}``: ``docs`` documents spread unevenly over ``files`` files."""
    if not 1 <= files <= docs:
        raise ValueError(f"need 1 <= files <= docs, got {files} files for {docs} documents")
    rng = random.Random(seed)
    objects = documents(rng, docs)
    cuts = [0, *sorted(rng.sample(range(1, docs), files - 1)), docs]
    corpus: dict[str, str] = {}
    for index, (start, end) in enumerate(zip(cuts, cuts[1:])):
        chunk = objects[start:end]
        first = chunk[0]["metadata"]
        folder = first.get("namespace", "default")
        chart = first["labels"]["app.kubernetes.io/name"] if rng.random() < 0.3 else None
        corpus[f"{folder}/{index:04d}-{first['name']}.yaml"] = _file_text(chunk, chart)
    return corpus


def write(corpus: dict[str, str], root: Path) -> None:
    for relative, text in corpus.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def corpus_dir(docs: int, files: int, seed: int = 1, cache: Path = CACHE) -> Path:
    """The cached corpus folder, generated first when missing.

    Written to a temporary sibling and renamed, so an interrupted run never leaves a partial
    corpus that later runs would take for complete.
    """
    root = cache / f"v{GENERATOR_VERSION}-seed{seed}-{docs}docs-{files}files"
    if root.is_dir():
        return root
    partial = cache / f".{root.name}.{os.getpid()}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    write(generate(seed, docs, files), partial)
    try:
        partial.rename(root)
    except OSError:  # another run finished the same corpus first
        shutil.rmtree(partial)
    return root


if __name__ == "__main__":
    print(corpus_dir(int(sys.argv[1]), int(sys.argv[2])))
