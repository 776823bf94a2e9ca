"""GS044: GPU pods on NVSwitch boards with a host driver and nothing that runs NVIDIA Fabric Manager.

On HGX/DGX 8-GPU boards (A100, H100, H200, B200 SXM) the GPUs reach each other through
NVSwitches that Fabric Manager configures; until it has, CUDA fails to initialise on every GPU
(https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/). With a spec, the pods'
reachable pools say which nodes are such boards (the catalogue's ``nvswitchBoardGpus`` and the
pool's GPU count) and whether gpustack's host steps install Fabric Manager there
(``driver.fabricManager``). Without one, a pod that selects an NVSwitch part by GFD's
``nvidia.com/gpu.product`` and asks for a whole board (its ``nvidia.com/gpu.count`` label or
its own GPU requests) counts, unless the set runs the GPU Operator's driver container; that
finding is a warning: the set says nothing of the hosts, whose package manager usually installs
Fabric Manager beside the driver. A container whose image or command names Fabric Manager is
evidence either way.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.lint.context import LintContext
from gpustack.lint.facts import nvswitch
from gpustack.lint.facts.podspec import node_label_tests, subject
from gpustack.lint.facts.pools import GPU, ClusterFacts
from gpustack.lint.facts.scheduling import container_asks, reachable_pools
from gpustack.lint.model import Hit, PodSpec, Severity
from gpustack.lint.registry import Rule

PRODUCT = "nvidia.com/gpu.product"
COUNT = "nvidia.com/gpu.count"
FIX = (
    "Install `nvidia-fabricmanager-<branch>` at exactly the driver's release on those nodes and enable the "
    "`nvidia-fabricmanager` service (gpustack's host steps do with `driver.fabricManager: true`), or let the GPU "
    "Operator's driver container run it."
)


def check(pod: PodSpec, ctx: LintContext) -> Iterator[Hit]:
    if pod.system_component:
        return
    regular, init = container_asks(pod)
    if not any(ask.amounts for ask in regular + init):
        return
    asked = sum(ask.get(GPU) for ask in regular)
    found = ctx.set_fact(nvswitch.evidence)
    if found.container:
        return
    if ctx.cluster is not None:
        yield from _from_spec(pod, ctx.cluster)
    elif not found.operator_driver:
        yield from _from_labels(pod, int(asked))


def _from_spec(pod: PodSpec, cluster: ClusterFacts) -> Iterator[Hit]:
    boards = [
        p
        for p in reachable_pools(pod, cluster)
        if p.driver_source == "host" and not p.fabric_manager and p.gpu.on_nvswitch(p.gpus)
    ]
    if boards:
        names = ", ".join(str(p) for p in boards)
        yield Hit(
            pod.resource,
            (*pod.path, "containers"),
            f"{subject(pod)} asks for GPUs on NVSwitch boards ({names}) whose host driver runs without NVIDIA "
            f"Fabric Manager (`driver.fabricManager: false` in {cluster.spec_file}) and nothing in the set runs it: "
            "CUDA fails to initialise on every GPU until it has configured the NVSwitches",
            fix=FIX,
        )


def _from_labels(pod: PodSpec, asked: int) -> Iterator[Hit]:
    boards = nvswitch.board_gpus()
    tests = [t for t in node_label_tests(pod) if t.required and t.operator == "In"]
    counts = [int(v) for t in tests if t.key == COUNT for v in t.values if v.isdigit()]
    for test in tests:
        if test.key != PRODUCT:
            continue
        for product in test.values:
            board = boards.get(product)
            if board is not None and (asked >= board or any(count >= board for count in counts)):
                yield Hit(
                    pod.resource,
                    test.path,
                    f"{subject(pod)} runs on {product} nodes with {board} GPUs, an NVSwitch board, and nothing in "
                    "the set runs NVIDIA Fabric Manager (no GPU Operator driver container, no Fabric Manager "
                    "container), and the set says nothing of the hosts (assumed: no `nvidia-fabricmanager` service "
                    "there): with a host driver, CUDA fails to initialise until that service has configured the NVSwitches",
                    fix=FIX,
                    severity=Severity.WARNING,
                )
                return


RULE = Rule("GS044", "pod", check, set_fact=nvswitch.evidence)
