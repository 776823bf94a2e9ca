"""A real Prometheus scrapes a stand-in DCGM Exporter on loopback: the exported_* renaming is its own.

The stand-in serves one series as dcgm-exporter writes it for a GPU a pod uses (its own
``namespace``/``pod``/``container``); the scrape job carries the target labels
prometheus-operator sets for a ServiceMonitor endpoint, with ``honor_labels: false`` as both
exporter ServiceMonitors have it. What Prometheus stores must be what cluster_series feeds the
promtool tier. Debian's prometheus package brings the server; skipped without it (failed in CI).
"""

from __future__ import annotations

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

import pytest
from alert_cases import TRAINER
from cluster_series import Scrape, Slice, labels_of, node_name
from promtool_support import require

from gpustack.render.components.alert_series import NODE, NODE_RELABELING

SCRAPE = Scrape("dcgm-exporter", "Hostname")
PIECE = Slice("n1", 0, "NVIDIA L4", pods=(TRAINER,))


def exporter_text() -> str:
    """The exporter's own exposition: its labels before Prometheus adds the target's."""
    target = set(SCRAPE.target("n1"))
    labels = {k: v for k, v in labels_of(SCRAPE.series("X", PIECE)[0]).items() if k not in target}
    own = {k.removeprefix("exported_"): v for k, v in labels.items()}
    body = ",".join(f'{k}="{v}"' for k, v in own.items())
    return f"# TYPE DCGM_FI_DEV_GPU_TEMP gauge\nDCGM_FI_DEV_GPU_TEMP{{{body}}} 64\n"


class _Exporter(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        payload = exporter_text().encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def exporter() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Exporter)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def _config(target: str) -> dict:
    """One scrape job as prometheus-operator writes a ServiceMonitor endpoint's: honor_labels false, the
    target labels namespace/pod/container/service/endpoint/job set on the target
    (https://prometheus-operator.dev/docs/api-reference/api/#monitoring.coreos.com/v1.Endpoint), and the
    rendered relabeling of the pod's node name, which the operator's endpoints discovery supplies as
    __meta_kubernetes_pod_node_name (here a static label of the target)."""
    target_labels = {k: v for k, v in SCRAPE.target("n1").items() if k not in ("job", "instance", NODE)}
    relabel = {
        "source_labels": NODE_RELABELING["sourceLabels"],
        "target_label": NODE_RELABELING["targetLabel"],
        "action": NODE_RELABELING["action"],
    }
    return {
        "global": {"scrape_interval": "1s"},
        "scrape_configs": [
            {
                "job_name": SCRAPE.job,
                "honor_labels": False,
                "static_configs": [
                    {
                        "targets": [target],
                        "labels": target_labels | {"__meta_kubernetes_pod_node_name": node_name("n1")},
                    }
                ],
                # instance as the pod's address, the way the operator's endpoints discovery names it.
                "relabel_configs": [relabel, {"target_label": "instance", "replacement": SCRAPE.instance("n1")}],
            }
        ],
    }


def test_prometheus_renames_the_workload_labels_as_the_fixtures_say(exporter: str, tmp_path: Path):
    binary = require(shutil.which("prometheus"), "prometheus")
    (tmp_path / "prometheus.json").write_text(json.dumps(_config(exporter)), encoding="utf-8")
    port = _free_port()
    server = subprocess.Popen(
        [binary, f"--config.file={tmp_path / 'prometheus.json'}", f"--storage.tsdb.path={tmp_path / 'data'}",
         f"--web.listen-address=127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        stored = _first_series(port, "DCGM_FI_DEV_GPU_TEMP")
    finally:
        server.terminate()
        server.wait(timeout=30)
    expected = labels_of(SCRAPE.series("DCGM_FI_DEV_GPU_TEMP", PIECE)[0])
    assert stored == {"__name__": "DCGM_FI_DEV_GPU_TEMP", **expected}
    assert (stored["exported_pod"], stored["pod"]) == (TRAINER.pod, "dcgm-exporter-n1")
    # The node the alerts join on is Kubernetes' name (FQDN), not the exporter's short host name.
    assert (stored[NODE], stored["Hostname"]) == (node_name("n1"), "n1")


def _first_series(port: int, metric: str) -> dict[str, str]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/query?query={metric}", timeout=5) as reply:
                result = json.load(reply)["data"]["result"]
            if result:
                return result[0]["metric"]
        except OSError:
            pass
        time.sleep(0.5)
    raise AssertionError(f"Prometheus stored no {metric} within a minute")
