"""The pod network of kubeadm and Talos stacks: Cilium, from its pinned Helm chart.

kubeadm installs no CNI (every node stays NotReady until one runs), and Talos's default, Flannel,
like any Flannel, does not implement NetworkPolicy: the stack's policies
(``components/network_policies.py``) would be accepted by the API server and never enforced.
Cilium enforces them (``policyEnforcementMode: default``: every endpoint a policy selects is
held to it, https://docs.cilium.io/en/stable/security/policy/intro/#policy-enforcement-modes),
ships one Helm chart per release, and its 1.20 release is tested against Kubernetes 1.33 to 1.36
(https://docs.cilium.io/en/v1.20/network/kubernetes/requirements/), the stacks' range. Calico
would do as well; Cilium is also what Talos documents as its alternative CNI
(https://docs.siderolabs.com/kubernetes-guides/cni/deploying-cilium). K3s keeps its own
Flannel: its embedded network policy controller enforces the policies
(https://docs.k3s.io/networking/networking-services#network-policy-controller).

The values (``cluster/cni/cilium.values.yaml``):

- ``ipam.mode: kubernetes``: each node's pods get addresses from ``Node.spec.podCIDR``, which the
  controller manager allocates from the cluster's pod subnet (kubeadm's ``networking.podSubnet``,
  Talos's ``cluster.network.podSubnets``), so Cilium and the cluster cannot disagree on it;
- kube-proxy stays (Cilium's default ``kubeProxyReplacement: false``), so the kubeadm
  configuration's KubeProxyConfiguration keeps its meaning;
- the agent's DaemonSet tolerates every taint (the chart's default, kept), so tainted GPU nodes
  get their pod network too; the operator, which tolerates the control plane's taints only, runs
  two replicas where two untainted pool nodes can hold them, else one (``operator_replicas``);
- on Talos, Cilium's Talos values
  (https://docs.cilium.io/en/v1.20/installation/k8s-install-talos-linux/): no ``SYS_MODULE``
  capability (Talos forbids workloads loading kernel modules), Talos's own cgroup2 mount at
  /sys/fs/cgroup, and the API server through KubePrism on localhost:7445, which every Talos node
  serves (https://docs.siderolabs.com/kubernetes-guides/advanced-guides/kubeprism).

The CNI is a host step (after ``kubeadm init``, or after ``talosctl bootstrap``), not a release of
the apply order nor of a GitOps layer: Flux's and Argo CD's controllers are pods that need the
pod network before they can deliver anything. Its chart is in the chart registry
(specs/charts.yaml, role ``pod-network``) for its pin and for ``gpustack lint``'s key data, which
checks the values file (``.gpustack.yaml`` maps it to the chart), but it is no release.
"""

from __future__ import annotations

from typing import Any

from gpustack import charts
from gpustack.render.stackfiles.step import all_pools
from gpustack.spec.pools import repels
from gpustack.spec.models import GpuStack
from gpustack.yamlio import dump

CHART = "cilium"
VERSION = charts.chart(CHART).version  # pinned in the chart registry, specs/charts.yaml
REPOSITORY = charts.chart(CHART).repository
RELEASE = "cilium"
NAMESPACE = "kube-system"
FOLDER = "cluster/cni"
PATH = f"{FOLDER}/cilium.values.yaml"
# Never "never": the mode in which Cilium ignores every policy.
POLICY_ENFORCEMENT = "default"
# The agent's capabilities on Talos: the chart's defaults without SYS_MODULE (Cilium's Talos guide).
TALOS_AGENT_CAPABILITIES = [
    "CHOWN", "KILL", "NET_ADMIN", "NET_RAW", "IPC_LOCK", "SYS_ADMIN", "SYS_RESOURCE", "DAC_OVERRIDE", "FOWNER",
    "SETGID", "SETUID",
]
TALOS_CLEAN_STATE_CAPABILITIES = ["NET_ADMIN", "SYS_ADMIN", "SYS_RESOURCE"]
KUBEPRISM = ("localhost", 7445)
MIGRATION = "https://docs.cilium.io/en/v1.20/installation/k8s-install-migration/"
HELM_INSTALL = "helm: https://helm.sh/docs/intro/install/"


def helm_command() -> str:
    """No ``--wait``: right after ``kubeadm init`` the control plane is the only node, where the
    operator's second replica cannot schedule beside the first (anti-affinity) until a pool joins;
    the README waits for the nodes to be Ready instead, which needs the agent only."""
    return f"helm upgrade --install {RELEASE} {CHART} --repo {REPOSITORY} --version {VERSION} -n {NAMESPACE} -f {PATH}"


def operator_replicas(stack: GpuStack) -> int:
    """Two where two pool nodes can hold them, else one. The chart's operator takes one node each
    (anti-affinity, host ports) and tolerates only the control plane's taints, not the pools'; the
    control-plane nodes, which a spec does not count, hold the one where no pool node can."""
    free = sum(p.count for p in all_pools(stack) if not repels(p.taints))
    return 2 if free >= 2 else 1


def values(stack: GpuStack) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ipam": {"mode": "kubernetes"},
        "policyEnforcementMode": POLICY_ENFORCEMENT,
        "operator": {"replicas": operator_replicas(stack)},
    }
    if stack.spec.cluster.distribution == "talos":
        result["securityContext"] = {
            "capabilities": {"ciliumAgent": TALOS_AGENT_CAPABILITIES, "cleanCiliumState": TALOS_CLEAN_STATE_CAPABILITIES}
        }
        result["cgroup"] = {"autoMount": {"enabled": False}, "hostRoot": "/sys/fs/cgroup"}
        result["k8sServiceHost"], result["k8sServicePort"] = KUBEPRISM
    return result


def values_file(stack: GpuStack) -> str:
    header = (
        f"# Pod network of stack {stack.metadata.name}: Cilium {VERSION} ({REPOSITORY}), which enforces the\n"
        "# stack's NetworkPolicies. Once the control plane is up, before any other chart:\n"
        f"#   {helm_command()}\n"
    )
    return header + dump(values(stack))


def installs(stack: GpuStack) -> bool:
    """Whether the stack installs Cilium: not on K3s, which brings its own network and policy
    controller, nor where ``cluster.cni: none`` leaves the CNI to the user."""
    return stack.spec.cluster.distribution != "k3s" and stack.spec.cluster.cni == "cilium"


def chart_reference(stack: GpuStack) -> str | None:
    """``cilium@<version>`` where the stack installs it (the lint config's and versions.yaml's form)."""
    return f"{CHART}@{VERSION}" if installs(stack) else None


def commands(stack: GpuStack) -> tuple[str, ...]:
    """The CNI step's commands: Cilium's install, or where the user's CNI goes."""
    first = helm_command() if installs(stack) else "# install your CNI here: one that enforces NetworkPolicy (cluster.cni: none)"
    return (first, "kubectl wait --for=condition=Ready node --all --timeout=300s")


def step_sentence(stack: GpuStack, pod_subnet: str) -> str:
    """What the README's CNI step does and why it comes first; ``pod_subnet``: the cluster's."""
    if not installs(stack):
        return (
            "Install your pod network now (`cluster.cni: none`): until a CNI runs every node stays NotReady, and "
            "Flux's or Argo CD's controllers, like every other pod, wait for it. Pick one that enforces "
            "NetworkPolicy (Calico, Cilium, or kube-network-policies beside Flannel), or the stack's policies are "
            f"accepted and never enforced; its pods take addresses from the pod subnet {pod_subnet}."
            + (
                " Its agents need host access: outside kube-system, label their namespace "
                "`pod-security.kubernetes.io/enforce=privileged`, as the cluster's Pod Security default is baseline."
                if stack.spec.cluster.distribution == "kubeadm" and stack.spec.security.podSecurityLabels
                else ""
            )
        )
    return (
        f"`helm upgrade --install {RELEASE}` ({HELM_INSTALL}) installs the pod network, Cilium {VERSION} with `{PATH}`: until a CNI "
        "runs every node stays NotReady, and Flux's or Argo CD's controllers, like every other pod, wait for it. "
        "Cilium enforces the stack's NetworkPolicies (Flannel, kubeadm's usual CNI and Talos's default, ignores "
        f"them); its pods take their addresses from each node's podCIDR, out of the pod subnet "
        f"{pod_subnet}, and its agent tolerates every taint, so the GPU nodes get it too."
    )


def files(stack: GpuStack) -> dict[str, str]:
    return {PATH: values_file(stack)} if installs(stack) else {}
