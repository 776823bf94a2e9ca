"""The README's steps for a kubeadm control plane of several nodes (``cluster.controlPlane.count``).

kubeadm's high-availability guide with stacked etcd
(https://kubernetes.io/docs/setup/production-environment/tools/kubeadm/high-availability/):
``kubeadm init --upload-certs`` on the first node stores the control-plane certificates in
the kubeadm-certs Secret, encrypted with a certificate key (``kubeadm certs certificate-key``
makes one; the InitConfiguration's ``certificateKey``, since kubeadm refuses ``--certificate-key``
next to ``--config``); each further node runs ``kubeadm join`` with a JoinConfiguration whose
``controlPlane.certificateKey`` decrypts them. The Secret is deleted after two hours
(``DefaultCertTokenDuration`` in cmd/kubeadm/app/constants/constants.go): later joins upload
the certificates again first. The control-plane nodes join before the pools, so that etcd has
its members before the GPU nodes load the API server.
"""

from __future__ import annotations

from gpustack.render.stackfiles import cluster_config, pod_security_admission
from gpustack.render.stackfiles.step import Step, sentences
from gpustack.spec.models import GpuStack

INIT_FLAGS = " --upload-certs"
CERTIFICATE_KEY_EXPORT = '"$(kubeadm certs certificate-key)"  # keep it until the control-plane nodes have joined'
JOIN_FILE = "join-control-plane.yaml"
VARIABLES = "'$CONTROL_PLANE_ENDPOINT $JOIN_TOKEN $CA_CERT_HASH $CERTIFICATE_KEY'"


def steps(stack: GpuStack) -> list[Step]:
    if not cluster_config.high_availability(stack):
        return []
    count = stack.spec.cluster.controlPlane.count
    key = f"${cluster_config.CERTIFICATE_KEY_VARIABLE}"
    commands = (
        "read -r _ _ CONTROL_PLANE_ENDPOINT _ JOIN_TOKEN _ CA_CERT_HASH < <(sudo kubeadm token create --print-join-command)",
        "export CONTROL_PLANE_ENDPOINT JOIN_TOKEN CA_CERT_HASH",
        f"envsubst {VARIABLES} < {cluster_config.CONTROL_PLANE_JOIN_PATH} > {JOIN_FILE}",
        "# more than two hours after `kubeadm init`, upload the certificates again first:",
        f'# sudo kubeadm init phase upload-certs --upload-certs --certificate-key "{key}"',
        f"# on each of the other {count - 1} control-plane nodes, one at a time, with {JOIN_FILE} copied there:",
        *pod_security_admission.install_command(stack),
        f"sudo kubeadm join --config {JOIN_FILE}",
        "kubectl get nodes -l node-role.kubernetes.io/control-plane",
    )
    return [
        Step(
            f"Control-plane nodes ({count}, stacked etcd)",
            "On the first control-plane node, then on each further control-plane node",
            commands,
            sentences(
                f"`kubeadm init --upload-certs` stored the control-plane certificates in the kubeadm-certs Secret, "
                f"encrypted with `{key}`; `{cluster_config.CONTROL_PLANE_JOIN_PATH}` joins each further node with "
                "its `controlPlane.certificateKey` as a control-plane node with its own etcd member "
                "(https://kubernetes.io/docs/setup/production-environment/tools/kubeadm/high-availability/).",
                "The Secret is deleted two hours after `kubeadm init`: the commented command uploads the "
                "certificates again.",
                "The filled-in `kubeadm-config.yaml` and join file hold the key and the token: delete them once "
                "the nodes have joined.",
                f"Join the {count - 1} nodes one at a time, before the pools, and put all {count} behind "
                "`cluster.controlPlaneEndpoint`'s load balancer (TCP 6443, health check on `/readyz`).",
            ),
        )
    ]
