"""The fake kubelet: `python -m tests.cluster.kubelet STATE` runs beside the control plane.

Each round (about a second) it reads the cluster and, for every node of the harness:

- runs the node's agents (tests/cluster/agents/) over the pods that run there, and writes what
  they publish: node labels, extended resources, ResourceSlices;
- takes each pod bound to the node through a kubelet's stages (tests/cluster/refusals.py):
  a pod that a real kubelet would refuse stays Pending with the real reason in its status and a
  Warning event, and is tried again next round (a missing Secret may appear); a container that
  exits ends as it would; a Job's pod completes. The container commands of a Job that the
  harness can run for real (tests/cluster/runner.py) run, against the API server.

Nodes the state's ``machines.json`` does not list (tests/differential declares its nodes'
labels and resources itself) run every pod bound to them, as the scheduler placed it. A pod
being deleted is removed at once (the kubelet's part of graceful deletion). It also stands in
for a storage provisioner: each pending PersistentVolumeClaim gets a PersistentVolume.
"""

from __future__ import annotations

import datetime
import itertools
import json
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from tests.cluster import refusals, runner, toolkit
from tests.cluster.agents import device_plugin, dra
from tests.cluster.agents import node as node_agents
from tests.cluster.agents.world import NodeMemory, Published, World
from tests.cluster.api import Api, ApiError
from tests.cluster.nodes import POOL_LABEL, FakeNode, from_json

ROUND_SECONDS = 1.0
RETRY_SECONDS = 5.0  # before a failed container's command runs again (the kubelet's back-off, shortened)
CUSTOM = {"ClusterPolicy": "/apis/nvidia.com/v1/clusterpolicies",
          "NodeFeatureRule": "/apis/nfd.k8s-sigs.io/v1alpha1/nodefeaturerules"}
SLICES = "/apis/resource.k8s.io/v1/resourceslices"


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def load_machines(state: Path) -> dict[str, FakeNode]:
    path = state / "machines.json"
    return {n["name"]: from_json(n) for n in json.loads(path.read_text())} if path.is_file() else {}


class Kubelet:
    def __init__(self, api: Api, state: Path) -> None:
        self.api, self.state = api, state
        self.machines = load_machines(state)
        self.memory = {name: NodeMemory() for name in self.machines}
        self.published: dict[str, Published] = {}
        self.labelled: dict[str, set[str]] = {name: set() for name in self.machines}  # keys the agents set
        self.addresses = (f"10.244.{n // 250}.{n % 250 + 1}" for n in itertools.count())
        self.pod_ips: dict[str, str] = {}
        self.events: set[tuple[str, str]] = set()
        self.tried: dict[str, float] = {}  # pod uid → when its commands last ran
        self.logged: set[str] = set()

    # --- one round -------------------------------------------------------------------------------
    def round(self) -> None:
        pods = self.api.items("/api/v1/pods", fieldSelector="spec.nodeName!=")
        nodes = {n["metadata"]["name"]: n for n in self.api.items("/api/v1/nodes", labelSelector=POOL_LABEL)}
        configmaps = {(c["metadata"]["namespace"], c["metadata"]["name"]): c.get("data") or {}
                      for c in self.api.items("/api/v1/configmaps")}
        secrets = {(s["metadata"]["namespace"], s["metadata"]["name"]): set((s.get("data") or {}).keys())
                   for s in self.api.items("/api/v1/secrets")}
        classes = {r["metadata"]["name"]: r["handler"] for r in self.api.items("/apis/node.k8s.io/v1/runtimeclasses")}
        objects = {kind: self._custom(path) for kind, path in CUSTOM.items()}
        by_node: dict[str, list[dict[str, Any]]] = {}
        for pod in pods:
            by_node.setdefault(pod["spec"]["nodeName"], []).append(pod)
        for name, fake in self.machines.items():
            if name not in nodes:
                continue
            world = World(fake, nodes[name]["metadata"].get("labels", {}), by_node.get(name, []), pods, configmaps,
                          objects, self.memory[name])
            self.published[name] = node_agents.publish(world)
            for problem in self.published[name].problems:
                self._log_once(f"{name}: {problem}")
            self._sync_node(nodes[name], fake, self.published[name])
            self._sync_slices(name, self.published[name])
        for name, handler in {k: v for p in self.published.values() for k, v in p.runtime_classes.items()}.items():
            if name not in classes:
                self._create_runtime_class(name, handler)
                classes[name] = handler
        for pod in pods:
            node_name = pod["spec"]["nodeName"]
            if node_name not in nodes:
                continue
            fake = self.machines.get(node_name)
            view = refusals.Node(fake, self.published.get(node_name, Published()), classes, secrets, configmaps) if fake else None
            self._handle(pod, nodes[node_name], view)

    def _log_once(self, line: str) -> None:
        """Why an agent does not act on a node, in the kubelet's log (state/logs/kubelet.log)."""
        if line not in self.logged:
            self.logged.add(line)
            print(f"kubelet: {line}", file=sys.stderr, flush=True)

    def _create_runtime_class(self, name: str, handler: str) -> None:
        try:
            self.api.create("/apis/node.k8s.io/v1/runtimeclasses", {
                "apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": name}, "handler": handler})
        except ApiError as error:
            if error.code != 409:
                raise

    def _custom(self, path: str) -> list[dict[str, Any]]:
        try:
            return self.api.items(path)
        except ApiError:
            return []  # the CRD is not installed

    def _sync_node(self, node: dict[str, Any], fake: FakeNode, published: Published) -> None:
        labels = node["metadata"].get("labels", {})
        stale = self.labelled[fake.name] - set(published.labels)
        label_patch = {k: v for k, v in published.labels.items() if labels.get(k) != v}
        label_patch |= {k: None for k in stale if k in labels and k not in fake.labels}
        self.labelled[fake.name] = set(published.labels)
        if label_patch:
            self.api.merge_patch(f"/api/v1/nodes/{fake.name}", {"metadata": {"labels": label_patch}})
        wanted = {**fake.allocatable, "pods": "110", "ephemeral-storage": "1Ti",
                  **{k: str(v) for k, v in published.resources.items()}}
        have = node["status"].get("allocatable", {})
        if have != wanted:
            gone = {k: None for k in have if k not in wanted}
            self.api.merge_patch(f"/api/v1/nodes/{fake.name}/status",
                                 {"status": {"allocatable": {**wanted, **gone}, "capacity": {**wanted, **gone}}})

    def _sync_slices(self, name: str, published: Published) -> None:
        have = {s["spec"]["driver"]: s for s in self.api.items(SLICES, fieldSelector=f"spec.nodeName={name}",
                                                                labelSelector=dra.PUBLISHED_LABEL)}
        for driver, devices in published.slices.items():
            if driver not in have:
                self.api.create(SLICES, dra.resource_slice(name, driver, devices))
        for driver, found in have.items():
            if driver not in published.slices:
                self.api.request("DELETE", f"{SLICES}/{found['metadata']['name']}")

    # --- pods ------------------------------------------------------------------------------------
    def _handle(self, pod: dict[str, Any], node: dict[str, Any], view: refusals.Node | None) -> None:
        meta, status = pod["metadata"], pod.get("status", {})
        path = f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}"
        try:
            if meta.get("deletionTimestamp"):
                self.api.request("DELETE", path, {"gracePeriodSeconds": 0, "preconditions": {"uid": meta["uid"]}})
                return
            phase = status.get("phase", "Pending")
            settled = phase in ("Succeeded", "Failed") or (
                phase == "Running" and all(c.get("ready") for c in status.get("containerStatuses", [])))
            if settled or time.monotonic() - self.tried.get(meta["uid"], -RETRY_SECONDS) < RETRY_SECONDS:
                return
            wanted = self._status(pod, node, view)
            if _digest(wanted) != _digest(status):
                self.api.merge_patch(f"{path}/status", {"status": wanted})
        except ApiError as error:
            if error.code not in (404, 409):  # gone already, or changed meanwhile: the next round sees it again
                print(f"kubelet: {error}", file=sys.stderr, flush=True)

    def _status(self, pod: dict[str, Any], node: dict[str, Any], view: refusals.Node | None) -> dict[str, Any]:
        spec, now = pod["spec"], _now()
        base = {"hostIP": node["status"]["addresses"][0]["address"], "startTime": now,
                "hostIPs": [{"ip": node["status"]["addresses"][0]["address"]}]}
        init = [c for c in spec.get("initContainers", []) if c.get("restartPolicy") != "Always"]
        sidecars = [c for c in spec.get("initContainers", []) if c.get("restartPolicy") == "Always"]
        if view is None:
            return self._running(pod, base, {}, init)
        labels = {**node["metadata"].get("labels", {}), **view.published.labels}  # with this round's agent labels
        blocked = refusals.sandbox(pod, view) or refusals.mounts(pod, view)
        if blocked:
            self._event(pod, blocked.event, blocked.message)
            return _pending(pod, base, blocked.waiting, blocked.message)
        done_init = []
        for container in init:
            config = refusals.container_config(pod, container, view)
            if config:
                self._event(pod, config.event, config.message)
                return _pending(pod, base, config.waiting, config.message, done_init)
            end = refusals.run(pod, container, view, self._agent_failure(view, labels))
            if end is None:
                end = runner.run(self.api, self.state, pod, container)
            if end is not None and end.code:
                self.tried[pod["metadata"]["uid"]] = time.monotonic()
                self._event(pod, "BackOff", f"Back-off restarting failed container {container['name']}: {end.message}")
                failed = spec.get("restartPolicy") == "Never" and _owner(pod) == "Job"
                return _init_failed(pod, base, done_init, container, end, failed)
            done_init.append(container)
        ends: dict[str, refusals.Exit | None] = {}
        for container in [*sidecars, *spec["containers"]]:
            config = refusals.container_config(pod, container, view)
            if config:
                self._event(pod, config.event, config.message)
                return _pending(pod, base, config.waiting, config.message, init)
            ends[container["name"]] = refusals.run(pod, container, view, self._agent_failure(view, labels))
            if ends[container["name"]] is None and _owner(pod) == "Job":
                ends[container["name"]] = runner.run(self.api, self.state, pod, container)
        if any(e is not None and e.code for e in ends.values()):
            self.tried[pod["metadata"]["uid"]] = time.monotonic()
            for name, end in ends.items():
                if end is not None and end.code:
                    self._event(pod, "BackOff", f"Back-off restarting failed container {name}: {end.message}")
        return self._running(pod, base, ends, init)

    def _agent_failure(self, view: refusals.Node, labels: dict[str, str]):  # noqa: ANN202 - refusals.run's callback
        """Why an agent's container fails on the node whose labels are ``labels`` (this round's)."""
        def failure(pod: dict[str, Any], container: dict[str, Any], handler: str) -> str | None:
            if not (device_plugin.is_plugin(pod) or device_plugin.is_gfd(pod)):
                return None
            world = World(view.fake, labels, [], [], view.configmaps, {}, self.memory[view.fake.name],
                          view.fake.host.driver or view.published.driver)
            reached = handler == "nvidia" and bool(toolkit.visible(pod, container, view))
            return device_plugin.plugin_failure(world, pod, container, reached)
        return failure

    def _running(self, pod: dict[str, Any], base: dict[str, Any], ends: dict[str, refusals.Exit | None],
                 init: list[dict[str, Any]]) -> dict[str, Any]:
        spec, now = pod["spec"], _now()
        uid = pod["metadata"]["uid"]
        ip = base["hostIP"] if spec.get("hostNetwork") else self.pod_ips.setdefault(uid, next(self.addresses))
        completes = _owner(pod) == "Job"
        failed = any(e is not None and e.code for e in ends.values())
        if completes and (not failed or spec.get("restartPolicy") == "Never"):
            phase = "Failed" if failed else "Succeeded"
            statuses = [_container(c, {"terminated": _terminated(ends.get(c["name"]), now)}) for c in spec["containers"]]
            return {**base, "phase": phase, "podIP": ip, "podIPs": [{"ip": ip}], "containerStatuses": statuses,
                    "initContainerStatuses": [_container(c, {"terminated": _terminated(None, now)}) for c in init],
                    "conditions": _conditions(now, ready=False)}
        statuses = []
        for container in [*spec.get("initContainers", []), *spec["containers"]]:
            if container in init:
                continue
            end = ends.get(container["name"])
            state = ({"waiting": {"reason": "CrashLoopBackOff", "message": end.message}} if end is not None and end.code
                     else {"running": {"startedAt": now}})
            entry = _container(container, state)
            if end is not None and end.code:
                entry["lastState"] = {"terminated": _terminated(end, now)}
            statuses.append((container, entry))
        main = [e for c, e in statuses if c in spec["containers"]]
        side = [e for c, e in statuses if c not in spec["containers"]]
        return {**base, "phase": "Running", "podIP": ip, "podIPs": [{"ip": ip}], "containerStatuses": main,
                "initContainerStatuses": [_container(c, {"terminated": _terminated(None, now)}) for c in init] + side,
                "conditions": _conditions(now, ready=all(e["ready"] for e in main + side))}

    def _event(self, pod: dict[str, Any], reason: str, message: str) -> None:
        """A Warning event about the pod, once per reason and message."""
        meta = pod["metadata"]
        if (meta["uid"], message) in self.events:
            return
        self.events.add((meta["uid"], message))
        try:
            self.api.create(f"/api/v1/namespaces/{meta['namespace']}/events", {
                "apiVersion": "v1", "kind": "Event", "type": "Warning", "reason": reason, "message": message,
                "metadata": {"name": f"{meta['name']}.{uuid.uuid4().hex[:12]}", "namespace": meta["namespace"]},
                "involvedObject": {"kind": "Pod", "namespace": meta["namespace"], "name": meta["name"], "uid": meta["uid"]},
                "source": {"component": "kubelet", "host": pod["spec"]["nodeName"]},
                "firstTimestamp": _now(), "lastTimestamp": _now(), "count": 1})
        except ApiError as error:
            print(f"kubelet: event: {error}", file=sys.stderr, flush=True)

    # --- loops -----------------------------------------------------------------------------------
    def loop(self) -> None:
        while True:
            started = time.monotonic()
            try:
                self.round()
            except Exception as error:  # noqa: BLE001 - a cut connection, a refusal: the next round tries again
                print(f"kubelet: {error!r}", file=sys.stderr, flush=True)
            time.sleep(max(0.0, ROUND_SECONDS - (time.monotonic() - started)))

    def provision(self) -> None:
        """Bind a PersistentVolume to each pending claim, as a dynamic provisioner would."""
        while True:
            try:
                for claim in self.api.items("/api/v1/persistentvolumeclaims"):
                    if claim.get("status", {}).get("phase") == "Pending" and not claim["spec"].get("volumeName"):
                        self._volume_for(claim)
            except Exception as error:  # noqa: BLE001 - the provisioner must outlive any one failure
                print(f"kubelet: {error!r}", file=sys.stderr, flush=True)
            time.sleep(1)

    def _volume_for(self, claim: dict[str, Any]) -> None:
        meta, spec = claim["metadata"], claim["spec"]
        try:
            self.api.create("/api/v1/persistentvolumes", {
                "apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": f"pv-{meta['uid']}"},
                "spec": {
                    "capacity": {"storage": spec["resources"]["requests"]["storage"]},
                    "accessModes": spec.get("accessModes", ["ReadWriteOnce"]),
                    "storageClassName": spec.get("storageClassName") or "",
                    "volumeMode": spec.get("volumeMode", "Filesystem"),
                    "hostPath": {"path": f"/var/lib/fake-volumes/{meta['uid']}"},
                    "claimRef": {"namespace": meta["namespace"], "name": meta["name"], "uid": meta["uid"]},
                },
            })
        except ApiError as error:
            if error.code != 409:
                raise


def _owner(pod: dict[str, Any]) -> str | None:
    return next((o["kind"] for o in pod["metadata"].get("ownerReferences", [])), None)


def _conditions(now: str, *, ready: bool) -> list[dict[str, str]]:
    true = ("PodReadyToStartContainers", "Initialized", "PodScheduled")
    return [{"type": t, "status": "True" if t in true or ready else "False", "lastTransitionTime": now}
            for t in (*true, "ContainersReady", "Ready")]


def _terminated(end: refusals.Exit | None, now: str) -> dict[str, Any]:
    if end is None or not end.code:
        message = {"message": end.termination} if end is not None and end.termination else {}
        return {"exitCode": 0, "reason": "Completed", **message, "startedAt": now, "finishedAt": now}
    return {"exitCode": end.code, "reason": end.reason, "message": end.message, "startedAt": now, "finishedAt": now}


def _pending(pod: dict[str, Any], base: dict[str, Any], reason: str, message: str,
             done_init: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    waiting = {"waiting": {"reason": reason, "message": message}}
    done = done_init or []
    now = _now()
    return {**base, "phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "True", "lastTransitionTime": now},
                                                        {"type": "Ready", "status": "False", "reason": reason,
                                                         "message": message, "lastTransitionTime": now}],
            "containerStatuses": [_container(c, waiting) for c in pod["spec"]["containers"]],
            "initContainerStatuses": [_container(c, {"terminated": _terminated(None, now)} if c in done else waiting)
                                      for c in pod["spec"].get("initContainers", [])]}


def _init_failed(pod: dict[str, Any], base: dict[str, Any], done: list[dict[str, Any]], failed_container: dict[str, Any],
                 end: refusals.Exit, failed: bool) -> dict[str, Any]:
    now = _now()
    statuses = []
    for container in pod["spec"].get("initContainers", []):
        if container in done:
            statuses.append(_container(container, {"terminated": _terminated(None, now)}))
        elif container is failed_container:
            entry = _container(container, {"waiting": {"reason": "CrashLoopBackOff", "message": end.message}}
                               if not failed else {"terminated": _terminated(end, now)})
            entry["lastState"] = {"terminated": _terminated(end, now)}
            statuses.append(entry)
        else:
            statuses.append(_container(container, {"waiting": {"reason": "PodInitializing"}}))
    return {**base, "phase": "Failed" if failed else "Pending", "initContainerStatuses": statuses,
            "containerStatuses": [_container(c, {"waiting": {"reason": "PodInitializing"}}) for c in pod["spec"]["containers"]],
            "conditions": [{"type": "Initialized", "status": "False", "reason": "ContainersNotInitialized",
                            "message": f"containers with incomplete status: [{failed_container['name']}]",
                            "lastTransitionTime": now}]}


def _container(container: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    running = "running" in state
    return {"name": container["name"], "image": container.get("image", ""), "imageID": "",
            "containerID": f"containerd://{uuid.uuid5(uuid.NAMESPACE_OID, container['name']).hex}",
            "ready": running, "started": running, "restartCount": 0, "state": state}


def _digest(status: dict[str, Any]) -> Any:
    """What decides whether the status must be written again: phase, reasons and readiness."""
    def states(key: str) -> list[Any]:
        return [(c["name"], c.get("ready"), {k: (v.get("reason"), v.get("message")) for k, v in c["state"].items()})
                for c in status.get(key, [])]
    return status.get("phase"), states("containerStatuses"), states("initContainerStatuses")


def main(state: Path) -> None:
    kubelet = Kubelet(Api.from_state(state), state)
    threading.Thread(target=kubelet.provision, daemon=True).start()
    kubelet.loop()


if __name__ == "__main__":
    main(Path(sys.argv[1]))
