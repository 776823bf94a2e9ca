"""``gpustack lint --kubeconfig``, ``--cluster`` and ``--print-rbac`` without a real cluster: a
loopback server speaking the Kubernetes list protocol (``limit`` and ``continue``, ``Status``
errors) stands in where a test needs an answer the real control plane will not give on
demand (a list cut short, a server that never answers). tests/cluster/test_live.py runs the
same options against the real control plane.

The Node below has the shape the API server returns (https://kubernetes.io/docs/reference/
kubernetes-api/cluster-resources/node-v1/), with GPU Feature Discovery's labels
(https://github.com/NVIDIA/k8s-device-plugin/blob/main/docs/gpu-feature-discovery/README.md).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import jsonschema
import pytest
import yaml

from gpustack.lint.live.client import read_cluster
from gpustack.lint.live.pools import live_facts
from gpustack.lint.live.rbac import role_rules
from gpustack.lint.live.reads import READS
from gpustack.lint.live.workloads import workload_input

from lint_support import gpustack

REPO = Path(__file__).resolve().parents[2]
L4_NODE = {
    "metadata": {
        "name": "gpu-0",
        "labels": {
            "kubernetes.io/hostname": "gpu-0",
            "nvidia.com/gpu.product": "NVIDIA-L4",
            "nvidia.com/gpu.count": "2",
            "feature.node.kubernetes.io/pci-10de.present": "true",
        },
    },
    "spec": {"taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]},
    "status": {"allocatable": {"cpu": "16", "nvidia.com/gpu": "2"}},
}
VERSION = {"major": "1", "minor": "34", "gitVersion": "v1.34.2+k3s1"}
OWNED_POD = {
    "metadata": {"name": "web-abc", "namespace": "ml", "ownerReferences": [{"kind": "ReplicaSet", "controller": True}]},
    "spec": {"containers": [{"name": "c", "image": "x"}]},
}
WRONG_PRODUCT = {
    "metadata": {"name": "train", "namespace": "ml", "uid": "1", "resourceVersion": "7", "managedFields": [{}]},
    "spec": {
        "nodeName": "gpu-0",
        "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"},
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}],
        "runtimeClassName": "nvidia",
        "containers": [{"name": "c", "image": "x", "resources": {"limits": {"nvidia.com/gpu": 1}}}],
    },
    "status": {"phase": "Pending"},
}

Answer = tuple[int, dict[str, Any]]


def lists(**items: list[dict[str, Any]]) -> Callable[[str, dict[str, list[str]]], Answer]:
    """A server's answers: ``/version``, the named resources' items, every other list empty."""

    def answer(path: str, query: dict[str, list[str]]) -> Answer:
        if path == "/version":
            return 200, VERSION
        return 200, {"kind": "List", "metadata": {}, "items": items.get(path.rsplit("/", 1)[-1], [])}

    return answer


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Any]:
    """Start a loopback server answering with the given function; its kubeconfig's path. The
    Authorization headers it was sent are in ``server.signed``."""
    started: list[ThreadingHTTPServer] = []
    signed: list[str] = []

    def start(answer: Callable[[str, dict[str, list[str]]], Answer]) -> Path:
        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                url = urlparse(self.path)
                signed.append(self.headers.get("Authorization", ""))
                code, body = answer(url.path, parse_qs(url.query))
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        started.append(httpd)
        return kubeconfig(tmp_path, f"http://127.0.0.1:{httpd.server_address[1]}")

    start.signed = signed  # type: ignore[attr-defined]
    yield start
    for httpd in started:
        httpd.shutdown()
        httpd.server_close()


def kubeconfig(folder: Path, server: str) -> Path:
    path = folder / "kubeconfig"
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "test",
        "clusters": [{"name": "test", "cluster": {"server": server}}],
        "users": [{"name": "test", "user": {"token": "secret"}}],
        "contexts": [{"name": "test", "context": {"cluster": "test", "user": "test"}}],
    }))
    return path


def status(code: int, message: str) -> Answer:
    return code, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": message, "code": code}


def test_print_rbac_grants_exactly_the_reads() -> None:
    granted = {(group, resource) for rule in role_rules() for group in rule.get("apiGroups", ()) for resource in rule["resources"]}
    assert granted == {(read.group, read.resource) for read in READS}
    assert {verb for rule in role_rules() for verb in rule["verbs"]} == {"list", "get"}
    assert role_rules()[-1] == {"nonResourceURLs": ["/version"], "verbs": ["get"]}


def test_print_rbac_prints_a_role_and_its_binding(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = gpustack(capsys, "lint", "--print-rbac")
    role, binding = yaml.safe_load_all(out)
    assert code == 0 and role["kind"] == "ClusterRole" and role["rules"] == role_rules()
    assert binding["roleRef"]["name"] == role["metadata"]["name"]


def test_the_context_is_the_nodes_pools(server: Any) -> None:
    snapshot = read_cluster(str(server(lists(nodes=[L4_NODE]))), None)
    facts = live_facts(snapshot)
    (pool,) = facts.pools
    assert (pool.name, pool.nodes, pool.gpus, pool.gpu.product, pool.gpu.memory_mib) == ("gpu-0", 1, 2, "NVIDIA-L4", 23034)
    assert [str(t) for t in pool.taints] == ["nvidia.com/gpu:NoSchedule"] and pool.resources == {"nvidia.com/gpu"}
    assert (facts.minor, facts.distribution, facts.gfd, facts.nfd) == (34, "k3s", True, True)


def test_cluster_lint_points_at_kind_namespace_name(server: Any, capsys: pytest.CaptureFixture[str]) -> None:
    config = server(lists(nodes=[L4_NODE], pods=[WRONG_PRODUCT, OWNED_POD]))
    code, out, _ = gpustack(capsys, "lint", "--cluster", "--kubeconfig", str(config))
    assert code == 1
    assert "Pod/ml/train: error GS026 unschedulable-gpu-selector" in out and "web-abc" not in out
    assert out.splitlines()[-1].startswith("1 running workload in the cluster: ")
    code, out, _ = gpustack(capsys, "lint", "--cluster", "--kubeconfig", str(config), "-f", "sarif")
    sarif = json.loads(out)
    (result,) = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "GS026"]
    (location,) = result["locations"]
    assert "physicalLocation" not in location
    assert location["logicalLocations"][0]["fullyQualifiedName"] == "Pod/ml/train"
    _, out, _ = gpustack(capsys, "lint", "--cluster", "--kubeconfig", str(config), "-f", "json")
    (finding,) = [f for f in json.loads(out)["findings"] if f["rule"] == "GS026"]
    assert (finding["file"], finding["line"]) == ("Pod/ml/train", None)
    _, out, _ = gpustack(capsys, "lint", "--cluster", "--kubeconfig", str(config), "-f", "github")
    assert any(line.startswith("::error title=GS026 unschedulable-gpu-selector (Pod/ml/train)::") for line in out.splitlines())


def test_cluster_sarif_is_valid(server: Any, shared: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = server(lists(nodes=[L4_NODE], pods=[WRONG_PRODUCT]))
    _, out, _ = gpustack(capsys, "lint", "--cluster", "--kubeconfig", str(config), "-f", "sarif", "--show-suppressed")
    schema = json.loads((shared / "reference" / "schemas" / "sarif-schema-2.1.0.json").read_text())
    jsonschema.validate(json.loads(out), schema)


def test_server_fields_are_stripped(server: Any) -> None:
    snapshot = read_cluster(str(server(lists(pods=[WRONG_PRODUCT, OWNED_POD]))), None, workloads=True)
    name, data = workload_input(snapshot)
    (pod,) = [json.loads(document) for document in data.decode().split("---\n") if document]
    assert name == "<cluster>" and pod["metadata"] == {"name": "train", "namespace": "ml"}
    assert "status" not in pod and "nodeName" not in pod["spec"] and pod["kind"] == "Pod"


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (lambda path, query: status(401, "Unauthorized"), "unauthorised (Unauthorized)"),
        (lambda path, query: status(403, 'nodes is forbidden: User "x" cannot list resource "nodes"')
         if path == "/api/v1/nodes" else lists()(path, query), "forbidden to list nodes"),
        # A list cut short: the first page and its continue token, then 410 Gone (the token expired), as
        # https://kubernetes.io/docs/reference/using-api/api-concepts/#retrieving-large-results-sets-in-chunks says.
        (lambda path, query: status(410, "The provided continue parameter is too old")
         if "continue" in query else (200, {"metadata": {"continue": "next"}, "items": [L4_NODE]})
         if path == "/api/v1/nodes" else lists()(path, query), "cut short after its first page (410"),
        (lambda path, query: (200, {"kind": "Node"}) if path == "/api/v1/nodes" else lists()(path, query),
         "answered without items"),
    ],
    ids=["unauthorised", "forbidden", "partial-list", "not-a-list"],
)
def test_a_refusing_server_exits_2_with_a_message(server: Any, capsys: pytest.CaptureFixture[str], answer: Any, said: str) -> None:
    config = server(answer)
    code, out, err = gpustack(capsys, "lint", "--kubeconfig", str(config), str(REPO / "examples" / "manifests"))
    assert (code, out) == (2, "") and said in err and "Traceback" not in err


def test_an_optional_read_refused_is_a_note(server: Any, capsys: pytest.CaptureFixture[str]) -> None:
    def answer(path: str, query: dict[str, list[str]]) -> Answer:
        if path == "/api/v1/secrets":
            return status(403, "secrets is forbidden")
        if path.startswith("/apis/resource.k8s.io/"):
            return status(404, "the server could not find the requested resource")
        return lists(nodes=[L4_NODE])(path, query)

    code, out, _ = gpustack(capsys, "lint", "--kubeconfig", str(server(answer)), str(REPO / "examples" / "manifests"))
    assert code in (0, 1)
    assert "note: not read: " in out and "forbidden to list secrets" in out
    assert "does not serve resource.k8s.io/v1 deviceclasses" in out


def test_an_unreachable_cluster_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as probe:  # a port nothing listens on once the probe closes
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = kubeconfig(tmp_path, f"https://127.0.0.1:{port}")
    code, out, err = gpustack(capsys, "lint", "--kubeconfig", str(config), "--cluster")
    assert (code, out) == (2, "") and "cannot reach the server" in err


def test_a_silent_cluster_times_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as silent:  # accepts connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        config = kubeconfig(tmp_path, f"https://127.0.0.1:{silent.getsockname()[1]}")
        code, out, err = gpustack(capsys, "lint", "--kubeconfig", str(config), "--cluster", "--request-timeout", "0.5")
    assert (code, out) == (2, "") and "got no answer in 0.5 s" in err


def test_a_missing_context_a_missing_file_and_a_broken_one_exit_2(
    tmp_path: Path, server: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = gpustack(capsys, "lint", "--kubeconfig", str(server(lists())), "--context", "nope", "--cluster")
    assert code == 2 and "nope" in err and "--context" in err
    code, _, err = gpustack(capsys, "lint", "--kubeconfig", str(tmp_path / "absent"), "--cluster")
    assert code == 2 and "absent" in err
    broken = tmp_path / "broken"
    for text in ("apiVersion: v1\nclusters: [\n", "- a list\n"):
        broken.write_text(text)
        code, _, err = gpustack(capsys, "lint", "--kubeconfig", str(broken), "--cluster")
        assert code == 2 and "not a usable kubeconfig" in err and "internal error" not in err


def test_cluster_takes_no_paths(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = gpustack(capsys, "lint", "--cluster", "some.yaml")
    assert code == 2 and "give it no PATH" in err


def test_without_the_extra_the_message_names_it(tmp_path: Path) -> None:
    config = kubeconfig(tmp_path, "https://127.0.0.1:1")
    code = ("import sys; sys.modules['lightkube'] = None; from gpustack.cli import main; "
            f"main(['lint', '--kubeconfig', {str(config)!r}, '--cluster'])")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "pip install 'kube-gpustack[cluster]'" in result.stderr


def test_file_lint_never_imports_the_client(tmp_path: Path) -> None:
    probe = ("import sys; from gpustack.cli import main\ntry:\n    main(['lint', 'examples/manifests'])\n"
             "except SystemExit:\n    pass\nprint([m for m in sys.modules if m.split('.')[0] in ('lightkube', 'httpx2')])")
    result = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=False)
    assert result.stdout.splitlines()[-1] == "[]"


H100_NODE = {
    "metadata": {"name": "h100-0", "labels": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu.count": "8"}},
    "status": {"allocatable": {"nvidia.com/gpu": "8"}},
}
H100_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: big}
spec:
  runtimeClassName: nvidia
  nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
  containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]
"""


def test_spec_and_cluster_together(server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The spec's pools (planned: its L4 pool has no node yet) and the cluster's nodes no pool
    describes (an H100 node) both count; notes say how they differ."""
    pod = tmp_path / "pod.yaml"
    pod.write_text(H100_POD)
    spec = str(REPO / "examples" / "k3s-l4.yaml")
    code, out, _ = gpustack(capsys, "lint", str(pod), "--spec", spec)
    assert "GS026" in out  # the spec alone has no H100
    config = server(lists(nodes=[H100_NODE]))
    code, out, _ = gpustack(capsys, "lint", str(pod), "--spec", spec, "--kubeconfig", str(config), "--no-cache")
    assert "GS026" not in out, out
    assert "note: pool g6 of the spec has no nodes in the cluster at " in out
    assert "has h100-0 (8 × NVIDIA-H100-80GB-HBM3 per node) on 1 node(s) that no pool of " in out


def test_a_planned_pool_takes_the_labels_its_nodes_carry(server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The spec's g6 pool (one L4, untainted) is in the cluster with a label of the team's: a
    pod selecting it lands there, so no finding says no pool carries it."""
    node = {"metadata": {"name": "g6-0", "labels": {"nvidia.com/gpu.product": "NVIDIA-L4", "team": "ml"}},
            "status": {"allocatable": {"nvidia.com/gpu": "1"}}}
    pod = tmp_path / "pod.yaml"
    pod.write_text(H100_POD.replace("nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3", "team: ml"))
    spec = str(REPO / "examples" / "k3s-l4.yaml")
    config = server(lists(nodes=[node]))
    code, out, _ = gpustack(capsys, "lint", str(pod), "--spec", spec, "--kubeconfig", str(config))
    assert "GS026" not in out and "no pool of" not in out and "has no nodes" not in out, out
    node["metadata"]["labels"]["team"] = "vision"
    code, out, _ = gpustack(capsys, "lint", str(pod), "--spec", spec, "--kubeconfig", str(config))
    assert "GS026" in out and "team=ml" in out


# A LeaderWorkerSet as https://lws.sigs.k8s.io/docs/reference/leaderworkerset.v1/ defines it, and
# its CRD as the API server lists it (spec.versions with served and storage).
LWS_CRD = {
    "metadata": {"name": "leaderworkersets.leaderworkerset.x-k8s.io"},
    "spec": {"group": "leaderworkerset.x-k8s.io", "versions": [
        {"name": "v1beta1", "served": False, "storage": False}, {"name": "v1", "served": True, "storage": True}]},
}
LWS = {
    "apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
    "metadata": {"name": "vllm", "namespace": "ml"},
    "spec": {"leaderWorkerTemplate": {"size": 2, "workerTemplate": {"spec": WRONG_PRODUCT["spec"]}}},
}


def test_custom_resources_with_pod_templates_are_linted(server: Any, capsys: pytest.CaptureFixture[str]) -> None:
    asked: list[str] = []

    def answer(path: str, query: dict[str, list[str]]) -> Answer:
        asked.append(path)
        return lists(nodes=[L4_NODE], customresourcedefinitions=[LWS_CRD], leaderworkersets=[LWS])(path, query)

    code, out, _ = gpustack(capsys, "lint", "--cluster", "--kubeconfig", str(server(answer)))
    assert "/apis/leaderworkerset.x-k8s.io/v1/leaderworkersets" in asked
    assert not any(path.startswith("/apis/ray.io/") for path in asked)  # not installed: not asked for
    assert code == 1 and "LeaderWorkerSet/ml/vllm: error GS026" in out


def exec_user(config: Path, plugin: Path, version: str) -> None:
    """Make the kubeconfig's user run ``plugin`` for its credential, an ExecCredential of ``version``
    (https://kubernetes.io/docs/reference/access-authn-authz/authentication/#client-go-credential-plugins)."""
    plugin.write_text(f'import json\nprint(json.dumps({{"apiVersion": "client.authentication.k8s.io/{version}", '
                      '"kind": "ExecCredential", "status": {"token": "from-the-plugin"}}))\n')
    document = yaml.safe_load(config.read_text())
    document["users"][0]["user"] = {"exec": {"apiVersion": f"client.authentication.k8s.io/{version}",
                                             "command": sys.executable, "args": [str(plugin)], "interactiveMode": "Never"}}
    config.write_text(yaml.safe_dump(document))


def test_an_exec_credential_plugin_signs_the_requests(server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = server(lists(nodes=[L4_NODE]))
    exec_user(config, tmp_path / "plugin.py", "v1beta1")
    snapshot = read_cluster(str(config), None)
    assert len(snapshot.of("Node")) == 1
    assert set(server.signed) == {"Bearer from-the-plugin"}
    # The v1 protocol lightkube does not run yet: a message that says what to change, exit 2.
    exec_user(config, tmp_path / "plugin.py", "v1")
    code, out, err = gpustack(capsys, "lint", "--kubeconfig", str(config), "--cluster")
    assert (code, out) == (2, "") and "client.authentication.k8s.io/v1beta1" in err and "Traceback" not in err
