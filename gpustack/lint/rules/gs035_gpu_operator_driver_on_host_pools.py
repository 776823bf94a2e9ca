"""GS035: the GPU Operator's driver container on node pools whose driver is installed on the host.

The operator runs its driver DaemonSet on every GPU node labelled
``nvidia.com/gpu.deploy.driver=true``, a label it sets itself unless the node already carries
``false`` (corpus: gpu-operator assets/state-driver DaemonSet). ``driver.enabled``
is true by default in the chart and the ClusterPolicy, so installing the operator on nodes with
an apt/DKMS driver starts a second driver that fights the host's for the kernel
modules. The spec says where each pool's driver comes from; without one, Talos documents in the
set that load the nvidia kernel modules or install the NVIDIA system extensions say the nodes
bring their own (``facts.hostdriver``), and the operator's driver container cannot even run on
Talos's read-only root; so does a GPU NodePool's EC2NodeClass on Bottlerocket or the
EKS-optimized AMIs, whose NVIDIA variants carry the driver. Host scripts, notes and Terraform
that install the driver or create a managed cloud's GPU nodes with it say so too, as warnings
(``facts/hostdriver``).

Where the host's driver answers ``nvidia-smi`` on the host's PATH (distribution packages, a
spec's host pools, the AKS and EKS GPU images), the operator's driver manager (the driver
DaemonSet's init container) finds it, labels the node ``nvidia.com/gpu.deploy.driver=pre-installed``
and turns the operator's driver off there
(https://github.com/NVIDIA/k8s-driver-manager/blob/main/cmd/driver-manager/main.go,
``isHostDriver``): no fight, only a driver pod started and withdrawn on each such node, and a
setting that says otherwise. That is information. Talos, Bottlerocket and GKE's
Container-Optimized OS keep ``nvidia-smi`` off the host's PATH: there the finding keeps its
severity.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.lint.context import LintContext
from gpustack.lint.facts import hostdriver, operands
from gpustack.lint.facts.node_labels import set_label_keys
from gpustack.lint.facts.pools import ClusterFacts, Pool
from gpustack.lint.model import Hit, Severity
from gpustack.lint.registry import Rule

SKIP_LABEL = "nvidia.com/gpu.deploy.driver"


def check(ctx: LintContext) -> Iterator[Hit]:
    found = _host_driver(ctx)
    if found is None:
        return
    reason, assumed, detected = found
    if detected:
        outcome = (": the operator's driver manager finds that driver (nvidia-smi on the host), labels those nodes "
                   f"`{SKIP_LABEL}=pre-installed` and keeps its own driver off them, after a driver pod has started on "
                   "each; `driver.enabled: false` says so up front")
    else:
        outcome = ": the two drivers fight over the kernel modules"
    for place in operands.operator_deploys(ctx, "driver"):
        yield place.hit(
            f"{reason}{outcome}" + (" (assumed: the script prepares the GPU nodes)" if assumed else ""),
            fix=f"Set `driver.enabled: false` when no pool takes the operator's driver, else label the host "
            f"pools' nodes `{SKIP_LABEL}=false` (and list the label in their `labels` in the spec).",
            severity=Severity.INFO if detected else Severity.WARNING if assumed else None,
        )


def _host_driver(ctx: LintContext) -> tuple[str, bool, bool] | None:
    """What says nodes of the set bring their own driver, whether that is assumed, and whether the
    operator's driver manager detects that driver: the spec's host pools, else the node images of
    the set (Talos documents, Bottlerocket node classes), else a host script that installs the
    driver (assumed to prepare the GPU nodes)."""
    if ctx.cluster is not None:
        pools = _host_pools(ctx.cluster)
        if not pools:
            return None
        names = ", ".join(p.name for p in pools)
        which = f"pool {names} installs" if len(pools) == 1 else f"pools {names} install"
        return f"{which} the driver on the host ({ctx.cluster.spec_file})", False, True
    # The strongest evidence first: a driver the operator would not detect, then one the set ties to its nodes.
    evidence = sorted(hostdriver.host_driver(ctx), key=lambda found: (found.detected, found.assumed))
    if not evidence or SKIP_LABEL in set_label_keys(ctx):
        return None  # nothing says, or the set labels the host-driver nodes for the operator to skip
    first = evidence[0]
    return (f"{first}" if first.assumed else f"{first}: the driver comes with the nodes' OS"), first.assumed, first.detected


def _host_pools(cluster: ClusterFacts) -> list[Pool]:
    """Pools with a host-installed driver whose nodes the operator's driver would run on."""
    return [p for p in cluster.pools if p.driver_source == "host" and p.labels.get(SKIP_LABEL) != "false"]


RULE = Rule("GS035", "set", check)
