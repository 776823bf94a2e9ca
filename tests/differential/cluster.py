"""The scheduler's side: a batch of scenarios applied to one running control plane at once.

Scenarios share the cluster without meeting: each scenario's nodes carry the taint and label
``ISOLATION=<scenario>``, and only the *applied* copy of its pods gets the matching toleration
(``Equal`` on that key and value) and nodeSelector entry. Why this cannot change a verdict:
no spec of a scenario uses the key (it is neither a pool label nor a pool taint), so the
toleration tolerates the isolation taint alone (a toleration matches a taint of its own key,
https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/), and the
selector entry holds on every node of the scenario (nodeSelector is ANDed with the rest,
https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/); the lint reads the
workloads as generated, and tests/differential/test_scheduler_agreement.py checks that the
applied copies draw the same verdicts.

The scheduler's FailedScheduling message counts nodes by the first filter each fails
(``0/9 nodes are available: 2 Insufficient nvidia.com/gpu, 7 node(s) had untolerated
taint(s)``). Other scenarios' nodes fail on the isolation taint (TaintToleration runs before
NodeAffinity), or, for a pod that tolerates every taint, on the isolation selector: they are
taken off that count, and what is left is about the scenario's own nodes.
"""

from __future__ import annotations

import copy
import re
import time
from collections import Counter
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from gpustack.lint.facts.pools import GPU_PRESENT_LABEL, NFD_GPU_LABEL, PCI_LABEL_PREFIX
from gpustack.spec.models import GpuStack
from tests.cluster import nodes
from tests.cluster.agents import dra as dra_agent
from tests.differential import declared
from tests.cluster.api import Api, ApiError
from tests.differential.declared import DeclaredNode
from tests.differential import dra
from tests.differential.scenarios import Scenario
from tests.differential.verdicts import CEL_ERROR, SELECTOR, TAINT

ISOLATION = "differential.gpustack.test/scenario"
KUBELET_VERSION = "v1.36.3"
DECIDE_SECONDS = 90  # for the scheduler to bind or give up on every pod of a batch (a busy machine)
PROGRESS_DEADLINE = 10  # seconds a Deployment may make no progress before its controller says so
UNBOUND_CLAIM = "PersistentVolumeClaim"
CLASSES = "/apis/resource.k8s.io/v1/deviceclasses"
SLICES = "/apis/resource.k8s.io/v1/resourceslices"
BUSY = (429, 500, 503, 504)  # the API server's answers when it is overloaded: worth another try
BUSY_RETRIES = 3  # a pod waiting for the provisioner: not decided yet
# GFD's labels (tests/differential/declared.gpu_labels): the standalone device plugin chart's GFD shares the
# plugin's node affinity, which gpustack renders to keep off HAMi's pools (gpustack/render/components).
GFD_PREFIXES = ("nvidia.com/gpu.", "nvidia.com/cuda.", "nvidia.com/mig", "nvidia.com/mps.")


@dataclass(frozen=True)
class Observed:
    """What the scheduler did with one pod: its node, or the reasons its own nodes refused it."""

    node: str | None
    reasons: Counter[str]  # reason text -> nodes of the scenario that gave it
    message: str

    @property
    def pending(self) -> bool:
        return self.node is None


def scenario_nodes(scenario: Scenario) -> list[DeclaredNode]:
    """The scenario's nodes as the harness models the node agents, with what the stack renders
    that the harness leaves open (it carries both configurations on purpose):

    - NFD's PCI label by vendor only: gpustack's NFD runs ``deviceLabelFields: [vendor]``
      (gpustack/render/components/nfd.py), so no ``pci-<class>_10de.present``;
    - ``nvidia.com/gpu.present`` only from the GPU Operator, which these stacks do not deploy;
    - no GFD labels on a pool HAMi serves (GFD_PREFIXES), nor anywhere when the stack deploys no
      device plugin (a DRA stack: GFD comes with the device plugin's chart,
      gpustack/render/components/device_plugin.py) or the plugin without GFD.
    """
    stack = GpuStack.model_validate(scenario.spec)
    hami = scenario.hami_pools()
    gfd = stack.spec.devicePlugin.enabled and stack.spec.devicePlugin.gfd.enabled
    found = []
    for node in declared.stack_nodes(stack):
        labels = {key: value for key, value in node.labels.items()
                  if not _unrendered(key, node.pool in hami or not gfd)}
        labels[ISOLATION] = scenario.name
        taints = [*node.taints, {"key": ISOLATION, "value": scenario.name, "effect": "NoSchedule"}]
        found.append(DeclaredNode(f"{scenario.name}-{node.name}", node.pool, labels, taints, node.allocatable,
                              dra.with_mig_devices(scenario, node)))
    return found


def _unrendered(key: str, without_gfd: bool) -> bool:
    if key.startswith(PCI_LABEL_PREFIX) and key != NFD_GPU_LABEL:
        return True
    if key == GPU_PRESENT_LABEL:
        return True
    return without_gfd and key.startswith(GFD_PREFIXES)


def pod_spec(workload: dict[str, Any]) -> dict[str, Any]:
    return workload["spec"]["template"]["spec"] if workload["kind"] == "Deployment" else workload["spec"]


def applied(scenario: Scenario, workload: dict[str, Any]) -> dict[str, Any]:
    """The copy of a workload that is applied: in the scenario's namespace, isolated; a
    Deployment gives up on progress after PROGRESS_DEADLINE (the lint reads neither)."""
    body = copy.deepcopy(workload)
    body["metadata"]["namespace"] = scenario.name
    if body["kind"] == "Deployment":
        body["spec"]["progressDeadlineSeconds"] = PROGRESS_DEADLINE
    spec = pod_spec(body)
    spec["nodeSelector"] = {**spec.get("nodeSelector", {}), ISOLATION: scenario.name}
    isolation = {"key": ISOLATION, "operator": "Equal", "value": scenario.name, "effect": "NoSchedule"}
    spec["tolerations"] = [*spec.get("tolerations", []), isolation]
    return body


def tolerates_everything(workload: dict[str, Any]) -> bool:
    return any(not t.get("key") and t.get("operator") == "Exists" and t.get("effect") in (None, "", "NoSchedule")
               for t in pod_spec(workload).get("tolerations", []))


class Batch:
    """Scenarios applied together: nodes, then namespaces and claims, then pods."""

    def __init__(self, api: Api, scenarios: list[Scenario], threads: int = 8) -> None:
        self.api = api
        self.scenarios = scenarios
        self.threads = threads
        self.own = {s.name: scenario_nodes(s) for s in scenarios}

    def _each(self, work: Any, items: Iterable[Any]) -> None:
        with ThreadPoolExecutor(self.threads) as pool:
            list(pool.map(work, items))

    def apply(self) -> None:
        for device_class in dra.DRIVER_CLASSES:  # shared by every DRA scenario, created once
            self._create(CLASSES, device_class, exists_ok=True)
        self._each(lambda body: self._create(CLASSES, body), [c for s in self.scenarios for c in dra.device_classes(s)
                                                               if c not in dra.DRIVER_CLASSES])
        self._each(self._node, [node for found in self.own.values() for node in found])
        self._each(self._namespace, self.scenarios)
        self._each(self._pod, [(s, w) for s in self.scenarios for w in s.workloads])

    def _create(self, path: str, body: dict[str, Any], exists_ok: bool = False) -> None:
        """Create, again after a refusal that says the server was too busy (a loaded machine:
        ``504 Timeout: request did not complete``); AlreadyExists then means the first landed."""
        for attempt in range(BUSY_RETRIES + 1):
            try:
                self.api.create(path, body)
                return
            except ApiError as error:
                if (attempt or exists_ok) and error.code == 409:
                    return
                if error.code not in BUSY or attempt == BUSY_RETRIES:
                    raise
                time.sleep(1 + attempt)

    def _node(self, node: DeclaredNode) -> None:
        body = nodes.node_object(node.name, node.labels, node.taints, node.allocatable, KUBELET_VERSION, "10.1.0.1")
        self._create("/api/v1/nodes", body)
        self.api.merge_patch(f"/api/v1/nodes/{node.name}/status", {"status": body["status"]})
        # The TaintNodesByCondition admission plugin adds node.kubernetes.io/not-ready: set them again.
        self.api.merge_patch(f"/api/v1/nodes/{node.name}", {"spec": {"taints": node.taints}})
        if node.gpus:
            self._create(SLICES, dra_agent.resource_slice(node.name, dra.DRIVER, node.gpus))

    def _namespace(self, scenario: Scenario) -> None:
        self._create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": scenario.name}})
        for claim in scenario.claims:
            group = "api/v1" if claim["kind"] == "PersistentVolumeClaim" else f"apis/{claim['apiVersion']}"
            self._create(f"/{group}/namespaces/{scenario.name}/{claim['kind'].lower()}s", claim)

    def _pod(self, item: tuple[Scenario, dict[str, Any]]) -> None:
        scenario, workload = item
        group = "apis/apps/v1" if workload["kind"] == "Deployment" else "api/v1"
        plural = f"{workload['kind'].lower()}s"
        self._create(f"/{group}/namespaces/{scenario.name}/{plural}", applied(scenario, workload))

    def observe(self) -> dict[tuple[str, str], Observed]:
        """(scenario, workload) → what the scheduler did, once it decided on every pod."""
        wanted = {(s.name, w["metadata"]["name"]) for s in self.scenarios for w in s.workloads if w["kind"] == "Pod"}
        decided: dict[tuple[str, str], dict[str, Any]] = {}
        deadline = time.monotonic() + DECIDE_SECONDS
        while True:
            for pod in self.api.items("/api/v1/pods", fieldSelector="metadata.namespace!=default"):
                key = (pod["metadata"]["namespace"], pod["metadata"]["name"])
                if key in wanted and _decided(pod):
                    decided[key] = pod
            if len(decided) == len(wanted):
                break
            if time.monotonic() > deadline:
                missing = sorted(wanted - decided.keys())
                raise AssertionError(f"the scheduler decided on no binding of {len(missing)} pods: {missing[:10]}")
            time.sleep(0.5)
        scenarios = {s.name: s for s in self.scenarios}
        return {key: self._observed(scenarios[key[0]], pod) for key, pod in decided.items()}

    def _observed(self, scenario: Scenario, pod: dict[str, Any]) -> Observed:
        node = pod["spec"].get("nodeName")
        if node:
            assert node.startswith(f"{scenario.name}-"), f"{scenario.name} pod landed on {node}"
            return Observed(node, Counter(), "")
        message = _unschedulable(pod)
        if CEL_ERROR in message:  # the DynamicResources filter gave up on the pod, not on a node
            return Observed(None, Counter({CEL_ERROR: len(self.own[scenario.name])}), message)
        total, reasons = parse_reasons(message)
        others = total - len(self.own[scenario.name])
        workload = next(w for w in scenario.workloads if w["metadata"]["name"] == pod["metadata"]["name"])
        category = SELECTOR if tolerates_everything(workload) else TAINT
        for reason in [r for r in reasons if category in r]:
            taken = min(others, reasons[reason])
            reasons[reason] -= taken
            others -= taken
        assert others == 0, f"{scenario.name}: {others} other nodes unaccounted for in {message!r}"
        return Observed(None, +reasons, message)

    def clean(self) -> None:
        """Remove the batch: pods at once (no kubelet grace), namespaces, nodes."""
        def remove(scenario: Scenario) -> None:
            self.api.delete(f"/api/v1/namespaces/{scenario.name}")  # no new pods there from now on
            self.api.delete(f"/api/v1/namespaces/{scenario.name}/pods", gracePeriodSeconds=0)

        self._each(remove, self.scenarios)
        for scenario in self.scenarios:
            try:
                self.api.delete("/api/v1/nodes", labelSelector=f"{ISOLATION}={scenario.name}")
            except ApiError as error:
                if error.code != 404:
                    raise
        gone = [f"{SLICES}/{node.name}-{dra.DRIVER}" for found in self.own.values() for node in found if node.gpus]
        gone += [f"{CLASSES}/{c['metadata']['name']}" for s in self.scenarios for c in dra.device_classes(s)
                 if c not in dra.DRIVER_CLASSES]
        self._each(self.api.delete, gone)


def _decided(pod: dict[str, Any]) -> bool:
    if pod["spec"].get("nodeName"):
        return True
    message = _unschedulable(pod)
    return bool(message) and UNBOUND_CLAIM not in message


def _unschedulable(pod: dict[str, Any]) -> str:
    """The scheduler's message of a pod it cannot place: its filters' per-node reasons, or a
    DRA selector's CEL runtime error (a ``SchedulerError``, retried with backoff and as
    FailedScheduling events, never resolved while the selector reads a name no device has)."""
    for condition in pod.get("status", {}).get("conditions", []):
        if condition["type"] != "PodScheduled":
            continue
        message = str(condition.get("message", ""))
        if condition.get("reason") == "Unschedulable" or (condition.get("reason") == "SchedulerError"
                                                          and CEL_ERROR in message):
            return message
    return ""


_SUMMARY = re.compile(r"^0/(\d+) nodes are available: (.*)$", re.S)
_ITEM = re.compile(r"^(\d+) (.*)$")


def parse_reasons(message: str) -> tuple[int, Counter[str]]:
    """The node count and the per-reason node counts of a FailedScheduling message.

    The summary ends at the first ". " (resource names have dots, never a dot and a space);
    what follows is the post-filters' words (preemption, DRA's "no new claims to deallocate").
    """
    match = _SUMMARY.match(message.strip())
    assert match, f"not a FailedScheduling summary: {message!r}"
    reasons: Counter[str] = Counter()
    for part in match.group(2).split(". ", 1)[0].rstrip(".").split(", "):
        item = _ITEM.match(part.strip())
        assert item, f"unexpected reason {part!r} in {message!r}"
        reasons[item.group(2)] += int(item.group(1))
    return int(match.group(1)), reasons
