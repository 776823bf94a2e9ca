"""Apply a rendered stack (a committed ``output/<example>`` folder) to a harness cluster the way
its README's apply order does, server-side: the charts' CRDs first, then namespaces, the
Secrets the spec's workloads read, each Helm release's ``helm template`` output (the real
upstream chart with the rendered values), the rendered manifests, the delivery objects (K3s
HelmCharts, Argo CD Applications) and, last, the admission webhook configurations.

The webhooks go last because nothing serves them here (the charts' pods are simulated): a pod
created after a ``failurePolicy: Fail`` webhook is registered would be refused. They are still
applied, so the API server checks them like every other object.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpustack.render import pod_security
from tests.cluster.build import argocd_crd
from tests.cluster.control_plane import REPO
from tests.flux import build as flux_build

ESTABLISHED_SECONDS = 120  # generous: CI machines may be busy

SHARED = Path(os.environ.get("GPUSTACK_SHARED") or REPO.parent / "shared")
CHARTS = SHARED / "reference" / "charts"
UPSTREAM_CRDS = SHARED / "reference" / "crds"
FIELD_MANAGER = "gpustack-cluster-test"
WEBHOOKS = ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")
# The Prometheus Operator API, as a cluster with kube-prometheus-stack's CRDs reports it to helm.
API_VERSIONS = ("monitoring.coreos.com/v1",)
_RELEASE = re.compile(r"Helm release `(?P<name>[^`]+)`: `(?P<command>[^`]+)`")


class Unavailable(Exception):
    """Something the tier needs is missing (helm, the packaged charts)."""


@dataclass(frozen=True)
class Release:
    name: str
    chart: str
    version: str
    namespace: str
    values: Path
    packaged: Path | None = None  # a chart packaged elsewhere than CHARTS (Cilium's: tests/cluster/cilium.py)

    def chart_file(self) -> Path:
        if self.packaged is not None:
            return self.packaged
        path = CHARTS / f"{self.chart}-{self.version.removeprefix('v')}.tgz"
        if not path.is_file():
            path = CHARTS / f"{self.chart}-{self.version}.tgz"
        if not path.is_file():
            raise Unavailable(f"no packaged chart {path.name} in {CHARTS}")
        return path


def releases(folder: Path) -> list[Release]:
    """The Helm releases of the README's apply order, in that order."""
    found = []
    for match in _RELEASE.finditer((folder / "README.md").read_text(encoding="utf-8")):
        words = shlex.split(match["command"].replace("&&", ";"))
        install = words.index("--install")
        option = {words[i]: words[i + 1] for i in range(len(words) - 1) if words[i].startswith("-")}
        version = option.get("--version") or option["--branch"]  # a chart from a Git tag
        found.append(Release(match["name"], Path(words[install + 2]).name, version, option["-n"],
                             folder / option["-f"]))
    return found


def find_helm() -> str:
    helm = os.environ.get("HELM") or shutil.which("helm")
    if not helm:
        raise Unavailable("no helm binary (set $HELM or put helm on PATH; .ci/run installs one)")
    return helm


def helm_template(release: Release, minor: str) -> list[dict[str, Any]]:
    done = subprocess.run([
        find_helm(), "template", release.name, str(release.chart_file()), "-n", release.namespace,
        "-f", str(release.values), "--kube-version", f"{minor}.0", "--include-crds", "--skip-tests",
        *(f"--api-versions={api}" for api in API_VERSIONS),
    ], capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"helm template {release.name} failed: {done.stderr}"
    return [{**doc, "metadata": {"namespace": release.namespace, **doc["metadata"]}}
            if doc["kind"] not in CLUSTER_SCOPED and "namespace" not in doc["metadata"] else doc
            for doc in documents(done.stdout)]


# Kinds the charts and manifests create at cluster scope (a namespace is added to every other).
CLUSTER_SCOPED = frozenset({
    "Namespace", "CustomResourceDefinition", "ClusterRole", "ClusterRoleBinding", "PriorityClass",
    "StorageClass", "RuntimeClass", "DeviceClass", "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration", "APIService", "IngressClass", "NodeFeatureRule",
    "ClusterPolicy", "NVIDIADriver", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding",
    "PersistentVolume", "CSIDriver",
})


class _Loader(yaml.CSafeLoader):  # type: ignore[misc]
    """The safe loader plus YAML 1.1's ``=`` (value key) tag, which charts' CRD text contains."""


_Loader.add_constructor("tag:yaml.org,2002:value", lambda loader, node: loader.construct_scalar(node))


def documents(text: str) -> list[dict[str, Any]]:
    return [doc for doc in yaml.load_all(text, Loader=_Loader) if doc]


def kustomize(kubectl: str, folder: Path) -> list[dict[str, Any]]:
    done = subprocess.run([kubectl, "kustomize", str(folder)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"kubectl kustomize {folder} failed: {done.stderr}"
    return documents(done.stdout)


def upstream_crds() -> list[dict[str, Any]]:
    """Argo CD's Application and K3s' HelmChart CRDs, Argo CD's AppProject from its module
    (build.argocd_crd) and Flux's from its controllers' modules (tests/flux/build.py), for the
    delivery objects: the API server holds each to its schema."""
    docs = [doc for path in sorted(UPSTREAM_CRDS.glob("*.yaml")) for doc in documents(path.read_text())]
    docs += documents(argocd_crd())
    return [doc for doc in docs if doc["kind"] == "CustomResourceDefinition"] + flux_build.crds()


def delivery_objects(folder: Path) -> list[dict[str, Any]]:
    """K3s HelmCharts, Argo CD Applications and Flux's objects (the Flux layers' kustomization.yaml
    lists are no API objects)."""
    paths = sorted((folder / "k3s").glob("*.yaml")) + [folder / "argocd" / "root.yaml"]
    paths += sorted((folder / "argocd" / "apps").glob("*.yaml"))
    paths += sorted(p for p in (folder / "flux").rglob("*.yaml") if p.name != "kustomization.yaml")
    return [doc for path in paths if path.is_file() for doc in documents(path.read_text())]


def workload_secrets(manifests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The Secrets the README says to create before applying: every Secret the manifests' pods read
    (the workloads' S3 and Hugging Face credentials, MinIO's root and its workload users')."""
    wanted: set[tuple[str, str]] = set()
    for obj in manifests:
        pod = pod_security.pod_spec(obj)
        for container in [*(pod or {}).get("initContainers", []), *(pod or {}).get("containers", [])]:
            for variable in container.get("env", []):
                ref = variable.get("valueFrom", {}).get("secretKeyRef")
                if ref:
                    wanted.add((obj["metadata"]["namespace"], ref["name"]))
    return [{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": namespace},
             "stringData": {"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test-secret", "HF_TOKEN": "hf_test",
                            "VLLM_API_KEY": "test-key", "admin-user": "admin", "admin-password": "test"}}
            for namespace, name in sorted(wanted)]


class Applier:
    """Server-side apply with the built kubectl; a refusal fails the test with the server's words."""

    def __init__(self, kubectl: str, kubeconfig: Path) -> None:
        self.kubectl = kubectl
        self.kubeconfig = kubeconfig
        self.applied: list[str] = []  # kubectl's line per object the server accepted
        self.sent = 0

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([self.kubectl, f"--kubeconfig={self.kubeconfig}", *args],
                              capture_output=True, text=True, check=False)

    def apply(self, objects: Iterable[dict[str, Any]], what: str) -> None:
        objects = list(objects)
        if not objects:
            return
        self.sent += len(objects)
        with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as out:
            yaml.safe_dump_all(objects, out, sort_keys=False)
        try:
            done = self.run("apply", "--server-side", "--force-conflicts", f"--field-manager={FIELD_MANAGER}",
                            "-f", out.name)
        finally:
            os.unlink(out.name)
        if done.returncode:
            pytest.fail(f"the API server refused objects of {what}:\n{done.stderr.strip()}", pytrace=False)
        self.applied += done.stdout.splitlines()

    def wait_established(self) -> None:
        """Every CRD Established. kubectl's wait gives up at once, instead of waiting, on a CRD whose
        status has no conditions yet (``.status.conditions accessor error: <nil>``), which a busy
        API server shows for a moment after the apply: that answer is tried again."""
        deadline = time.monotonic() + ESTABLISHED_SECONDS
        while True:
            left = max(1, int(deadline - time.monotonic()))
            done = self.run("wait", "--for=condition=Established", "customresourcedefinitions", "--all", f"--timeout={left}s")
            if done.returncode == 0:
                return
            if "accessor error" not in done.stderr or time.monotonic() > deadline:
                raise AssertionError(done.stderr)
            time.sleep(1)


def namespaces(objects: Iterable[dict[str, Any]], extra: Iterable[str] = ()) -> list[dict[str, Any]]:
    """Namespace objects for every namespace used (helm's --create-namespace), defined ones first."""
    objects = list(objects)
    defined = {o["metadata"]["name"]: o for o in objects if o["kind"] == "Namespace"}
    used = {o["metadata"].get("namespace") for o in objects} | set(extra)
    made = {name: {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
            for name in sorted(n for n in used if n and n not in defined)}
    return list(defined.values()) + list(made.values())
