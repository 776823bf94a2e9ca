#!/bin/sh
# Stack k3s-l4: copies the namespaces, K3s HelmCharts and manifests into
# K3s' auto-deploy folder; K3s applies them and keeps them applied. On a K3s server, from the
# stack's folder: sudo sh cluster/k3s-auto-deploy.sh
set -eu
cd "$(dirname "$0")/.."
folder=/var/lib/rancher/k3s/server/manifests
mkdir -p "$folder"
install -m 600 helm/namespaces.yaml "$folder/k3s-l4-helm-namespaces.yaml"
install -m 600 k3s/dcgm-exporter.yaml "$folder/k3s-l4-k3s-dcgm-exporter.yaml"
install -m 600 k3s/kube-prometheus-stack.yaml "$folder/k3s-l4-k3s-kube-prometheus-stack.yaml"
install -m 600 k3s/node-feature-discovery.yaml "$folder/k3s-l4-k3s-node-feature-discovery.yaml"
install -m 600 k3s/nvidia-device-plugin.yaml "$folder/k3s-l4-k3s-nvidia-device-plugin.yaml"
install -m 600 manifests/monitoring.yaml "$folder/k3s-l4-manifests-monitoring.yaml"
install -m 600 manifests/secrets.yaml "$folder/k3s-l4-manifests-secrets.yaml"
install -m 600 manifests/smoke.yaml "$folder/k3s-l4-manifests-smoke.yaml"
install -m 600 manifests/network-policies.yaml "$folder/k3s-l4-manifests-network-policies.yaml"
