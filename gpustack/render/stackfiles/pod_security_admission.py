"""kubeadm's cluster-wide Pod Security default: an AdmissionConfiguration for the API server.

A namespace without Pod Security labels is ``privileged`` unless the API server's PodSecurity
plugin is given defaults (https://kubernetes.io/docs/tasks/configure-pod-container/enforce-standards-admission-controller/);
kubeadm passes none. ``cluster/pod-security.yaml`` sets them: enforce ``baseline`` everywhere
(no host namespaces, host paths or privileged containers for a pod in a namespace nobody
labelled), warn and audit ``restricted`` (as the stack's own workload namespaces do,
``pod_security.workload_labels``). The stack's namespaces keep their own labels, which win over
the defaults: the GPU node agents' namespaces are ``privileged``. These are the defaults Talos
gives its API server (https://github.com/siderolabs/talos/blob/v1.13.0/pkg/machinery/config/generate/init.go),
so kubeadm and Talos stacks meet one policy. Exempt are kube-system (kube-proxy,
the etcd snapshots of ``etcd_snapshots`` and the control plane's static pods run there with host
access, and so does Cilium, the pod network of ``cni``). A CNI of the user's own
(``cluster.cni: none``) runs in a namespace they label ``privileged`` (the CNI step says so).

A host step copies the file to every control-plane node before ``kubeadm init`` or ``join``
(the API server's static pod mounts it, ``extraVolumes``); the ClusterConfiguration's
``admission-control-config-file`` names it. Without ``security.podSecurityLabels`` the
charts' namespaces carry no ``privileged`` label, so a ``baseline`` default would refuse the GPU
node agents: then no default is rendered.
"""

from __future__ import annotations

from gpustack.render import pod_security
from gpustack.spec.models import GpuStack
from gpustack.yamlio import dump

PATH = "cluster/pod-security.yaml"
NODE_PATH = "/etc/kubernetes/pod-security.yaml"
EXEMPT_NAMESPACES = ("kube-system",)
VOLUME = "pod-security-admission"


def enabled(stack: GpuStack) -> bool:
    return stack.spec.cluster.distribution == "kubeadm" and stack.spec.security.podSecurityLabels


def admission_config(stack: GpuStack) -> str:
    defaults = {}
    for mode, level in (("enforce", pod_security.BASELINE), ("audit", pod_security.RESTRICTED),
                        ("warn", pod_security.RESTRICTED)):
        defaults[mode] = level
        defaults[f"{mode}-version"] = "latest"
    document = {
        "apiVersion": "apiserver.config.k8s.io/v1",
        "kind": "AdmissionConfiguration",
        "plugins": [
            {
                "name": "PodSecurity",
                "configuration": {
                    "apiVersion": "pod-security.admission.config.k8s.io/v1",
                    "kind": "PodSecurityConfiguration",
                    "defaults": defaults,
                    "exemptions": {"usernames": [], "runtimeClasses": [], "namespaces": list(EXEMPT_NAMESPACES)},
                },
            }
        ],
    }
    header = (
        f"# Pod Security defaults of stack {stack.metadata.name}: {NODE_PATH} on every control-plane node,\n"
        "# before `kubeadm init` or `kubeadm join --control-plane` (the ClusterConfiguration's\n"
        "# admission-control-config-file). Namespaces' own pod-security.kubernetes.io labels win over them.\n"
    )
    return header + dump(document)


def api_server(stack: GpuStack) -> dict[str, list[dict[str, object]]]:
    """The ClusterConfiguration's apiServer entries: the flag and the file's mount."""
    if not enabled(stack):
        return {}
    return {
        "extraArgs": [{"name": "admission-control-config-file", "value": NODE_PATH}],
        "extraVolumes": [{"name": VOLUME, "hostPath": NODE_PATH, "mountPath": NODE_PATH, "readOnly": True,
                          "pathType": "File"}],
    }


def install_command(stack: GpuStack) -> tuple[str, ...]:
    """The host step's command, on each control-plane node before kubeadm starts its API server."""
    return (f"sudo install -D -m 0644 {PATH} {NODE_PATH}",) if enabled(stack) else ()
