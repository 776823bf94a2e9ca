"""A real Kubernetes control plane on loopback: etcd, kube-apiserver, kube-scheduler and
kube-controller-manager from the binaries tests/cluster/build.py builds, plus the fake nodes.

``up`` writes everything under a state folder: the PKI (a CA, the API server's serving
certificate, the service-account signing key, made with the openssl CLI), a static token
file, the kubeconfigs, etcd's data, one log per process, and ``cluster.json`` with the
process ids. Every process is started in a session (process group) of its own, so ``down``
stops it with its children, whether ``up`` ran in this process or another.

The controller manager runs without its node-lifecycle controller: nothing here has a
kubelet heartbeat, and the nodes are to stay Ready (with the controller on, they would be
tainted unreachable and their pods evicted after 40 s).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from tests.cluster import api_server, build, nodes
from tests.cluster.api import Api, ApiError
from tests.cluster.spec import load

REPO = Path(__file__).resolve().parents[2]
SERVICE_CIDR = "10.96.0.0/16"
READY_SECONDS = 180  # generous: CI machines may be busy
USERS = ("admin", "kube-scheduler", "kube-controller-manager")
# A user in no group, so only what RBAC grants it by name: `limited.kubeconfig` (tests/cluster/test_live.py).
LIMITED_USER = "limited"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def make_pki(pki: Path) -> None:
    """A CA, the API server's serving certificate for 127.0.0.1, and the service-account key."""
    pki.mkdir(parents=True)
    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
    _openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.crt", "-days", "7",
             "-subj", "/CN=gpustack-test-ca", cwd=pki)
    _openssl("req", *ec, "-keyout", "apiserver.key", "-out", "apiserver.csr", "-subj", "/CN=kube-apiserver", cwd=pki)
    names = "IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default.svc"
    (pki / "san.cnf").write_text(f"subjectAltName={names}\n")
    _openssl("x509", "-req", "-in", "apiserver.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
             "-out", "apiserver.crt", "-days", "7", "-extfile", "san.cnf", cwd=pki)
    _openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "sa.key", cwd=pki)
    _openssl("ec", "-in", "sa.key", "-pubout", "-out", "sa.pub", cwd=pki)


def kubeconfig(server: str, ca: Path, user: str, token: str) -> str:
    return json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "gpustack",
        "clusters": [{"name": "gpustack", "cluster": {"server": server, "certificate-authority": str(ca)}}],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": "gpustack", "context": {"cluster": "gpustack", "user": user}}],
    }, indent=2)


def feature_gates(gates: Mapping[str, bool]) -> list[str]:
    return [f"--feature-gates={','.join(f'{k}={str(v).lower()}' for k, v in sorted(gates.items()))}"] if gates else []


class Launcher:
    """Starts the processes of one cluster, each in its own session, logging to ``state/logs``."""

    def __init__(self, state: Path) -> None:
        self.state = state
        self.pids: dict[str, int] = {}
        (state / "logs").mkdir(parents=True, exist_ok=True)

    def start(self, name: str, argv: list[str], cwd: Path | None = None, env: Mapping[str, str] | None = None) -> None:
        with open(self.state / "logs" / f"{name}.log", "wb") as log:
            process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                       start_new_session=True, cwd=cwd, env=env)
        self.pids[name] = process.pid
        process.returncode = 0  # stopped by `down`, by process group: no "still running" warning

    def check_alive(self) -> None:
        for name, pid in self.pids.items():
            if _exited(pid):
                raise RuntimeError(f"{name} exited at start-up; {self.state / 'logs' / name}.log ends:\n"
                                   + log_tail(self.state, name))


def log_tail(state: Path, name: str, lines: int = 30) -> str:
    path = state / "logs" / f"{name}.log"
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else ""


def _exited(pid: int) -> bool:
    """Whether ``pid`` has exited (reaping it when it is our child)."""
    try:
        if os.waitpid(pid, os.WNOHANG) != (0, 0):
            return True
    except ChildProcessError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def render(spec_path: Path, folder: Path) -> Path:
    """Render the spec into ``folder`` with gpustack's CLI (the files a person would apply)."""
    done = subprocess.run([sys.executable, "-m", "gpustack", "render", str(spec_path), "-o", str(folder)],
                          capture_output=True, text=True, check=False, cwd=REPO)
    if done.returncode:
        raise RuntimeError(f"gpustack render {spec_path} failed:\n{done.stderr}")
    return folder


def up(spec_path: Path, state: Path, folder: Path | None = None) -> Path:
    """Start a cluster for the spec under ``state`` (which must not exist); its kubeconfig.

    The nodes are the spec's inventory with the host facts of the rendered stack in ``folder``
    (rendered into ``state/stack`` when not given): tests/cluster/nodes.py.
    """
    stack = load(spec_path)
    minor = stack.spec.cluster.kubernetesVersion
    bin_dir = build.build(minor)
    state.mkdir(parents=True)
    state = state.resolve()
    launcher = Launcher(state)
    try:
        folder = folder or render(spec_path, state / "stack")
        machines = nodes.stack_nodes(stack, folder)
        (state / "machines.json").write_text(json.dumps([nodes.to_json(n) for n in machines], indent=1))
        api = _start_control_plane(launcher, bin_dir, stack.spec.cluster.featureGates, api_server.flags(folder))
        nodes.register(api, machines, build.RELEASES[minor], stack.spec.cluster.distribution)
        _distribution_objects(api, stack.spec.cluster.distribution)
        _save(state, api, launcher.pids)  # the fake kubelet reads the server and token from it
        launcher.start("kubelet", [sys.executable, "-m", "tests.cluster.kubelet", str(state)], cwd=REPO)
        _save(state, api, launcher.pids)
        _wait_for_default_service_account(api, launcher)
    except BaseException:
        _save_pids(state, launcher.pids)
        down(state, keep=True)
        raise
    return state / "kubeconfig"


def start_process(state: Path, name: str, argv: list[str], env: Mapping[str, str] | None = None) -> None:
    """Start a process that belongs to the running cluster in ``state`` (a controller, a loopback
    server): in a session of its own, logging to ``state/logs/<name>.log``, stopped by ``down``."""
    launcher = Launcher(state)
    launcher.start(name, argv, env=env)
    info = json.loads((state / "cluster.json").read_text())
    _save_pids(state, {**info.get("pids", {}), **launcher.pids})


def _distribution_objects(api: Api, distribution: str) -> None:
    """What the distribution itself puts in the cluster that the stack relies on.

    K3s registers a RuntimeClass for each NVIDIA runtime its containerd finds, ``nvidia`` and
    ``nvidia-experimental`` (https://docs.k3s.io/advanced#nvidia-container-runtime-support);
    on kubeadm the stack brings its own (manifests/runtime.yaml) or the GPU Operator makes it.
    """
    if distribution != "k3s":
        return
    for name in ("nvidia", "nvidia-experimental"):
        api.create("/apis/node.k8s.io/v1/runtimeclasses",
                   {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": name}, "handler": name})


def _start_control_plane(launcher: Launcher, bin_dir: Path, gates: Mapping[str, bool], flags: Sequence[str] = ()) -> Api:
    state = launcher.state
    pki = state / "pki"
    make_pki(pki)
    tokens = {user: secrets.token_hex(16) for user in (*USERS, LIMITED_USER)}
    # Every component is in system:masters: the harness tests the stack, not RBAC of the control plane.
    (state / "tokens.csv").write_text("".join(
        f"{t},{u},{u}{',system:masters' if u != LIMITED_USER else ''}\n" for u, t in tokens.items()))
    etcd_port, peer_port, api_port = free_port(), free_port(), free_port()
    server = f"https://127.0.0.1:{api_port}"
    for user, token in tokens.items():
        name = "kubeconfig" if user == "admin" else f"{user}.kubeconfig"  # limited.kubeconfig: LIMITED_USER
        (state / name).write_text(kubeconfig(server, pki / "ca.crt", user, token))
    launcher.start("etcd", [
        str(bin_dir / "etcd"), "--name=gpustack", f"--data-dir={state / 'etcd'}",
        f"--listen-client-urls=http://127.0.0.1:{etcd_port}", f"--advertise-client-urls=http://127.0.0.1:{etcd_port}",
        f"--listen-peer-urls=http://127.0.0.1:{peer_port}",
        f"--initial-advertise-peer-urls=http://127.0.0.1:{peer_port}",
        f"--initial-cluster=gpustack=http://127.0.0.1:{peer_port}", "--unsafe-no-fsync", "--log-level=warn",
    ])
    launcher.start("kube-apiserver", [
        str(bin_dir / "kube-apiserver"), f"--etcd-servers=http://127.0.0.1:{etcd_port}",
        "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", f"--secure-port={api_port}",
        f"--tls-cert-file={pki / 'apiserver.crt'}", f"--tls-private-key-file={pki / 'apiserver.key'}",
        f"--client-ca-file={pki / 'ca.crt'}", f"--token-auth-file={state / 'tokens.csv'}",
        # As kubeadm and K3s run it: GPU node agents are privileged containers.
        "--allow-privileged=true", "--authorization-mode=RBAC", f"--service-cluster-ip-range={SERVICE_CIDR}",
        "--service-account-issuer=https://kubernetes.default.svc",
        f"--service-account-key-file={pki / 'sa.pub'}", f"--service-account-signing-key-file={pki / 'sa.key'}",
        # The loopback address cannot be the `kubernetes` Service's endpoint.
        "--endpoint-reconciler-type=none", *feature_gates(gates),
        *flags,  # the rendered stack's own (tests/cluster/api_server.py)
    ])
    api = Api(server, tokens["admin"], str(pki / "ca.crt"))
    _wait_for_api_server(api, launcher)
    # A second profile stands in for HAMi's scheduler (kube-scheduler plus HAMi's extender, which
    # does not run here), so that pods naming it (schedulerName: hami-scheduler) are placed.
    scheduler_config = state / "kube-scheduler.yaml"
    scheduler_config.write_text(json.dumps({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "clientConnection": {"kubeconfig": str(state / "kube-scheduler.kubeconfig")},
        "leaderElection": {"leaderElect": False},
        "profiles": [{"schedulerName": "default-scheduler"}, {"schedulerName": "hami-scheduler"}],
    }))
    launcher.start("kube-scheduler", [
        str(bin_dir / "kube-scheduler"), f"--config={scheduler_config}",
        f"--authentication-kubeconfig={state / 'kube-scheduler.kubeconfig'}",
        f"--authorization-kubeconfig={state / 'kube-scheduler.kubeconfig'}",
        "--bind-address=127.0.0.1", f"--secure-port={free_port()}", *feature_gates(gates),
    ])
    launcher.start("kube-controller-manager", [
        str(bin_dir / "kube-controller-manager"), f"--kubeconfig={state / 'kube-controller-manager.kubeconfig'}",
        f"--authentication-kubeconfig={state / 'kube-controller-manager.kubeconfig'}",
        f"--authorization-kubeconfig={state / 'kube-controller-manager.kubeconfig'}",
        "--leader-elect=false", "--bind-address=127.0.0.1", f"--secure-port={free_port()}",
        "--controllers=*,-node-lifecycle-controller",
        f"--service-account-private-key-file={pki / 'sa.key'}", f"--root-ca-file={pki / 'ca.crt'}",
        f"--service-cluster-ip-range={SERVICE_CIDR}", *feature_gates(gates),
    ])
    return api


def _wait_for_api_server(api: Api, launcher: Launcher) -> None:
    deadline = time.monotonic() + READY_SECONDS
    while True:
        launcher.check_alive()
        try:
            if api.request("GET", "/readyz", timeout=5) == "ok":
                return
        except (ApiError, OSError, ValueError):
            pass
        if time.monotonic() > deadline:
            raise RuntimeError("kube-apiserver not ready in time:\n" + log_tail(launcher.state, "kube-apiserver"))
        time.sleep(0.2)


def _wait_for_default_service_account(api: Api, launcher: Launcher) -> None:
    """Pods are admitted only once the controller manager has made their namespace's account."""
    deadline = time.monotonic() + READY_SECONDS
    while True:
        launcher.check_alive()
        try:
            api.get("/api/v1/namespaces/default/serviceaccounts/default")
            return
        except ApiError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError("no default ServiceAccount in time:\n" + log_tail(launcher.state, "kube-controller-manager"))
        time.sleep(0.2)


def _save(state: Path, api: Api, pids: Mapping[str, int]) -> None:
    (state / "cluster.json").write_text(json.dumps(
        {"server": api.server, "token": api.token, "ca": api.ca_file, "pids": dict(pids)}, indent=2))


def _save_pids(state: Path, pids: Mapping[str, int]) -> None:
    path = state / "cluster.json"
    info = json.loads(path.read_text()) if path.exists() else {}
    info["pids"] = dict(pids)
    path.write_text(json.dumps(info, indent=2))


def down(state: Path, *, keep: bool = False) -> None:
    """Kill every process group the cluster started and remove ``state``.

    SIGKILL, not a graceful stop: the cluster is thrown away with its etcd data, and the API
    server would otherwise wait out its open watches first.
    """
    path = state / "cluster.json"
    pids = json.loads(path.read_text()).get("pids", {}) if path.exists() else {}
    for pid in reversed(list(pids.values())):
        _signal_group(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while any(not _exited(pid) for pid in pids.values()) and time.monotonic() < deadline:
        time.sleep(0.05)
    if not keep:
        shutil.rmtree(state, ignore_errors=True)


def _signal_group(pid: int, signum: int) -> None:
    try:
        os.killpg(pid, signum)
    except (ProcessLookupError, PermissionError):
        pass
