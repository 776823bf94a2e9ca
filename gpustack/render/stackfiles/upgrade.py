"""The stack README's upgrade steps: from the versions of the previous render to this one's.

Ordered as upstream orders an upgrade: etcd backed up first; the distribution and Kubernetes
(control plane before kubelets, one minor at a time:
https://kubernetes.io/releases/version-skew-policy/); then each GPU pool's driver with its
kernel, a node at a time, drained first (``kubectl drain`` evicts through the Eviction API,
which honours PodDisruptionBudgets: https://kubernetes.io/docs/tasks/administer-cluster/safely-drain-node/);
then the toolkit; then the charts in delivery order, CRDs before the chart where Helm would not
upgrade them (https://helm.sh/docs/chart_best_practices/custom_resource_definitions/).

A Kubernetes minor skipped or a downgrade is refused: kubeadm, K3s and Talos upgrade one minor
at a time and none downgrades.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpustack.charts import registry
from gpustack.errors import GpustackError
from gpustack.render.component import HelmRelease
from gpustack.render.components import etcd_snapshots, flux, gitops
from gpustack.render.stackfiles import cni, talos_config
from gpustack.render.stackfiles.kubernetes_steps import apt_install, apt_source
from gpustack.render.stackfiles.step import Step, sentences, step_markdown
from gpustack.spec.models import GpuStack
from gpustack.spec.models.cluster import NodePool

DRAIN = 'kubectl drain "$NODE" --ignore-daemonsets --delete-emptydir-data --timeout=30m'
NODE = "NODE='name of the node'"
HEADING = "## Upgrade from the previous render"


def check(before: Mapping[str, Any] | None, now: Mapping[str, Any], spec_file: str) -> None:
    """Refuse what no distribution can do in one step (``spec_file`` names the spec in the error)."""
    if before is None:
        return
    old, new = _minor(before["kubernetes"]), _minor(now["kubernetes"])
    if new < old:
        raise GpustackError(
            f"{spec_file}: spec.cluster.kubernetesVersion {now['kubernetes']} is older than the {before['kubernetes']} this folder "
            "was rendered for (its versions.yaml): clusters are not downgraded; render into a new folder for a new cluster"
        )
    if new - old > 1:
        raise GpustackError(
            f"{spec_file}: spec.cluster.kubernetesVersion {before['kubernetes']} → {now['kubernetes']} skips a minor release: "
            f"upgrade one minor at a time (https://kubernetes.io/releases/version-skew-policy/): render with "
            f"1.{old + 1}, follow its upgrade steps, then render with {now['kubernetes']}"
        )


def markdown(stack: GpuStack, releases: tuple[HelmRelease, ...], before: Mapping[str, Any], now: Mapping[str, Any]) -> list[str]:
    """The upgrade section, or nothing when no version changed."""
    steps = [
        *_cluster_steps(stack, before, now),
        *_cni_steps(before, now),
        *_driver_steps(stack, before, now),
        *_toolkit_steps(stack, before, now),
        *_chart_steps(stack, releases, before, now),
    ]
    if not steps:
        return []
    lines = [
        HEADING,
        "",
        "This folder was rendered before with other versions (`versions.yaml`, `previous`). On the running "
        "cluster, in this order, after the host steps' new versions are known and before the apply order below:",
    ]
    for number, step in enumerate([_backup_step(stack), *steps], start=1):
        lines += step_markdown(f"Upgrade {number}. {step.title}", step)
    return lines


def _minor(version: str) -> int:
    return int(str(version).split(".")[1])


def _backup_step(stack: GpuStack) -> Step:
    distribution = stack.spec.cluster.distribution
    if distribution == "talos":
        commands: tuple[str, ...] = (NODE, 'talosctl -n "$NODE" etcd snapshot "etcd-$(date +%F).db"')
        where = "From a machine with talosctl, against one control-plane node"
    elif distribution == "kubeadm" and etcd_snapshots.enabled(stack):
        commands = (
            'JOB="etcd-pre-upgrade-$(date +%s)"',
            f'kubectl -n {etcd_snapshots.NAMESPACE} create job "$JOB" --from=cronjob/{etcd_snapshots.NAME}',
            f'kubectl -n {etcd_snapshots.NAMESPACE} wait --for=condition=complete "job/$JOB" --timeout=10m',
        )
        where = (
            f"From a machine with kubectl: the etcd snapshot CronJob, once now (the snapshot lands in "
            f"{etcd_snapshots.HOST_FOLDER} of the control-plane node it runs on)"
        )
    elif distribution == "kubeadm":
        commands = (
            "NODE='name of a control-plane node'",
            'kubectl -n kube-system exec "etcd-$NODE" -- etcdctl --endpoints=https://127.0.0.1:2379 '
            "--cacert=/etc/kubernetes/pki/etcd/ca.crt --cert=/etc/kubernetes/pki/etcd/server.crt "
            '--key=/etc/kubernetes/pki/etcd/server.key snapshot save "/var/lib/etcd/pre-upgrade-$(date +%F).db"',
        )
        where = "From a machine with kubectl, through etcd's own pod (its image has etcdctl; /var/lib/etcd is the node's)"
    else:
        commands = ('sudo k3s etcd-snapshot save --name "pre-upgrade-$(date +%F)"',)
        where = "On a K3s server (with embedded etcd; a server on SQLite: copy /var/lib/rancher/k3s/server/db instead)"
    return Step(
        "Back up etcd",
        where,
        commands,
        "A snapshot taken before anything changes is the way back from an upgrade that goes wrong; copy it off "
        "the node. Then list the PodDisruptionBudgets (`kubectl get pdb -A`): every drain below waits for them, "
        "and one with no disruption allowed stops the drain until you act.",
    )


def _cluster_steps(stack: GpuStack, before: Mapping[str, Any], now: Mapping[str, Any]) -> list[Step]:
    if (before["kubernetes"], before["release"]) == (now["kubernetes"], now["release"]):
        return []
    distribution = now["distribution"]
    # A release left unpinned in the spec (None) is named by its Kubernetes minor.
    old, new = before["release"] or before["kubernetes"], now["release"] or now["kubernetes"]
    if distribution == "talos":
        return _talos_steps(stack, before, now)
    if distribution == "k3s":
        return [
            Step(
                f"K3s {old} → {new}",
                "On each server, one at a time, then on each agent",
                (NODE, DRAIN, "# on the node: the K3s install step above with its new INSTALL_K3S_VERSION", 'kubectl uncordon "$NODE"'),
                "Servers first: an agent never runs a newer minor than its servers "
                "(https://docs.k3s.io/upgrades/manual). The install script with the same flags and the new "
                "version replaces the binary and restarts K3s.",
            )
        ]
    install = (apt_source(now["kubernetes"]), "sudo apt-get update")
    kubelet = (
        "sudo apt-mark unhold kubelet kubectl",
        apt_install(("kubelet", "kubectl"), now["release"]),
        "sudo apt-mark hold kubelet kubectl",
        "sudo systemctl daemon-reload && sudo systemctl restart kubelet",
    )
    kubeadm = ("sudo apt-mark unhold kubeadm", apt_install(("kubeadm",), now["release"]), "sudo apt-mark hold kubeadm")
    # Without a pinned kubeadmVersion the kubeadm just installed (the minor's newest patch) names the target.
    target = now["release"] or '"$(kubeadm version -o short)"'
    why = "https://kubernetes.io/docs/tasks/administer-cluster/kubeadm/kubeadm-upgrade/"
    return [
        Step(
            f"Control plane {old} → {new}",
            "On the first control-plane node; on each other one, `sudo kubeadm upgrade node` instead of the last "
            "two commands",
            (*install, *kubeadm, "sudo kubeadm upgrade plan", f"sudo kubeadm upgrade apply {target}"),
            "kubeadm upgrades the static control-plane pods, etcd and the cluster's kubeadm configuration; "
            f"`upgrade plan` says first whether it can ({why}).",
        ),
        Step(
            f"Control-plane kubelets {old} → {new}",
            "For each control-plane node, a node at a time",
            (NODE, DRAIN, "# on the node:", *kubelet, 'kubectl uncordon "$NODE"'),
            "The kubelet follows the control plane, never leads it.",
        ),
        Step(
            f"Worker kubelets {old} → {new}",
            "For each other node, a node at a time, GPU pools last",
            (NODE, DRAIN, "# on the node:", *install, *kubeadm, "sudo kubeadm upgrade node", *kubelet, 'kubectl uncordon "$NODE"'),
            "The drain evicts the node's pods within their disruption budgets before the kubelet restarts on the "
            "new release.",
        ),
    ]


def _cni_steps(before: Mapping[str, Any], now: Mapping[str, Any]) -> list[Step]:
    """Cilium, a host step's release rather than a GitOps one: upgraded by its own command."""
    if before.get("cni") == now["cni"] or now["cni"] is None:
        return []
    if before.get("cni") is None:
        return [
            Step(
                f"Pod network → {now['cni']}",
                "By hand: the cluster runs another CNI (Flannel, or your own)",
                (),
                "Replacing a running cluster's CNI moves every pod to a new network: follow Cilium's migration "
                "guide, node by node (https://docs.cilium.io/en/stable/installation/k8s-install-migration/), "
                f"with `{cni.PATH}` as the values; the CNI host step above is for a new cluster.",
            )
        ]
    return [
        Step(
            f"Pod network {before.get('cni') or 'none'} → {now['cni']}",
            "From a machine with helm and kubectl",
            (cni.helm_command(), f"kubectl -n {cni.NAMESPACE} rollout status daemonset/cilium --timeout=30m"),
            "Cilium's agents restart a node at a time; upgrade one minor release at a time, reading its upgrade "
            "notes first (https://docs.cilium.io/en/stable/operations/upgrade/).",
        )
    ]


def _talos_steps(stack: GpuStack, before: Mapping[str, Any], now: Mapping[str, Any]) -> list[Step]:
    steps = []
    if before["release"] != now["release"]:
        image = talos_config.installer_image("${SCHEMATIC_ID}", stack)
        steps.append(
            Step(
                f"Talos {before['release']} → {now['release']}",
                "For each node, control-plane nodes first, then a node at a time, with its pool's schematic "
                "(the host step with the NVIDIA extensions gives `SCHEMATIC_ID`)",
                (NODE, DRAIN, f'talosctl -n "$NODE" upgrade --image "{image}"', 'kubectl uncordon "$NODE"'),
                "The NVIDIA extensions are built for one Talos release: the new installer brings the driver of "
                f"Talos {now['release']} with them (https://www.talos.dev/latest/talos-guides/upgrading-talos/).",
            )
        )
    if before["kubernetes"] != now["kubernetes"]:
        steps.append(
            Step(
                f"Kubernetes {before['kubernetes']} → {now['kubernetes']}",
                "From a machine with talosctl, against one control-plane node",
                (NODE, f"VERSION='the newest {now['kubernetes']} patch release, e.g. {now['kubernetes']}.0'", 'talosctl -n "$NODE" upgrade-k8s --to "$VERSION"'),
                "`upgrade-k8s` upgrades the control plane, then each kubelet "
                "(https://www.talos.dev/latest/kubernetes-guides/upgrading-kubernetes/).",
            )
        )
    return steps


def _changed_pools(stack: GpuStack, before: Mapping[str, Any], now: Mapping[str, Any], part: str) -> list[NodePool]:
    """The pools that were there before and whose ``part`` (driver, toolkit) changed."""
    return [
        pool
        for pool in stack.spec.nodePools
        if pool.name in before["pools"] and before["pools"][pool.name][part] != now["pools"][pool.name][part]
    ]


def _driver_steps(stack: GpuStack, before: Mapping[str, Any], now: Mapping[str, Any]) -> list[Step]:
    changed = _changed_pools(stack, before, now, "driver")
    host = [p for p in changed if p.driver.source == "host" and stack.spec.cluster.distribution != "talos"]
    operator = [p for p in changed if p.driver.source == "operator"]
    steps = []
    by_version: dict[str | None, list[NodePool]] = {}
    for pool in host:
        by_version.setdefault(pool.driver.version, []).append(pool)
    for version, pools in by_version.items():
        names = ", ".join(f"`{p.name}`" for p in pools)
        lock = (f"sudo apt-get install -y 'nvidia-driver-pinning-{version}'",) if version else ()
        steps.append(
            Step(
                f"GPU driver{f' {version}' if version else ''}, with the kernel",
                f"For each node of {'pool' if len(pools) == 1 else 'pools'} {names}, a node at a time",
                (
                    NODE,
                    DRAIN,
                    "# on the node:",
                    "sudo apt-mark unhold $(apt-mark showhold | grep -E '^(linux-|nvidia-|libnvidia-)')",
                    "sudo apt-get update",
                    *lock,
                    "sudo apt-get dist-upgrade -y",
                    "dkms status",
                    "# then the host step above that holds the driver packages, and:",
                    "sudo reboot",
                    "# after the reboot, nvidia-smi lists every GPU; then:",
                    'kubectl uncordon "$NODE"',
                ),
                sentences(
                    "The version lock moves first, then one upgrade takes the kernel and the driver (and Fabric "
                    "Manager on NVSwitch boards) together: DKMS builds the module for the new kernel before the "
                    "one reboot (`dkms status` lists it for both kernels).",
                    "Only the kernel and NVIDIA packages are released; the kubelet and the rest stay held.",
                    "The drain moves GPU jobs off first, within their disruption budgets.",
                ),
            )
        )
    if operator:
        names = ", ".join(f"`{p.name}`" for p in operator)
        steps.append(
            Step(
                "GPU driver, by the GPU Operator",
                f"For {'pool' if len(operator) == 1 else 'pools'} {names}, nothing to run by hand",
                ("kubectl get nodes -L nvidia.com/gpu-driver-upgrade-state",),
                "With the new values the GPU Operator's upgrade controller replaces the driver node by node as "
                "`driver.upgradePolicy` in the operator's values says; the label shows each node's state "
                "(https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/gpu-driver-upgrades.html).",
            )
        )
    return steps


def _toolkit_steps(stack: GpuStack, before: Mapping[str, Any], now: Mapping[str, Any]) -> list[Step]:
    changed = _changed_pools(stack, before, now, "toolkit")
    if not changed:
        return []
    names = ", ".join(f"`{p.name}`" for p in changed)
    return [
        Step(
            "NVIDIA Container Toolkit",
            f"On each node of {'pool' if len(changed) == 1 else 'pools'} {names}",
            ("# the host step above for the toolkit, with its new version", "sudo systemctl restart containerd"),
            "Running containers keep their devices; containers started after the restart use the new toolkit.",
        )
    ]


def _chart_steps(
    stack: GpuStack, releases: tuple[HelmRelease, ...], before: Mapping[str, Any], now: Mapping[str, Any]
) -> list[Step]:
    old_charts: Mapping[str, str] = before["charts"]
    changed = [r for r in releases if old_charts.get(r.name) != now["charts"][r.name]]
    removed = [name for name in old_charts if name not in now["charts"]]
    if not changed and not removed:
        return []
    charts = registry()
    commands: list[str] = []
    helm_upgrades_crds = flux.enabled(stack) or stack.spec.gitops.argocd.enabled
    for release in sorted(changed, key=lambda r: r.wave):
        chart = charts.get(release.chart)
        if chart is not None and chart.crds and not helm_upgrades_crds and release.path is None:
            commands.append(
                f"helm show crds {release.chart} --repo {release.repo} --version {release.version} "
                "| kubectl apply --server-side --force-conflicts -f -"
            )
        commands.append(f"# {release.name}: {old_charts.get(release.name, 'new')} → {release.chart}@{release.version}")
    commands += [f"helm uninstall {name} -n \"$(helm list -A -f '^{name}$' -o json | jq -r '.[0].namespace')\"" for name in removed]
    return [
        Step(
            "Charts",
            _delivery(stack),
            tuple(commands),
            sentences(
                "In the order of the waves, the runtime and device layers before what uses them.",
                "Helm installs a chart's CRDs but never upgrades them: the new CRDs go first, server-side "
                "(https://helm.sh/docs/chart_best_practices/custom_resource_definitions/)."
                if not helm_upgrades_crds
                else "",
            ),
        )
    ]


def _delivery(stack: GpuStack) -> str:
    if flux.enabled(stack):
        return "Commit this folder: Flux upgrades the HelmReleases layer by layer (CRDs too: `upgrade.crds: CreateReplace`)"
    if stack.spec.gitops.argocd.enabled:
        return "Commit this folder: Argo CD syncs each Application, the chart's CRDs with it"
    if gitops.k3s_enabled(stack):
        return "Apply `manifests/` as in the apply order below: K3s' helm-controller upgrades each HelmChart"
    return "Run the apply order below: `helm upgrade --install` upgrades each release"
