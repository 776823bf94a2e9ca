"""A real Prometheus scrapes stand-in exporters on loopback: the exported_* renaming is its own.

The stand-in serves series as dcgm-exporter writes them (for a GPU a pod uses, its own
``namespace``/``pod``/``container``); the scrape job carries the target labels
prometheus-operator sets for a ServiceMonitor endpoint, with ``honor_labels: false`` as both
exporter ServiceMonitors have it, and the rendered relabeling of the pod's node name. What
Prometheus stores must be what cluster_series feeds the promtool tier. A second stand-in serves
HAMi's vGPU monitor, and the rendered HAMi rule is evaluated by that Prometheus. Debian's
prometheus package brings the server; skipped without it (failed in CI).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from alert_cases import TRAINER
from tests import loopback
from cluster_series import Scrape, Slice, hami_series, labels_of, node_name
from promtool_support import alerts_of, require

from gpustack.render.components import hami_monitoring
from gpustack.render.components.alert_series import NODE, NODE_RELABELING

SCRAPE = Scrape("dcgm-exporter", "Hostname")
PIECE = Slice("n1", 0, "NVIDIA L4", pods=(TRAINER,))
# Target labels prometheus-operator sets (https://prometheus-operator.dev/docs/api-reference/api/#monitoring.coreos.com/v1.Endpoint).
TARGET_LABELS = ("namespace", "pod", "container", "service", "endpoint", "job", "instance")


def exposition(metric: str, stored: dict[str, str], value: float) -> str:
    """What an exporter serves for a series Prometheus stores as ``stored``: its own labels, before
    the target's are added and its clashing ones renamed to ``exported_*``."""
    own = {k.removeprefix("exported_"): v for k, v in stored.items() if k not in (*TARGET_LABELS, NODE)}
    body = ",".join(f'{k}="{v}"' for k, v in own.items())
    return f"# TYPE {metric} gauge\n{metric}{{{body}}} {value}\n"


def exporter_text() -> str:
    return exposition("DCGM_FI_DEV_GPU_TEMP", labels_of(SCRAPE.series("X", PIECE)[0]), 64)


@contextmanager
def serving(text: str) -> Iterator[str]:
    """``text`` served as /metrics on a loopback port; its address."""

    class Handler(loopback.Quiet):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.end_headers()
            self.wfile.write(text.encode())

    with loopback.serving(Handler) as address:
        yield address


def scrape_job(address: str, stored: dict[str, str]) -> dict:
    """One scrape job as prometheus-operator writes a ServiceMonitor endpoint's: honor_labels false, the
    target labels of ``stored`` set on the target, instance as the pod's address, and the rendered
    relabeling of the pod's node name, which the operator's endpoints discovery supplies as
    __meta_kubernetes_pod_node_name (here a static label of the target)."""
    labels = {k: v for k, v in stored.items() if k in TARGET_LABELS and k not in ("job", "instance")}
    labels["__meta_kubernetes_pod_node_name"] = stored[NODE]
    node = {
        "source_labels": NODE_RELABELING["sourceLabels"],
        "target_label": NODE_RELABELING["targetLabel"],
        "action": NODE_RELABELING["action"],
    }
    return {
        "job_name": stored["job"],
        "honor_labels": False,
        "static_configs": [{"targets": [address], "labels": labels}],
        "relabel_configs": [node, {"target_label": "instance", "replacement": stored["instance"]}],
    }


@contextmanager
def prometheus(jobs: list[dict], folder: Path) -> Iterator[int]:
    """A Prometheus scraping ``jobs`` every second; its port."""
    binary = require(shutil.which("prometheus"), "prometheus")
    config = {"global": {"scrape_interval": "1s"}, "scrape_configs": jobs}
    (folder / "prometheus.json").write_text(json.dumps(config), encoding="utf-8")
    port = loopback.free_port()
    server = subprocess.Popen(
        [binary, f"--config.file={folder / 'prometheus.json'}", f"--storage.tsdb.path={folder / 'data'}",
         f"--web.listen-address=127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        yield port
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_prometheus_renames_the_workload_labels_as_the_fixtures_say(tmp_path: Path):
    expected = labels_of(SCRAPE.series("DCGM_FI_DEV_GPU_TEMP", PIECE)[0])
    with serving(exporter_text()) as address, prometheus([scrape_job(address, expected)],
                                                         tmp_path) as port:
        [stored] = _query(port, "DCGM_FI_DEV_GPU_TEMP")
    assert stored == {"__name__": "DCGM_FI_DEV_GPU_TEMP", **expected}
    assert (stored["exported_pod"], stored["pod"]) == (TRAINER.pod, "dcgm-exporter-n1")
    # The node the alerts join on is Kubernetes' name (FQDN), not the exporter's short host name.
    assert (stored[NODE], stored["Hostname"]) == (node_name("n1"), "n1")


def test_a_real_prometheus_names_the_hami_pod_on_a_hot_gpu(examples, tmp_path: Path):
    """Under HAMi the exporter's series carry no pod; the rendered rule takes it from HAMi's monitor,
    scraped through gpustack's ServiceMonitor (honorLabels false), joined on the GPU's UUID."""
    gpu = labels_of(Scrape("dcgm-exporter", "Hostname", attributes=False).series("X", PIECE)[0])
    share = labels_of(hami_series(hami_monitoring.CONTAINER_MEMORY, "n1", TRAINER))
    rule = alerts_of(examples["hami-vllm"])["GPUHighTemperature"]
    with (
        serving(exposition("DCGM_FI_DEV_GPU_TEMP", gpu, 95)) as dcgm,
        serving(exposition(hami_monitoring.CONTAINER_MEMORY, share, 2**30)) as hami,
        prometheus([scrape_job(dcgm, gpu), scrape_job(hami, share)],
                   tmp_path) as port,
    ):
        _query(port, "count(up == 1) == 2")  # both targets scraped: the join has both sides
        [alert] = _query(port, rule["expr"])
    assert (alert["exported_namespace"], alert["exported_pod"]) == (TRAINER.namespace, TRAINER.pod)
    assert (alert[NODE], alert["UUID"]) == (node_name("n1"), gpu["UUID"])


def _query(port: int, expr: str) -> list[dict[str, str]]:
    """The label sets ``expr`` returns once it returns any (the targets scraped), within a minute."""
    url = f"http://127.0.0.1:{port}/api/v1/query?query={urllib.parse.quote(expr)}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=5) as reply:
                result = json.load(reply)["data"]["result"]
            if result:
                return [row["metric"] for row in result]
        except OSError:
            pass
        time.sleep(0.5)
    raise AssertionError(f"Prometheus returned nothing for {expr} within a minute")

