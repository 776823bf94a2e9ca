"""The fake kubelet: `python -m tests.cluster.kubelet STATE` runs beside the control plane.

For every pod bound to one of the harness's nodes it does what a kubelet would report once
the containers started: phase Running, the pod Ready, each container running (init containers
completed, sidecars running), an IP from the pod range. A pod being deleted is removed at once
(the kubelet's part of graceful deletion), so that Recreate rollouts and DaemonSet updates go on.
It also stands in for a storage provisioner: each PersistentVolumeClaim left pending gets a
PersistentVolume bound to it.
"""

from __future__ import annotations

import datetime
import itertools
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from tests.cluster.api import Api, ApiError
from tests.cluster.nodes import POOL_LABEL

WATCH_SECONDS = 30  # and then a fresh list: a pod missed in between is caught up


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class Kubelet:
    def __init__(self, api: Api) -> None:
        self.api = api
        self.nodes = {n["metadata"]["name"]: n for n in api.items("/api/v1/nodes", labelSelector=POOL_LABEL)}
        self.addresses = (f"10.244.{n // 250}.{n % 250 + 1}" for n in itertools.count())

    def handle(self, pod: dict[str, Any]) -> None:
        meta, spec = pod["metadata"], pod["spec"]
        node = self.node(spec.get("nodeName", ""))
        if node is None:
            return
        path = f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}"
        try:
            if meta.get("deletionTimestamp"):
                self.api.request("DELETE", path, {"gracePeriodSeconds": 0, "preconditions": {"uid": meta["uid"]}})
            elif pod.get("status", {}).get("phase", "Pending") == "Pending":
                self.api.merge_patch(f"{path}/status", {"status": self.running(pod, node)})
        except ApiError as error:
            if error.code not in (404, 409):  # gone already, or changed meanwhile: the watch brings it again
                print(f"kubelet: {error}", file=sys.stderr, flush=True)

    def node(self, name: str) -> dict[str, Any] | None:
        """The harness's node ``name``; nodes added after the start (tests/differential adds
        a batch at a time) are listed again when a pod is bound to one not seen yet."""
        if name and name not in self.nodes:
            self.nodes |= {n["metadata"]["name"]: n for n in self.api.items("/api/v1/nodes", labelSelector=POOL_LABEL)}
        return self.nodes.get(name)

    def running(self, pod: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
        now, spec = _now(), pod["spec"]
        ip = next(self.addresses)
        host_ip = node["status"]["addresses"][0]["address"]
        if spec.get("hostNetwork"):
            ip = host_ip
        conditions = [{"type": t, "status": "True", "lastTransitionTime": now}
                      for t in ("PodReadyToStartContainers", "Initialized", "ContainersReady", "Ready", "PodScheduled")]
        return {
            "phase": "Running", "conditions": conditions, "hostIP": host_ip, "hostIPs": [{"ip": host_ip}],
            "podIP": ip, "podIPs": [{"ip": ip}], "startTime": now,
            "containerStatuses": [_container(c, {"running": {"startedAt": now}}) for c in spec["containers"]],
            "initContainerStatuses": [
                _container(c, {"running": {"startedAt": now}} if c.get("restartPolicy") == "Always" else
                           {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": now, "finishedAt": now}})
                for c in spec.get("initContainers", [])
            ],
        }

    def watch_pods(self) -> None:
        """List then watch every bound pod, handling each; list again whenever a watch ends."""
        while True:
            try:
                self._list_and_watch()
            except Exception as error:  # noqa: BLE001 - a cut stream (IncompleteRead), a refusal: list again
                print(f"kubelet: {error!r}", file=sys.stderr, flush=True)
                time.sleep(0.5)

    def _list_and_watch(self) -> None:
        listed = self.api.get("/api/v1/pods", fieldSelector="spec.nodeName!=")
        for pod in listed["items"]:
            self.handle(pod)
        events = self.api.watch("/api/v1/pods", WATCH_SECONDS, fieldSelector="spec.nodeName!=",
                                resourceVersion=listed["metadata"]["resourceVersion"])
        for event in events:
            if event["type"] in ("ADDED", "MODIFIED"):
                self.handle(event["object"])

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


def _container(container: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    running = "running" in state
    return {"name": container["name"], "image": container.get("image", ""), "imageID": "",
            "containerID": f"containerd://{uuid.uuid4().hex}",
            "ready": running, "started": running, "restartCount": 0, "state": state}


def main(state: Path) -> None:
    kubelet = Kubelet(Api.from_state(state))
    threading.Thread(target=kubelet.provision, daemon=True).start()
    kubelet.watch_pods()


if __name__ == "__main__":
    main(Path(sys.argv[1]))
