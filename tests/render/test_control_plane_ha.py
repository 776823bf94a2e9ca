"""kubeadm's control plane: high availability, etcd snapshots and metrics, Pod Security defaults, reserves.

The HA spec (tests/render/specs/kubeadm-ha.yaml) renders kubeadm's stacked-etcd topology and
lints clean; a single control plane renders none of it. The snapshot CronJob is on kubeadm only,
and its retention script is run on a real folder.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from render_helpers import release, render_file
from ruamel.yaml import YAML

from gpustack.cli import main
from gpustack.render import write
from gpustack.render.components import etcd_snapshots
from gpustack.render.stackfiles import cluster_config, pod_security_admission
from gpustack.spec.models.base import NEWEST_MINOR, OLDEST_MINOR

SAFE = YAML(typ="safe")
HA_SPEC = Path(__file__).parent / "specs" / "kubeadm-ha.yaml"
KUBEADM = {"distribution": "kubeadm", "kubernetesVersion": "1.36"}


def documents(text: str) -> dict[str, dict]:
    return {doc["kind"]: doc for doc in SAFE.load_all(text) if doc}


def cron_jobs(rendered) -> list[dict]:
    return [obj for _, obj in rendered.objects() if obj["kind"] == "CronJob"]


@pytest.fixture(scope="module")
def ha():
    return render_file(HA_SPEC)


def test_ha_uploads_the_certificates_and_joins_the_control_plane(ha):
    _, files = ha
    config = documents(files["cluster/kubeadm-config.yaml"])
    # kubeadm refuses --certificate-key next to --config: the key is the InitConfiguration's.
    assert config["InitConfiguration"]["certificateKey"] == "${CERTIFICATE_KEY}"
    assert config["ClusterConfiguration"]["controlPlaneEndpoint"] == "k8s-api.example.internal:6443"
    join = SAFE.load(files[cluster_config.CONTROL_PLANE_JOIN_PATH])
    assert join["kind"] == "JoinConfiguration"
    assert join["controlPlane"] == {"certificateKey": "${CERTIFICATE_KEY}"}
    assert join["discovery"]["bootstrapToken"]["apiServerEndpoint"] == "k8s-api.example.internal:6443"
    assert "nodeRegistration" not in join  # kubeadm's control-plane taint, as on the first node
    readme = files["README.md"]
    assert 'export CERTIFICATE_KEY="$(kubeadm certs certificate-key)"' in readme
    assert "envsubst '$KUBERNETES_VERSION $CERTIFICATE_KEY' < cluster/kubeadm-config.yaml" in readme
    assert "sudo kubeadm init --config kubeadm-config.yaml --upload-certs" in readme
    assert "sudo kubeadm init phase upload-certs --upload-certs --certificate-key" in readme
    assert "sudo kubeadm join --config join-control-plane.yaml" in readme
    # The control-plane nodes join before the pools, and each gets the Pod Security file first.
    steps = readme.index("Control-plane nodes (3, stacked etcd)")
    assert readme.index("### ", readme.index("Control plane\n")) <= steps < readme.index("Join the pools")
    join_step = readme[steps:readme.index("Join the pools")]
    assert join_step.index(pod_security_admission.install_command(ha[0].ctx.stack)[0]) < join_step.index(
        "sudo kubeadm join --config join-control-plane.yaml")
    assert "One control-plane node" not in readme


def test_ha_spec_renders_lint_clean(capsys, tmp_path, ha):
    rendered, tree = ha
    write.write_tree(tree, tmp_path / "out")
    with pytest.raises(SystemExit) as exit_info:
        main(["lint", str(tmp_path / "out"), "--spec", str(HA_SPEC), "--fail-on", "info"])
    assert not exit_info.value.code, capsys.readouterr().out


def test_single_control_plane_renders_no_ha_and_says_so(render_spec):
    rendered, files = render_spec(cluster=KUBEADM, nodePools=[{"name": "gpu", "count": 24, "gpu": {"model": "L4"}}])
    assert "InitConfiguration" not in documents(files["cluster/kubeadm-config.yaml"])
    assert cluster_config.CONTROL_PLANE_JOIN_PATH not in files
    readme = files["README.md"]
    assert "--upload-certs" not in readme and "join-control-plane" not in readme
    assert "**One control-plane node** (`cluster.controlPlane.count: 1`)" in readme
    assert "for 24 GPU nodes" in readme
    # Said whether or not anything watches the control plane.
    _, files = render_spec(cluster=KUBEADM, monitoring={"enabled": False})
    assert "**One control-plane node**" in files["README.md"]


def test_snapshot_cron_job_on_a_control_plane_node(ha):
    rendered, files = ha
    (job,) = cron_jobs(rendered)
    assert job["metadata"] == {"name": "etcd-snapshot", "namespace": "kube-system", "labels": job["metadata"]["labels"]}
    assert job["spec"]["schedule"] == "30 */4 * * *" and job["spec"]["concurrencyPolicy"] == "Forbid"
    pod = job["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    assert pod["hostNetwork"] is True
    assert pod["nodeSelector"] == {"node-role.kubernetes.io/control-plane": ""}
    assert {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"} in pod["tolerations"]
    (snapshot,) = pod["initContainers"]
    assert snapshot["image"] == "registry.k8s.io/etcd:3.6.8-0"  # kubeadm v1.36.3's DefaultEtcdVersion
    assert snapshot["command"][-3:] == ["snapshot", "save", "/var/lib/etcd-snapshots/incoming.db"]
    assert "--endpoints=https://127.0.0.1:2379" in snapshot["command"]
    volumes = {v["name"]: v["hostPath"] for v in pod["volumes"]}
    # Three files of the etcd PKI, never the folder (with the CA's key), each read-only.
    assert {v["path"] for v in volumes.values()} == {
        "/var/lib/etcd-snapshots", "/etc/kubernetes/pki/etcd/ca.crt",
        "/etc/kubernetes/pki/etcd/healthcheck-client.crt", "/etc/kubernetes/pki/etcd/healthcheck-client.key"}
    assert all(m["readOnly"] for m in snapshot["volumeMounts"] if m["mountPath"].startswith("/etc/kubernetes"))
    (keep,) = pod["containers"]
    assert {"name": "KEEP", "value": "42"} in keep["env"]
    assert "manifests/etcd-snapshots.yaml" in files
    assert "etcdutl snapshot restore" in files["README.md"]


def test_snapshot_image_follows_the_minor(render_spec):
    rendered, _ = render_spec(cluster={**KUBEADM, "kubernetesVersion": "1.35"})
    (job,) = cron_jobs(rendered)
    (snapshot,) = job["spec"]["jobTemplate"]["spec"]["template"]["spec"]["initContainers"]
    assert snapshot["image"] == "registry.k8s.io/etcd:3.6.6-0"  # kubeadm v1.35.4's
    assert set(etcd_snapshots.ETCD_TAGS) == set(range(OLDEST_MINOR, NEWEST_MINOR + 1))


@pytest.mark.parametrize("cluster", [
    {"distribution": "k3s"},
    {"distribution": "talos", "talosVersion": "v1.13.0"},
    {**KUBEADM, "controlPlane": {"etcdSnapshots": {"enabled": False}}},
])
def test_no_snapshot_cron_job_elsewhere(render_spec, cluster):
    rendered, files = render_spec(cluster=cluster)
    assert not cron_jobs(rendered) and "manifests/etcd-snapshots.yaml" not in files


def test_retention_keeps_the_newest(tmp_path):
    for stamp in ("20260101T000000Z", "20260102T000000Z", "20260103T000000Z"):
        (tmp_path / f"etcd-{stamp}.db").write_bytes(b"old")
    (tmp_path / "incoming.db").write_bytes(b"snapshot")
    env = {**os.environ, "FOLDER": str(tmp_path), "KEEP": "2"}
    subprocess.run([sys.executable, "-c", etcd_snapshots.KEEP_SCRIPT], env=env, check=True, capture_output=True)
    kept = sorted(p.name for p in tmp_path.iterdir())
    assert len(kept) == 2 and kept[0] == "etcd-20260103T000000Z.db" and not (tmp_path / "incoming.db").exists()
    assert (tmp_path / kept[1]).read_bytes() == b"snapshot"
    (tmp_path / "incoming.db").write_bytes(b"")
    failed = subprocess.run([sys.executable, "-c", etcd_snapshots.KEEP_SCRIPT], env=env, capture_output=True, text=True)
    assert failed.returncode and "empty snapshot" in failed.stderr
    assert len(list(tmp_path.glob("etcd-*.db"))) == 2  # an empty snapshot deletes nothing


def test_etcd_metrics_scraped_on_kubeadm_only(render_spec, ha):
    rendered, files = ha
    cluster = documents(files["cluster/kubeadm-config.yaml"])["ClusterConfiguration"]
    assert cluster["etcd"]["local"]["extraArgs"] == [{"name": "listen-metrics-urls", "value": "http://0.0.0.0:2381"}]
    values = release(rendered, "kube-prometheus-stack")
    assert "kubeEtcd" not in values  # the chart's default job at 2381 over HTTP, its etcd rules on
    assert values.get("defaultRules", {}).get("rules", {}).get("etcd", True) is not False
    for other in ({"distribution": "k3s"}, {"distribution": "talos", "talosVersion": "v1.13.0"}):
        rendered, _ = render_spec(cluster=other)
        assert release(rendered, "kube-prometheus-stack")["kubeEtcd"] == {"enabled": False}


def test_pod_security_defaults_for_the_api_server(render_spec, ha):
    _, files = ha
    admission = SAFE.load(files[pod_security_admission.PATH])
    assert admission["kind"] == "AdmissionConfiguration"
    (plugin,) = admission["plugins"]
    assert plugin["name"] == "PodSecurity"
    assert plugin["configuration"]["defaults"]["enforce"] == "baseline"
    assert plugin["configuration"]["defaults"]["warn"] == plugin["configuration"]["defaults"]["audit"] == "restricted"
    assert plugin["configuration"]["exemptions"]["namespaces"] == ["kube-system"]
    api_server = documents(files["cluster/kubeadm-config.yaml"])["ClusterConfiguration"]["apiServer"]
    assert {"name": "admission-control-config-file", "value": "/etc/kubernetes/pod-security.yaml"} in api_server["extraArgs"]
    assert api_server["extraVolumes"] == [{"name": "pod-security-admission", "hostPath": "/etc/kubernetes/pod-security.yaml",
                                           "mountPath": "/etc/kubernetes/pod-security.yaml", "readOnly": True,
                                           "pathType": "File"}]
    init = files["README.md"]
    assert init.index("sudo install -D -m 0644 cluster/pod-security.yaml") < init.index("sudo kubeadm init")
    # Without the stack's privileged labels a baseline default would refuse the GPU node agents.
    _, files = render_spec(cluster=KUBEADM, security={"podSecurityLabels": False})
    assert pod_security_admission.PATH not in files and "admission-control-config-file" not in files["cluster/kubeadm-config.yaml"]
    _, files = render_spec()
    assert pod_security_admission.PATH not in files


def test_kubelet_reserves_resources_on_every_node(ha):
    _, files = ha
    kubelet = documents(files["cluster/kubeadm-config.yaml"])["KubeletConfiguration"]
    assert kubelet["systemReserved"] == kubelet["kubeReserved"] == {"cpu": "250m", "memory": "1Gi", "ephemeral-storage": "1Gi"}
    # Every signal of the kubelet's defaults is listed: one left out would be no threshold at all.
    assert set(kubelet["evictionHard"]) == {"memory.available", "nodefs.available", "nodefs.inodesFree",
                                            "imagefs.available", "imagefs.inodesFree"}
    assert kubelet["evictionHard"]["memory.available"] == "500Mi"
