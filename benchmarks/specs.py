"""A large generated spec for the render benchmark: one cluster with many GPU node pools.

The pools cycle through the catalogue's GPUs, half with the GPU Operator's driver and half
with a host driver; HAMi shares the GeForce pools (labelled for its device plugin), and a few workloads run on the others.
The spec is a plain function of the pool count, so every run renders the same stack.

    python benchmarks/specs.py 50   # writes the spec and prints its path
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from corpus import CACHE, dump

DATACENTER = ("L4", "T4", "A10G", "A100-80GB-SXM", "H100-80GB-SXM", "H200-141GB-SXM", "L40S")
GEFORCE = ("RTX-4090", "RTX-4070-TI-SUPER")


def _pool(index: int) -> dict[str, Any]:
    models = DATACENTER + GEFORCE
    model = models[index % len(models)]
    name = f"pool-{index:02d}-{model.lower()}"
    pool: dict[str, Any] = {
        "name": name,
        "count": 1 + index % 8,
        "gpu": {"model": model, "count": 1 if model in GEFORCE else 1 + index % 8},
        "labels": {"gpustack.io/pool": name} | ({"gpustack.io/sharing": "hami"} if model in GEFORCE else {}),
        "driver": {"source": "host", "version": "595.84"} if index % 2 else {"source": "operator"},
    }
    if index % 2:
        # Host-driver pools opt out of the GPU Operator's driver container (validate asks for it).
        pool["labels"]["nvidia.com/gpu.deploy.driver"] = "false"
    if model not in GEFORCE:
        pool["taints"] = [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]
    return pool


def many_pools(pools: int) -> dict[str, Any]:
    """A valid GpuStack with ``pools`` node pools (at least two: HAMi needs one of its own)."""
    node_pools = [_pool(i) for i in range(pools)]
    geforce = [p["name"] for p in node_pools if p["gpu"]["model"] in GEFORCE]
    datacenter = [p["name"] for p in node_pools if p["gpu"]["model"] not in GEFORCE]
    return {
        "apiVersion": "gpustack.io/v1alpha1",
        "kind": "GpuStack",
        "metadata": {"name": f"pools-{pools}", "description": f"Generated: {pools} GPU node pools."},
        "spec": {
            "cluster": {"distribution": "kubeadm", "kubernetesVersion": "1.36"},
            "nodePools": node_pools,
            "gpuOperator": {"enabled": True},
            "nfd": {"sleepInterval": "600s"},
            "sharing": {"hami": {"enabled": True, "pools": geforce}},
            "gitops": {
                "argocd": {"enabled": True, "repoURL": "https://github.com/example/gpu-stack.git", "path": "output"}
            },
            "workloads": [
                {"type": "smokeTest"},
                {"type": "nbody"},
                {
                    "type": "vllm",
                    "name": "chat",
                    "pool": datacenter[0],
                    "model": {
                        "uri": "s3://models/llama-3-8b-instruct",
                        "endpoint": "http://minio.storage.svc.cluster.local:9000",
                        "credentialsSecret": "minio-credentials",
                    },
                },
            ],
        },
    }


def spec_file(pools: int = 50, cache: Path = CACHE) -> Path:
    """Write the spec under the corpus cache (each time: it is tiny, and never stale)."""
    path = cache / "specs" / f"pools-{pools}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dump(many_pools(pools)), encoding="utf-8")
    return path


if __name__ == "__main__":
    print(spec_file(int(sys.argv[1]) if len(sys.argv) > 1 else 50))
