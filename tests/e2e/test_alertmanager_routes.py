"""Alertmanager's routes as the real chart renders them, routed by the real ``amtool``.

kube-prometheus-stack merges gpustack's ``alertmanager.config`` over its own default (Helm merges
maps, replaces lists); the Secret it renders is what Alertmanager loads. ``amtool check-config``
validates it and ``amtool config routes test`` names the receivers a label set reaches; the real
Alertmanager, fed the same config, shows which alerts share a notification. Debian's
prometheus-alertmanager package brings both (``.ci/run`` installs it); without them the tests are
skipped for a developer and fail under CI=true. Debian's amtool (0.25) predates the webhook's
``url_file`` (Alertmanager 0.26, older than the chart's Alertmanager), so the test copy keeps each
receiver's name only: routing reads names, and the route tree is checked as rendered.
"""

from __future__ import annotations

import base64
import json
import shutil
import socket
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml
from real_charts import Helm, objects, unavailable
from render_helpers import REPO, render_file, write_spec

from gpustack.render.components import alert_routing
from gpustack.render.components.alert_series import NODE

pytestmark = pytest.mark.e2e

PAGER = {"type": "pagerduty", "secretName": "pd", "secretKey": "key"}
CHAT = {"type": "slack", "secretName": "slack", "secretKey": "url"}
# What the rendered alerts carry (alerts.py, xid.py; kube-prometheus's own rules for the rest).
XID_79 = {"alertname": "GPUXidRestartNode", "severity": "critical", "xid": "79", "xid_action": "RESTART_BM", NODE: "gpu-a"}
XID_13 = {"alertname": "GPUXidApplicationFault", "severity": "warning", "xid": "13", "xid_action": "RESTART_APP", NODE: "gpu-a"}
HOT = {"alertname": "GPUHighTemperature", "severity": "warning", NODE: "gpu-a", "gpu": "0"}
UNDERFILLED = {"alertname": "GPUBusyButUnderfilled", "severity": "info", "namespace": "monitoring", NODE: "gpu-a"}
INHIBITOR = {"alertname": "InfoInhibitor", "severity": "none", "namespace": "monitoring"}
WATCHDOG = {"alertname": "Watchdog", "severity": "none"}
EXPORTER_DOWN = {"alertname": "GPUExporterDown", "severity": "critical", "namespace": "monitoring", NODE: "gpu-b"}


@pytest.fixture(scope="module")
def amtool() -> str:
    found = shutil.which("amtool")
    if not found:
        unavailable("no amtool (Debian's prometheus-alertmanager package; .ci/run installs it)")
    return str(found)


def alertmanager_config(helm_binary: str, spec: Path, work: Path) -> Path:
    """alertmanager.yaml as kube-prometheus-stack renders it into Alertmanager's Secret."""
    rendered, _ = render_file(spec)
    [release] = [r for r in rendered.releases if r.chart == "kube-prometheus-stack"]
    helm = Helm(helm_binary, rendered.ctx.stack.spec.cluster.minor)
    [secret] = [
        o for o in objects(helm.template(release, release.values, work))
        if o["kind"] == "Secret" and "alertmanager.yaml" in o.get("data", {})
    ]
    config = yaml.safe_load(base64.b64decode(secret["data"]["alertmanager.yaml"]))
    config["receivers"] = [{"name": receiver["name"]} for receiver in config["receivers"]]
    path = work / f"{spec.stem}-alertmanager.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def routed(amtool: str, config: Path, labels: dict[str, str]) -> list[str]:
    run = subprocess.run(
        [amtool, "config", "routes", "test", f"--config.file={config}", *(f"{k}={v}" for k, v in labels.items())],
        capture_output=True, text=True, check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout.strip().split(",")


def checked(amtool: str, config: Path) -> dict[str, Any]:
    run = subprocess.run([amtool, "check-config", str(config)], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    return yaml.safe_load(config.read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("spec", "warnings"),
    [
        ({"receiver": PAGER, "warningReceiver": CHAT}, alert_routing.WARNINGS),
        # One receiver only: warnings reach it too, as the daily digest (the README says so).
        ({"receiver": PAGER}, alert_routing.PAGING),
    ],
    ids=["two-receivers", "one-receiver"],
)
def test_critical_alerts_page_and_the_rest_does_not(helm_binary: str, amtool: str, tmp_path: Path, spec, warnings):
    config = alertmanager_config(helm_binary, Path(write_spec(tmp_path, monitoring=spec)), tmp_path)
    loaded = checked(amtool, config)
    assert routed(amtool, config, XID_79) == [alert_routing.PAGING]
    assert routed(amtool, config, EXPORTER_DOWN) == [alert_routing.PAGING]
    for labels in (XID_13, HOT, UNDERFILLED):
        assert routed(amtool, config, labels) == [warnings], labels["alertname"]
    for labels in (INHIBITOR, WATCHDOG):
        assert routed(amtool, config, labels) == [alert_routing.NULL], labels["alertname"]
    # The chart's inhibition rules survive the merge (gpustack sets only the route and receivers).
    assert any(rule.get("target_matchers") == ["severity = info"] for rule in loaded["inhibit_rules"])


def test_two_nodes_gpu_alerts_are_two_incidents(helm_binary: str, amtool: str, tmp_path: Path):
    """PagerDuty's deduplication key is Alertmanager's group key: the paging route's group_by must
    tell nodes apart, and the GPU alerts carry no namespace, only the node."""
    config = alertmanager_config(helm_binary, REPO / "examples" / "kubeadm-mig-fleet.yaml", tmp_path)
    route = checked(amtool, config)["route"]
    [paging] = [r for r in route["routes"] if r["receiver"] == alert_routing.PAGING]
    nodes = (XID_79, XID_79 | {NODE: "gpu-b"})
    assert len({group_key(paging["group_by"], labels) for labels in nodes}) == 2
    # The chart's own group_by: [namespace] would have made them one.
    assert len({group_key(["namespace"], labels) for labels in nodes}) == 1


def group_key(group_by: list[str], labels: dict[str, str]) -> tuple[str, ...]:
    return tuple(labels.get(name, "") for name in group_by)


def test_an_example_with_a_webhook_routes_through_the_chart(helm_binary: str, amtool: str, tmp_path: Path):
    config = alertmanager_config(helm_binary, REPO / "examples" / "kubeadm-hgx-h100.yaml", tmp_path)
    checked(amtool, config)
    assert routed(amtool, config, XID_79) == [alert_routing.PAGING]
    assert routed(amtool, config, WATCHDOG) == [alert_routing.NULL]


@pytest.fixture(scope="module")
def alertmanager_binary() -> str:
    found = shutil.which("prometheus-alertmanager") or shutil.which("alertmanager")
    if not found:
        unavailable("no alertmanager (Debian's prometheus-alertmanager package; .ci/run installs it)")
    return str(found)


class Notifications(BaseHTTPRequestHandler):
    """A webhook receiver that keeps each notification's receiver, group key and alert names."""

    received: list[dict[str, Any]] = []

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.received.append(
            {"receiver": body["receiver"], "groupKey": body["groupKey"], "nodes": sorted(a["labels"].get(NODE, "") for a in body["alerts"])}
        )
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def running(alertmanager_binary: str, helm_binary: str, tmp_path: Path) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """Alertmanager with the chart's config for a PagerDuty-and-Slack spec, each receiver a local
    webhook, and its waits shortened to a second (the grouping and the routes are what is tested)."""
    config = yaml.safe_load(alertmanager_config(
        helm_binary, Path(write_spec(tmp_path, monitoring={"receiver": PAGER, "warningReceiver": CHAT})), tmp_path
    ).read_text(encoding="utf-8"))
    hook = ThreadingHTTPServer(("127.0.0.1", 0), Notifications)
    Notifications.received = []
    threading.Thread(target=hook.serve_forever, daemon=True).start()
    for receiver in config["receivers"]:
        if receiver["name"] != alert_routing.NULL:
            receiver["webhook_configs"] = [{"url": f"http://127.0.0.1:{hook.server_port}/", "send_resolved": False}]
    config["route"] |= {"group_wait": "1s", "group_interval": "1s"}
    path = tmp_path / "alertmanager.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    address = f"127.0.0.1:{free_port()}"
    process = subprocess.Popen(
        [alertmanager_binary, f"--config.file={path}", f"--storage.path={tmp_path / 'data'}",
         f"--web.listen-address={address}", "--cluster.listen-address="],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        wait_until(lambda: ready(address))
        yield address, Notifications.received
    finally:
        process.terminate()
        process.wait(timeout=10)
        hook.shutdown()


def ready(address: str) -> bool:
    try:
        with urllib.request.urlopen(f"http://{address}/-/ready", timeout=1) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


def wait_until(condition: Any, seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.2)


def test_alertmanager_pages_once_per_node_and_digests_warnings(running):
    """PagerDuty's deduplication key is the group key
    (https://github.com/prometheus/alertmanager/blob/main/notify/pagerduty/pagerduty.go): two
    nodes' XID 79 must be two groups, where the chart's group_by: [namespace] made one."""
    address, received = running
    alerts = [XID_79, XID_79 | {NODE: "gpu-b"}, XID_13, XID_13 | {NODE: "gpu-b"}, INHIBITOR, WATCHDOG]
    request = urllib.request.Request(
        f"http://{address}/api/v2/alerts", data=json.dumps([{"labels": a} for a in alerts]).encode(),
        headers={"Content-Type": "application/json"}, method="POST",
    )
    with urllib.request.urlopen(request, timeout=5) as answer:
        assert answer.status == 200
    wait_until(lambda: len(received) >= 3)
    time.sleep(3)  # room for a notification that should not come
    pages = [n for n in received if n["receiver"] == alert_routing.PAGING]
    assert sorted(n["nodes"] for n in pages) == [["gpu-a"], ["gpu-b"]]
    assert len({n["groupKey"] for n in pages}) == 2
    [digest] = {n["groupKey"]: n for n in received if n["receiver"] == alert_routing.WARNINGS}.values()
    assert digest["nodes"] == ["gpu-a", "gpu-b"]
    assert {n["receiver"] for n in received} == {alert_routing.PAGING, alert_routing.WARNINGS}
