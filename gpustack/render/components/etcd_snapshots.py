"""etcd snapshots of a kubeadm cluster: a CronJob on a control-plane node, kept on its disk.

Everything the cluster knows is in etcd, and kubeadm takes no backup of it; upstream's way is
``etcdctl snapshot save`` against a member
(https://kubernetes.io/docs/tasks/administer-cluster/configure-upgrade-etcd/#backing-up-an-etcd-cluster).
The CronJob's pod:

- runs on a control-plane node (``node-role.kubernetes.io/control-plane``, whose NoSchedule
  taint it tolerates), where kubeadm's stacked etcd member and its certificates are;
- uses the host network so that it reaches that member at https://127.0.0.1:2379, the address
  kubeadm's etcd listens on besides the node's own (``listen-client-urls`` in
  ``cmd/kubeadm/app/phases/etcd/local.go``) and which its server certificate names: a backup
  must not depend on the pod network, which may be what broke;
- reads three files of /etc/kubernetes/pki/etcd, each mounted read-only on its own (the CA
  certificate and kubeadm's healthcheck client certificate and key, never the CA's key), as root
  since the key is root's with mode 0600 (no capability needed to read one's own file);
- writes ``incoming.db`` into a host folder with the etcd image of the cluster's Kubernetes minor
  (``ETCD_TAGS``), then a second container renames it after the time and deletes all but the
  newest ``keep``.

With one control-plane node the README says what is at stake (``_single_control_plane``).

It lives in kube-system: a namespace the stack does not create, where kubeadm's control plane
runs with host access (the cluster-wide Pod Security default, ``pod_security_admission``, exempts
it). A failed Job fires kube-prometheus-stack's ``KubeJobFailed``. A snapshot on the node it
protects is lost with that node: the README says how to copy them off and restore one.
"""

from __future__ import annotations

from typing import Any

from gpustack.render.component import Contribution, RenderContext, add_object
from gpustack.render.components.pods import MANAGED_BY
from gpustack.render.components.secrets import IMAGE as PYTHON_IMAGE
from gpustack.spec.models import GpuStack

NAME = "etcd-snapshot"
NAMESPACE = "kube-system"
HOST_FOLDER = "/var/lib/etcd-snapshots"
PKI = "/etc/kubernetes/pki/etcd"
# kubeadm's etcd files (cmd/kubeadm/app/constants/constants.go: EtcdCACertName,
# EtcdHealthcheckClientCertName, EtcdHealthcheckClientKeyName).
PKI_FILES = {"etcd-ca": "ca.crt", "etcd-client-cert": "healthcheck-client.crt", "etcd-client-key": "healthcheck-client.key"}
CONTROL_PLANE_ROLE = "node-role.kubernetes.io/control-plane"
# kubeadm's etcd image per Kubernetes minor: DefaultEtcdVersion of the minor's newest release on
# the Go module proxy, https://github.com/kubernetes/kubernetes/blob/v1.36.3/cmd/kubeadm/app/constants/constants.go
# (v1.29.6, v1.30.14, v1.31.14, v1.32.13, v1.33.13, v1.34.4, v1.35.4, v1.36.3, v1.37.2). 1.25 to 1.28
# take what kubeadm v1.29.6's SupportedEtcdVersion lists for them; etcdctl's snapshot call is the
# same v3 Maintenance API across etcd 3.5 to 3.7.
ETCD_TAGS = {
    25: "3.5.12-0", 26: "3.5.12-0", 27: "3.5.12-0", 28: "3.5.12-0", 29: "3.5.12-0", 30: "3.5.15-0",
    31: "3.5.24-0", 32: "3.5.24-0", 33: "3.5.24-0", 34: "3.6.5-0", 35: "3.6.6-0", 36: "3.6.8-0", 37: "3.7.0-0",
}
INCOMING = f"{HOST_FOLDER}/incoming.db"
# Renames the new snapshot after the time (UTC) and keeps the newest KEEP.
KEEP_SCRIPT = """\
import datetime, glob, os, sys
folder, keep = os.environ['FOLDER'], int(os.environ['KEEP'])
incoming = os.path.join(folder, 'incoming.db')
if os.path.getsize(incoming) == 0:
    sys.exit('etcdctl wrote an empty snapshot')
name = os.path.join(folder, datetime.datetime.now(datetime.timezone.utc).strftime('etcd-%Y%m%dT%H%M%SZ.db'))
os.replace(incoming, name)
for old in sorted(glob.glob(os.path.join(folder, 'etcd-*.db')))[:-keep]:
    os.remove(old)
print(name, os.path.getsize(name), 'bytes; kept', min(keep, len(glob.glob(os.path.join(folder, 'etcd-*.db')))))
"""


def enabled(stack: GpuStack) -> bool:
    cluster = stack.spec.cluster
    return cluster.distribution == "kubeadm" and cluster.controlPlane.etcdSnapshots.enabled


def image(stack: GpuStack) -> str:
    return f"registry.k8s.io/etcd:{ETCD_TAGS[stack.spec.cluster.minor]}"


def _container(name: str, image_name: str, command: list[str], mounts: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "name": name,
        "image": image_name,
        "command": command,
        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
            "privileged": False,
            "readOnlyRootFilesystem": True,
        },
        "volumeMounts": mounts,
    }


def cron_job(stack: GpuStack) -> dict[str, Any]:
    snapshots = stack.spec.cluster.controlPlane.etcdSnapshots
    labels = {**MANAGED_BY, "app.kubernetes.io/name": NAME}
    folder = {"name": "snapshots", "mountPath": HOST_FOLDER}
    pki = [{"name": volume, "mountPath": f"{PKI}/{file}", "readOnly": True} for volume, file in PKI_FILES.items()]
    etcdctl = [
        "/usr/local/bin/etcdctl", "--endpoints=https://127.0.0.1:2379", f"--cacert={PKI}/ca.crt",
        f"--cert={PKI}/healthcheck-client.crt", f"--key={PKI}/healthcheck-client.key", "snapshot", "save", INCOMING,
    ]
    keep = _container("keep", PYTHON_IMAGE, ["python3", "-c", KEEP_SCRIPT], [folder])
    keep["env"] = [{"name": "FOLDER", "value": HOST_FOLDER}, {"name": "KEEP", "value": str(snapshots.keep)}]
    volumes = [{"name": "snapshots", "hostPath": {"path": HOST_FOLDER, "type": "DirectoryOrCreate"}}]
    volumes += [{"name": volume, "hostPath": {"path": f"{PKI}/{file}", "type": "File"}} for volume, file in PKI_FILES.items()]
    pod = {
        "metadata": {"labels": labels},
        "spec": {
            "hostNetwork": True,
            "nodeSelector": {CONTROL_PLANE_ROLE: ""},
            "tolerations": [{"key": CONTROL_PLANE_ROLE, "operator": "Exists", "effect": "NoSchedule"}],
            "priorityClassName": "system-cluster-critical",
            "automountServiceAccountToken": False,
            "restartPolicy": "Never",
            "securityContext": {"runAsUser": 0, "runAsGroup": 0, "seccompProfile": {"type": "RuntimeDefault"}},
            "initContainers": [_container("snapshot", image(stack), etcdctl, [folder, *pki])],
            "containers": [keep],
            "volumes": volumes,
        },
    }
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": NAME, "namespace": NAMESPACE, "labels": labels},
        "spec": {
            "schedule": snapshots.schedule,
            "concurrencyPolicy": "Forbid",
            "startingDeadlineSeconds": 3600,
            "successfulJobsHistoryLimit": 3,
            "failedJobsHistoryLimit": 3,
            "jobTemplate": {"spec": {"backoffLimit": 2, "activeDeadlineSeconds": 3600, "template": pod}},
        },
    }


def build(chart: Any, ctx: RenderContext) -> Contribution:
    if ctx.stack.spec.cluster.distribution != "kubeadm":
        return Contribution()
    notes = _single_control_plane(ctx.stack)
    if enabled(ctx.stack):
        add_object(chart, cron_job(ctx.stack))
        notes.append(_note(ctx.stack))
    return Contribution(notes=notes)


def _single_control_plane(stack: GpuStack) -> list[str]:
    """kubeadm with one control-plane node: the whole cluster stops with it (etcd's only member)."""
    if stack.spec.cluster.controlPlane.count > 1:
        return []
    nodes = sum(pool.count for pool in stack.spec.nodePools)
    return [
        f"**One control-plane node** (`cluster.controlPlane.count: 1`) carries etcd's only member and the only API "
        f"server for {nodes} GPU node{'s' if nodes != 1 else ''}: while it is down nothing is scheduled or "
        "restarted, and if its disk is lost the cluster is, but for the etcd snapshots copied off it. Set "
        "`cluster.controlPlane.count: 3` with `cluster.controlPlaneEndpoint` for kubeadm's highly available "
        "topology (https://kubernetes.io/docs/setup/production-environment/tools/kubeadm/high-availability/)."
    ]


def _note(stack: GpuStack) -> str:
    snapshots = stack.spec.cluster.controlPlane.etcdSnapshots
    return (
        f"etcd snapshots: CronJob `{NAMESPACE}/{NAME}` (`{snapshots.schedule}`) saves a snapshot of the etcd member of "
        f"the control-plane node it runs on into `{HOST_FOLDER}/etcd-<UTC time>.db` there and keeps the newest "
        f"{snapshots.keep} (`cluster.controlPlane.etcdSnapshots`). It runs on the host network to reach the member at "
        "127.0.0.1:2379 without the pod network, with kubeadm's etcd healthcheck client certificate read-only. "
        "A snapshot on the node it protects is lost with that node: copy them off every control-plane node "
        f"(e.g. `rsync -a NODE:{HOST_FOLDER}/ backup/` from a backup host, or your backup agent), and keep the "
        "copies encrypted, since a snapshot holds every Secret of the cluster. To restore "
        "(https://kubernetes.io/docs/tasks/administer-cluster/configure-upgrade-etcd/#restoring-an-etcd-cluster): "
        "stop the API servers (move `/etc/kubernetes/manifests/kube-apiserver.yaml` away on every control-plane "
        "node), run `etcdutl snapshot restore <file> --data-dir <new folder>` with the etcd release the cluster "
        "runs (the image of `kubectl -n kube-system get pod -l component=etcd`), point the etcd static pod's "
        "`/var/lib/etcd` volume at the new folder (on several control-plane nodes: restore the same snapshot on "
        "each with its own `--name`, `--initial-cluster` and `--initial-advertise-peer-urls`), then put the API "
        "server manifests back. A failed snapshot Job fires `KubeJobFailed`."
    )
