#!/bin/sh
# Stack hami-vllm: copies the namespaces, K3s HelmCharts and manifests into
# K3s' auto-deploy folder; K3s applies them and keeps them applied. On a K3s server, from the
# stack's folder: sudo sh cluster/k3s-auto-deploy.sh
set -eu
cd "$(dirname "$0")/.."
folder=/var/lib/rancher/k3s/server/manifests
mkdir -p "$folder"
install -m 600 helm/namespaces.yaml "$folder/hami-vllm-helm-namespaces.yaml"
install -m 600 k3s/dcgm-exporter.yaml "$folder/hami-vllm-k3s-dcgm-exporter.yaml"
install -m 600 k3s/hami.yaml "$folder/hami-vllm-k3s-hami.yaml"
install -m 600 k3s/kube-prometheus-stack.yaml "$folder/hami-vllm-k3s-kube-prometheus-stack.yaml"
install -m 600 k3s/node-feature-discovery.yaml "$folder/hami-vllm-k3s-node-feature-discovery.yaml"
install -m 600 manifests/namespaces.yaml "$folder/hami-vllm-manifests-namespaces.yaml"
install -m 600 manifests/monitoring.yaml "$folder/hami-vllm-manifests-monitoring.yaml"
install -m 600 manifests/secrets.yaml "$folder/hami-vllm-manifests-secrets.yaml"
install -m 600 manifests/workloads.yaml "$folder/hami-vllm-manifests-workloads.yaml"
install -m 600 manifests/smoke.yaml "$folder/hami-vllm-manifests-smoke.yaml"
install -m 600 manifests/minio-users.yaml "$folder/hami-vllm-manifests-minio-users.yaml"
install -m 600 manifests/network-policies.yaml "$folder/hami-vllm-manifests-network-policies.yaml"
