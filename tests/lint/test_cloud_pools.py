"""GPU node pools that cloud CLI commands and Terraform create, with their taints: what the node
agents and GPU pods of the set must tolerate (GS028, GS048)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpustack.lint.engine import lint
from gpustack.lint.input import cloudpools
from gpustack.lint.policy.config import Config

from lint_support import load_paths, write_tree


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("az aks nodepool add -g rg --cluster-name c --name gpu --node-vm-size Standard_NC6s_v3 "
         "--node-taints sku=gpu:NoSchedule", {"what": "AKS node pool gpu", "taints": [["sku", "gpu", "NoSchedule"]],
                                               "autoscales": False}),
        ("az aks nodepool add -n spot --node-vm-size Standard_NC4as_T4_v3 --priority Spot --enable-cluster-autoscaler",
         {"what": "AKS node pool spot", "taints": [["kubernetes.azure.com/scalesetpriority", "spot", "NoSchedule"]],
          "autoscales": True}),
        ("az aks nodepool add -n cpu --node-vm-size Standard_D4s_v5 --node-taints a=b:NoSchedule", None),
        ("az aks nodepool add -n amd --node-vm-size Standard_NV32as_v4", None),  # AMD's GPUs
        ("gcloud container node-pools create l4 --cluster c --accelerator type=nvidia-l4,count=1 "
         "--node-taints=gpu=true:NoSchedule --enable-autoscaling",
         {"what": "GKE node pool l4", "taints": [["gpu", "true", "NoSchedule"]], "autoscales": True}),
        ("gcloud container node-pools create cpu --cluster c --machine-type e2-standard-4", None),
        ("az aks create -g rg --name ai --node-vm-size Standard_NC24ads_A100_v4 --nodepool-taints sku=gpu:NoSchedule",
         {"what": "AKS node pool nodepool1", "taints": [["sku", "gpu", "NoSchedule"]], "autoscales": False}),
        ("`az aks nodepool add -n gpu --node-vm-size Standard_NC6s_v3 --node-taints $TAINTS`",
         {"what": "AKS node pool gpu", "taints": [], "autoscales": False}),
    ],
)
def test_cli_commands_that_create_gpu_pools(line: str, expected: object) -> None:
    assert cloudpools.command_pool(line) == expected


TERRAFORM = '''
resource "azurerm_kubernetes_cluster_node_pool" "gpu" {
  name        = "gpu"
  vm_size     = "Standard_NC24ads_A100_v4"
  node_taints = ["sku=gpu:NoSchedule"]
  auto_scaling_enabled = true
}

resource "google_container_node_pool" "t4" {
  node_config {
    guest_accelerator {
      type  = "nvidia-tesla-t4"
      count = 1
    }
    taint {
      key    = "nvidia.com/gpu"
      value  = "present"
      effect = "NO_SCHEDULE"
    }
  }
}

module "eks" {
  source = "terraform-aws-modules/eks/aws"
  eks_managed_node_groups = {
    gpu = {
      ami_type       = "AL2023_x86_64_NVIDIA"
      instance_types = ["g5.xlarge"]
      desired_size   = 1
      max_size       = 1
      taints = {
        gpu = { key = "nvidia.com/gpu", value = "true", effect = "NO_SCHEDULE" }
      }
    }
    system = { instance_types = ["m5.large"] }
  }
}
'''


def test_terraform_gpu_pools_with_their_taints_and_lines() -> None:
    assert list(cloudpools.terraform_pools(TERRAFORM)) == [
        (2, {"what": "Terraform azurerm_kubernetes_cluster_node_pool gpu", "taints": [["sku", "gpu", "NoSchedule"]],
             "autoscales": True}),
        (9, {"what": "Terraform google_container_node_pool t4", "taints": [["nvidia.com/gpu", "present", "NoSchedule"]],
             "autoscales": False}),
        (23, {"what": "Terraform module eks eks_managed_node_groups gpu", "taints": [["nvidia.com/gpu", "true", "NoSchedule"]],
              "autoscales": False}),
    ]


DEVICE_PLUGIN = """apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: nvdp, namespace: kube-system}
spec:
  chart:
    spec: {chart: nvidia-device-plugin, version: 0.17.1, sourceRef: {kind: HelmRepository, name: nvdp}}
  values:
    tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
"""


def test_a_device_plugin_that_does_not_tolerate_the_pool_the_script_taints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write_tree(tmp_path, {
        "setup.sh": "az aks nodepool add -g rg --cluster-name c -n gpu \\\n  --node-vm-size Standard_NC6s_v3 "
                    "--node-taints sku=gpu:NoSchedule --skip-gpu-driver-install\n",
        "nvdp.yaml": DEVICE_PLUGIN,
    })
    monkeypatch.chdir(root)
    report = lint(load_paths(["."]), Config(tree=root))
    (finding,) = [f for f in report.findings if f.rule == "GS048"]
    assert finding.file == "nvdp.yaml" and "AKS node pool gpu (setup.sh:1)" in finding.message


def test_a_size_given_as_a_variable_reads_its_default() -> None:
    text = (
        'variable "gpu_vm" {\n  default = "standard_nv6ads_a10_v5"\n}\n'
        'resource "azurerm_kubernetes_cluster_node_pool" "gpu" {\n  vm_size     = var.gpu_vm\n'
        '  node_taints = ["sku=gpu:NoSchedule"]\n}\n'
        'resource "azurerm_kubernetes_cluster_node_pool" "cpu" {\n  vm_size = var.unset\n}\n'
    )
    assert [(line, pool["what"]) for line, pool in cloudpools.terraform_pools(text)] == [
        (4, "Terraform azurerm_kubernetes_cluster_node_pool gpu"),
    ]
